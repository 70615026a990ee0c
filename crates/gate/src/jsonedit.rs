//! Surgical edits of a person's JSON config: add one array element, keep
//! every other byte.
//!
//! Re-serialising a settings file would reorder keys, reflow whitespace and
//! drop the person's formatting. Instead a small strict parser records the
//! byte span of every value; an edit splices new text in at one place,
//! indented like its neighbours. The result is then parsed again and compared
//! with the edit applied to the parsed original: if the two differ the edit is
//! refused, so a bug here can cost a wired hook but never a person's settings.

use serde_json::{Map, Value};

/// Where a file stopped being JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SyntaxError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// Why an edit could not be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum EditError {
    Syntax(SyntaxError),
    /// The document has the wrong shape on the way to the array.
    Shape(String),
}

#[derive(Debug, Clone)]
enum Kind {
    Object(Vec<(String, usize, Node)>),
    Array(Vec<Node>),
    Scalar,
}

#[derive(Debug, Clone)]
struct Node {
    start: usize,
    end: usize,
    kind: Kind,
}

/// Check that `text` is one strict JSON value.
pub(crate) fn validate(text: &str) -> Result<(), SyntaxError> {
    parse(text).map(|_| ())
}

fn parse(text: &str) -> Result<Node, SyntaxError> {
    let mut parser = Parser {
        bytes: text.as_bytes(),
        pos: 0,
        text,
    };
    parser.skip_ws();
    let node = parser.value(0)?;
    parser.skip_ws();
    if parser.pos != parser.bytes.len() {
        return Err(parser.error("unexpected text after the value"));
    }
    Ok(node)
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn error(&self, message: &str) -> SyntaxError {
        let before = &self.text[..self.pos.min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before
            .rsplit('\n')
            .next()
            .map(|l| l.chars().count())
            .unwrap_or(0)
            + 1;
        SyntaxError {
            line,
            column,
            message: message.to_owned(),
        }
    }

    fn skip_ws(&mut self) {
        while self.pos < self.bytes.len()
            && matches!(self.bytes[self.pos], b' ' | b'\t' | b'\n' | b'\r')
        {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn value(&mut self, depth: usize) -> Result<Node, SyntaxError> {
        if depth > 256 {
            return Err(self.error("nesting deeper than 256 levels"));
        }
        let start = self.pos;
        match self.peek() {
            Some(b'{') => self.object(start, depth),
            Some(b'[') => self.array(start, depth),
            Some(b'"') => {
                self.string()?;
                Ok(Node {
                    start,
                    end: self.pos,
                    kind: Kind::Scalar,
                })
            }
            Some(b't') => self.literal(start, "true"),
            Some(b'f') => self.literal(start, "false"),
            Some(b'n') => self.literal(start, "null"),
            Some(b'-' | b'0'..=b'9') => self.number(start),
            Some(_) => Err(self.error("expected a JSON value")),
            None => Err(self.error("unexpected end of file")),
        }
    }

    fn literal(&mut self, start: usize, word: &str) -> Result<Node, SyntaxError> {
        if self.bytes[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(Node {
                start,
                end: self.pos,
                kind: Kind::Scalar,
            })
        } else {
            Err(self.error("expected a JSON value"))
        }
    }

    fn number(&mut self, start: usize) -> Result<Node, SyntaxError> {
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.error("expected a digit")),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.error("expected a digit after '.'"));
            }
            self.digits();
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.error("expected a digit in the exponent"));
            }
            self.digits();
        }
        Ok(Node {
            start,
            end: self.pos,
            kind: Kind::Scalar,
        })
    }

    fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.pos += 1;
        }
    }

    /// A string; returns its decoded text (keys need it).
    fn string(&mut self) -> Result<String, SyntaxError> {
        let start = self.pos;
        self.pos += 1;
        loop {
            match self.peek() {
                None => return Err(self.error("unterminated string")),
                Some(b'"') => {
                    self.pos += 1;
                    break;
                }
                Some(b'\\') => {
                    self.pos += 1;
                    match self.peek() {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                            self.pos += 1;
                        }
                        Some(b'u') => {
                            self.pos += 1;
                            for _ in 0..4 {
                                if !self.peek().is_some_and(|b| b.is_ascii_hexdigit()) {
                                    return Err(self.error("bad \\u escape"));
                                }
                                self.pos += 1;
                            }
                        }
                        _ => return Err(self.error("bad escape in string")),
                    }
                }
                Some(b) if b < 0x20 => return Err(self.error("control character in string")),
                Some(_) => self.pos += 1,
            }
        }
        serde_json::from_str::<String>(&self.text[start..self.pos])
            .map_err(|_| self.error("bad string"))
    }

    fn object(&mut self, start: usize, depth: usize) -> Result<Node, SyntaxError> {
        self.pos += 1;
        let mut members = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Node {
                start,
                end: self.pos,
                kind: Kind::Object(members),
            });
        }
        loop {
            self.skip_ws();
            if self.peek() != Some(b'"') {
                return Err(self.error("expected a string key"));
            }
            let key_start = self.pos;
            let key = self.string()?;
            self.skip_ws();
            if self.peek() != Some(b':') {
                return Err(self.error("expected ':' after the key"));
            }
            self.pos += 1;
            self.skip_ws();
            let value = self.value(depth + 1)?;
            members.push((key, key_start, value));
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Node {
                        start,
                        end: self.pos,
                        kind: Kind::Object(members),
                    });
                }
                _ => return Err(self.error("expected ',' or '}'")),
            }
        }
    }

    fn array(&mut self, start: usize, depth: usize) -> Result<Node, SyntaxError> {
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Node {
                start,
                end: self.pos,
                kind: Kind::Array(items),
            });
        }
        loop {
            self.skip_ws();
            items.push(self.value(depth + 1)?);
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Node {
                        start,
                        end: self.pos,
                        kind: Kind::Array(items),
                    });
                }
                _ => return Err(self.error("expected ',' or ']'")),
            }
        }
    }
}

/// Does the array at `path` hold an element `wanted` accepts? `Ok(false)`
/// when the path does not exist yet.
pub(crate) fn contains(
    text: &str,
    path: &[&str],
    wanted: &dyn Fn(&Value) -> bool,
) -> Result<bool, EditError> {
    if text.trim().is_empty() {
        return Ok(false);
    }
    let value: Value = serde_json::from_str(text).map_err(|e| {
        EditError::Syntax(SyntaxError {
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })
    })?;
    validate(text).map_err(EditError::Syntax)?;
    let mut here = &value;
    for (i, key) in path.iter().enumerate() {
        let Some(object) = here.as_object() else {
            return Err(EditError::Shape(format!(
                "{} is not an object",
                dotted(&path[..i])
            )));
        };
        match object.get(*key) {
            Some(next) => here = next,
            None => return Ok(false),
        }
    }
    match here.as_array() {
        Some(items) => Ok(items.iter().any(wanted)),
        None => Err(EditError::Shape(format!(
            "{} is not an array",
            dotted(path)
        ))),
    }
}

/// Ensure the array at `path` holds an element `wanted` accepts, appending
/// `element` if not. `Ok(None)` when nothing had to change; `Ok(Some(text))`
/// is the new document, identical to `text` outside the inserted bytes.
/// Whitespace-only text is treated as an empty document.
pub(crate) fn ensure_element(
    text: &str,
    path: &[&str],
    element: &Value,
    wanted: &dyn Fn(&Value) -> bool,
) -> Result<Option<String>, EditError> {
    if text.trim().is_empty() {
        let mut root = Value::Object(Map::new());
        insert_path(&mut root, path, element.clone());
        let mut out = pretty(&root, "  ");
        out.push('\n');
        return Ok(Some(out));
    }
    if contains(text, path, wanted)? {
        return Ok(None);
    }
    let root = parse(text).map_err(EditError::Syntax)?;
    let unit = indent_unit(text);
    let mut node = &root;
    let mut depth_path: Vec<&str> = Vec::new();
    let mut edited: Option<String> = None;
    for (i, key) in path.iter().enumerate() {
        let Kind::Object(members) = &node.kind else {
            return Err(EditError::Shape(format!(
                "{} is not an object",
                dotted(&depth_path)
            )));
        };
        match members.iter().find(|(k, _, _)| k == key) {
            Some((_, _, child)) => {
                node = child;
                depth_path.push(key);
            }
            None => {
                let mut rest = Value::Array(vec![element.clone()]);
                for k in path[i + 1..].iter().rev() {
                    let mut map = Map::new();
                    map.insert((*k).to_owned(), rest);
                    rest = Value::Object(map);
                }
                edited = Some(insert_member(text, node, members, key, &rest, &unit));
                break;
            }
        }
    }
    let out = match edited {
        Some(out) => out,
        None => match &node.kind {
            Kind::Array(items) => append_item(text, node, items, element, &unit),
            _ => {
                return Err(EditError::Shape(format!(
                    "{} is not an array",
                    dotted(path)
                )));
            }
        },
    };
    // The safety net: the edit must mean exactly "the original plus one element".
    let mut expected: Value = serde_json::from_str(text).map_err(|e| {
        EditError::Syntax(SyntaxError {
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })
    })?;
    insert_path(&mut expected, path, element.clone());
    let actual: Value = serde_json::from_str(&out).map_err(|e| {
        EditError::Shape(format!(
            "internal error: the edit did not parse ({e}); nothing written"
        ))
    })?;
    if actual != expected {
        return Err(EditError::Shape(
            "internal error: the edit changed more than intended; nothing written".into(),
        ));
    }
    Ok(Some(out))
}

fn dotted(path: &[&str]) -> String {
    if path.is_empty() {
        "the top level".to_owned()
    } else {
        path.join(".")
    }
}

/// Apply the edit to a parsed value: create objects along `path`, push into the array.
fn insert_path(root: &mut Value, path: &[&str], element: Value) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut here = root;
    for key in parents {
        let Some(object) = here.as_object_mut() else {
            return;
        };
        here = object
            .entry((*key).to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    if let Some(object) = here.as_object_mut() {
        let array = object
            .entry((*last).to_owned())
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Some(items) = array.as_array_mut() {
            items.push(element);
        }
    }
}

/// The file's indentation unit: the leading whitespace of its first indented line.
fn indent_unit(text: &str) -> String {
    text.lines()
        .skip(1)
        .map(|l| &l[..l.len() - l.trim_start().len()])
        .find(|ws| !ws.is_empty())
        .map(str::to_owned)
        .unwrap_or_else(|| "  ".to_owned())
}

fn line_indent(text: &str, pos: usize) -> &str {
    let line_start = text[..pos].rfind('\n').map(|i| i + 1).unwrap_or(0);
    let line = &text[line_start..];
    &line[..line.len() - line.trim_start().len()]
}

fn pretty(value: &Value, unit: &str) -> String {
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(unit.as_bytes());
    let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
    let _ = serde::Serialize::serialize(value, &mut ser);
    String::from_utf8(out).unwrap_or_default()
}

/// `value` pretty-printed with every line after the first indented by `base`.
fn indented(value: &Value, unit: &str, base: &str) -> String {
    pretty(value, unit).replace('\n', &format!("\n{base}"))
}

fn single_line(text: &str, node: &Node) -> bool {
    !text[node.start..node.end].contains('\n')
}

fn insert_member(
    text: &str,
    object: &Node,
    members: &[(String, usize, Node)],
    key: &str,
    value: &Value,
    unit: &str,
) -> String {
    let key_json = Value::String(key.to_owned()).to_string();
    let (at, insert) = match members.last() {
        Some((_, _, last)) if single_line(text, object) => {
            (last.end, format!(", {key_json}: {value}"))
        }
        Some((_, _, last)) => {
            let indent = line_indent(text, members[0].1).to_owned();
            (
                last.end,
                format!(",\n{indent}{key_json}: {}", indented(value, unit, &indent)),
            )
        }
        None => {
            let outer = line_indent(text, object.start).to_owned();
            let indent = format!("{outer}{unit}");
            let body = format!(
                "\n{indent}{key_json}: {}\n{outer}",
                indented(value, unit, &indent)
            );
            // Replace whatever whitespace sat between the braces.
            let mut out = String::with_capacity(text.len() + body.len());
            out.push_str(&text[..object.start + 1]);
            out.push_str(&body);
            out.push_str(&text[object.end - 1..]);
            return out;
        }
    };
    splice(text, at, &insert)
}

fn append_item(text: &str, array: &Node, items: &[Node], element: &Value, unit: &str) -> String {
    match items.last() {
        Some(last) if single_line(text, array) => splice(text, last.end, &format!(", {element}")),
        Some(last) => {
            let indent = line_indent(text, items[0].start).to_owned();
            splice(
                text,
                last.end,
                &format!(",\n{indent}{}", indented(element, unit, &indent)),
            )
        }
        None => {
            let outer = line_indent(text, array.start).to_owned();
            let indent = format!("{outer}{unit}");
            let body = format!("\n{indent}{}\n{outer}", indented(element, unit, &indent));
            let mut out = String::with_capacity(text.len() + body.len());
            out.push_str(&text[..array.start + 1]);
            out.push_str(&body);
            out.push_str(&text[array.end - 1..]);
            out
        }
    }
}

fn splice(text: &str, at: usize, insert: &str) -> String {
    let mut out = String::with_capacity(text.len() + insert.len());
    out.push_str(&text[..at]);
    out.push_str(insert);
    out.push_str(&text[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn is_ours(v: &Value) -> bool {
        v.get("command").and_then(Value::as_str) == Some("stop-check")
    }

    fn ensure(text: &str) -> Option<String> {
        ensure_element(
            text,
            &["hooks", "PreToolUse"],
            &json!({"command": "stop-check"}),
            &is_ours,
        )
        .unwrap()
    }

    #[test]
    fn adds_a_missing_member_indented_like_its_neighbours() {
        let text = "{\n    \"model\": \"x\",\n    \"env\": {\"A\": \"1\"}\n}\n";
        let out = ensure(text).unwrap();
        assert_eq!(
            out,
            "{\n    \"model\": \"x\",\n    \"env\": {\"A\": \"1\"},\n    \"hooks\": {\n        \"PreToolUse\": [\n            {\n                \"command\": \"stop-check\"\n            }\n        ]\n    }\n}\n"
        );
        assert_eq!(ensure(&out), None, "second run is a no-op");
    }

    #[test]
    fn appends_to_an_existing_array_and_keeps_everything_else() {
        let text = "{\"hooks\": {\"PreToolUse\": [\n  {\"command\": \"other\"}\n]}, \"z\": 1}";
        let out = ensure(text).unwrap();
        assert_eq!(
            out,
            "{\"hooks\": {\"PreToolUse\": [\n  {\"command\": \"other\"},\n  {\n    \"command\": \"stop-check\"\n  }\n]}, \"z\": 1}"
        );
    }

    #[test]
    fn fills_empty_containers() {
        assert_eq!(
            ensure("{}").unwrap(),
            "{\n  \"hooks\": {\n    \"PreToolUse\": [\n      {\n        \"command\": \"stop-check\"\n      }\n    ]\n  }\n}"
        );
        let out = ensure("{\"hooks\": {\"PreToolUse\": []}}").unwrap();
        let value: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(value["hooks"]["PreToolUse"][0]["command"], "stop-check");
    }

    #[test]
    fn syntax_errors_name_line_and_column() {
        let err = ensure_element("{\n  \"a\": 1,\n}\n", &["x"], &json!(1), &|_| false).unwrap_err();
        match err {
            EditError::Syntax(e) => assert_eq!((e.line, e.column), (3, 1)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_wrong_shape_is_refused() {
        let err = ensure_element(
            "{\"hooks\": []}",
            &["hooks", "PreToolUse"],
            &json!(1),
            &|_| false,
        )
        .unwrap_err();
        assert_eq!(err, EditError::Shape("hooks is not an object".into()));
    }

    #[test]
    fn strict_parser_rejects_what_serde_would_reject() {
        for bad in ["{,}", "[1,]", "{\"a\" 1}", "01", "\"\\x\"", "tru", "{} {}"] {
            assert!(validate(bad).is_err(), "{bad}");
        }
        for good in [
            "{}",
            "[]",
            "-0.5e+3",
            "\"\\u00e9\"",
            "{\"a\":[true,false,null]}",
        ] {
            assert!(validate(good).is_ok(), "{good}");
        }
    }
}
