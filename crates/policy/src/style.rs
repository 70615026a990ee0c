//! The `.style` block of a chock.zon: the project's style rules, each a
//! query over the syntax tree of the content a write would leave behind,
//! answering a number, with a bound that refuses the write past it.
//!
//! ```zig
//! .style = .{
//!     .no_unwrap = .{
//!         .files = .{ "src/**/*.rs" },
//!         .query = "((field_identifier) @m (#eq? @m \"unwrap\"))",
//!         .max = 0,
//!     },
//! },
//! ```
//!
//! The block is data only: the grammars and the query compiler are
//! chock-style's, which compiles every rule at a session's start and in
//! `chock style check`, and says where a query does not compile. Whether
//! any rule runs at all is `style.parse`, which ships no default.

use chock_zon::{Value, ValueKind};

use crate::check::{Walk, kind_name};

/// What a rule's number is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    /// How many times the query matches.
    Matches,
    /// The lines of the longest node the query captures.
    Lines,
}

/// A rule's query as it is written in its file, to turn a place in the
/// query into a place in the file: the string's source (quotes, escapes,
/// `\\` lines and all) and where it starts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct QueryAt {
    pub line: u32,
    pub column: u32,
    /// The source of the string value, from its first character to its last.
    pub raw: String,
}

impl QueryAt {
    /// The file's line and column of the query's 0-based `row` and byte
    /// `column` (as tree-sitter counts them), read through the string's
    /// escapes and line prefixes.
    pub fn place(&self, row: usize, column: usize) -> (u32, u32) {
        let mut decoded_row = 0;
        let mut decoded_column = 0;
        let (mut line, mut col) = (self.line, self.column);
        let mut chars = self.raw.chars().peekable();
        let multiline = self.raw.starts_with("\\\\");
        // Past the opening quote, or the first line's `\\`.
        let skip = if multiline { 2 } else { 1 };
        for _ in 0..skip {
            chars.next();
            col += 1;
        }
        while let Some(c) = chars.next() {
            if decoded_row == row && decoded_column >= column {
                return (line, col);
            }
            match c {
                '"' if !multiline => break,
                '\\' if !multiline => {
                    // One escape is one character of the query.
                    let width = match chars.next() {
                        Some('x') => 3,
                        Some('u') => {
                            let mut n = 1;
                            for e in chars.by_ref() {
                                n += 1;
                                if e == '}' {
                                    break;
                                }
                            }
                            n
                        }
                        _ => 1,
                    };
                    for _ in 1..width {
                        chars.next();
                    }
                    decoded_column += 1;
                    col += u32::try_from(width).unwrap_or(1) + 1;
                }
                '\n' if multiline => {
                    decoded_row += 1;
                    decoded_column = 0;
                    line += 1;
                    col = 1;
                    // The next line's indentation and its `\\`.
                    while chars.peek().is_some_and(|c| *c == ' ' || *c == '\t') {
                        chars.next();
                        col += 1;
                    }
                    for _ in 0..2 {
                        chars.next();
                        col += 1;
                    }
                }
                c => {
                    decoded_column += c.len_utf8();
                    col += 1;
                }
            }
        }
        (line, col)
    }
}

/// One style rule as a file names it.
#[derive(Debug, Clone, PartialEq)]
pub struct StyleRule {
    /// Its name in the block, which a refusal says.
    pub name: String,
    /// Globs of the files it applies to, relative to the project root.
    pub files: Vec<String>,
    /// The grammar it parses with, when the file names one; else the
    /// extension of its globs says.
    pub language: Option<String>,
    /// The tree-sitter query.
    pub query: String,
    pub query_at: QueryAt,
    pub measure: Measure,
    /// The bound: a write whose number is past it is refused.
    pub max: Option<u64>,
    /// What to do instead, said with a refusal.
    pub message: Option<String>,
    /// The file that named it, when it came from one.
    pub file: Option<std::path::PathBuf>,
    /// The line and column that named it.
    pub line: u32,
    pub column: u32,
}

impl StyleRule {
    /// `<file>:<line>:<column>` of the rule (`chock.zon` when it came from
    /// no file), or of its query's `row` and `column` when `at` is given.
    pub fn place(&self, at: Option<(usize, usize)>) -> String {
        let (line, column) = self.position(at);
        format!("{}:{line}:{column}", self.file_name())
    }

    /// The line and column of the rule, or of its query's `row` and
    /// `column` when `at` is given.
    pub fn position(&self, at: Option<(usize, usize)>) -> (u32, u32) {
        match at {
            Some((row, column)) => self.query_at.place(row, column),
            None => (self.line, self.column),
        }
    }

    /// The file that holds the rule, `chock.zon` when it came from none.
    pub fn file_name(&self) -> String {
        self.file
            .as_ref()
            .map_or_else(|| "chock.zon".to_owned(), |f| f.display().to_string())
    }
}

impl Walk<'_> {
    /// The `.style` block: one field per rule.
    pub(crate) fn style(&mut self, v: &Value) -> Vec<StyleRule> {
        let mut rules = Vec::new();
        let Some(fields) = self.fields(v, ".style") else {
            return rules;
        };
        for f in fields {
            if let Some(rule) = self.style_rule(&f.name, f.name_span.start, &f.value) {
                rules.push(rule);
            }
        }
        rules
    }

    fn style_rule(&mut self, name: &str, at: chock_zon::Position, v: &Value) -> Option<StyleRule> {
        let what = format!(".style.{name}");
        let fields = self.fields(v, &what)?;
        let mut files = Vec::new();
        let mut language = None;
        let mut query = None;
        let mut measure = Measure::Matches;
        let mut max = None;
        let mut message = None;
        for f in fields {
            match (f.name.as_str(), &f.value.kind) {
                ("files", _) => files = self.strings(&format!("{what}.files"), &f.value),
                ("language", ValueKind::EnumLiteral(s) | ValueKind::String(s)) => {
                    language = Some(s.clone());
                }
                ("query", ValueKind::String(s)) => {
                    let span = f.value.span;
                    query = Some((
                        s.clone(),
                        QueryAt {
                            line: span.start.line,
                            column: span.start.column,
                            raw: self
                                .source
                                .get(span.start.offset..span.end.offset)
                                .unwrap_or_default()
                                .to_owned(),
                        },
                    ));
                }
                ("measure", ValueKind::EnumLiteral(s)) if s == "matches" || s == "lines" => {
                    measure = if s == "lines" {
                        Measure::Lines
                    } else {
                        Measure::Matches
                    };
                }
                ("max", ValueKind::Int(n)) if *n >= 0 => max = u64::try_from(*n).ok(),
                ("message", ValueKind::String(s)) => message = Some(s.clone()),
                ("language" | "query" | "measure" | "max" | "message", other) => {
                    let want = match f.name.as_str() {
                        "language" => "a grammar, such as .rust, .python, .typescript, .tsx or .nix",
                        "query" => "a string holding a tree-sitter query",
                        "measure" => ".matches (how many times the query matches) or .lines (the lines of the longest node it captures)",
                        "max" => "a number, 0 or more",
                        _ => "a string",
                    };
                    self.problem(
                        &f.value.span,
                        format!("{what}.{} is {want}, not {}", f.name, kind_name(other)),
                    );
                }
                (other, _) => self.problem(
                    &f.name_span,
                    format!(
                        "unknown field .{other} in {what}: a rule holds .files, .query, .language, .measure, .max and .message"
                    ),
                ),
            }
        }
        let Some((query, query_at)) = query else {
            self.problem(
                &v.span,
                format!("{what} has no .query; write the tree-sitter query the rule counts"),
            );
            return None;
        };
        if files.is_empty() {
            self.problem(
                &v.span,
                format!("{what} applies to no files; write .files = .{{ \"src/**/*.rs\" }}"),
            );
            return None;
        }
        Some(StyleRule {
            name: name.to_owned(),
            files,
            language,
            query,
            query_at,
            measure,
            max,
            message,
            file: self.file.map(std::path::Path::to_path_buf),
            line: at.line,
            column: at.column,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check_text;

    #[test]
    fn a_rule_is_read_with_every_field_and_knows_where_its_query_starts() {
        let checked = check_text(
            ".{\n    .style = .{\n        .long = .{\n            .files = .{ \"**/*.rs\" },\n            .language = .rust,\n            .query =\n                \\\\(function_item) @f\n            ,\n            .measure = .lines,\n            .max = 80,\n            .message = \"split it\",\n        },\n    },\n}",
            None,
        );
        assert_eq!(checked.problems, vec![]);
        let rule = &checked.rules.style[0];
        assert_eq!(rule.language.as_deref(), Some("rust"));
        assert_eq!(rule.measure, Measure::Lines);
        assert_eq!(rule.max, Some(80));
        assert_eq!(rule.query_at.place(0, 1), (7, 20));
    }

    #[test]
    fn a_place_in_a_query_is_found_through_escapes_and_line_prefixes() {
        let at = |zon: &str| check_text(zon, None).rules.style[0].query_at.clone();
        // `(a (#eq? @x \"y\") (z))`: the z is 18 bytes in, after an
        // escaped quote pair that takes two columns more.
        let quoted = at(
            ".{ .style = .{ .r = .{ .files = .{ \"*.rs\" }, .query = \"(a (#eq? @x \\\"y\\\") (z))\" } } }",
        );
        assert_eq!(quoted.place(0, 18), (1, 76));
        // A query on three `\\` lines: its second line's third byte.
        let lines = at(
            ".{ .style = .{ .r = .{ .files = .{ \"*.rs\" }, .query =\n    \\\\(a\n    \\\\  (bc)\n    \\\\)\n, } } }",
        );
        assert_eq!(lines.place(1, 3), (3, 10));
        assert_eq!(lines.place(0, 0), (2, 7));
        // A one-line `\\` string is not read as a quoted one.
        let one =
            at(".{ .style = .{ .r = .{ .files = .{ \"*.rs\" }, .query =\n\\\\(x) @x\n, } } }");
        assert_eq!(one.place(0, 1), (2, 4));
    }

    #[test]
    fn a_rule_without_a_query_or_files_and_a_bad_bound_are_problems() {
        let checked = check_text(
            r#".{
    .style = .{
        .a = .{ .files = .{ "*.rs" } },
        .b = .{ .query = "(x)" },
        .c = .{ .query = "(x)", .files = .{ "*.rs" }, .max = -1 },
        .d = .{ .query = "(x)", .files = .{ "*.rs" }, .mesure = .lines },
    },
}"#,
            None,
        );
        let found: Vec<String> = checked.problems.iter().map(ToString::to_string).collect();
        let at = |line: u32, says: &str| {
            assert!(
                found
                    .iter()
                    .any(|p| p.starts_with(&format!("{line}:")) && p.contains(says)),
                "no problem on line {line} saying {says:?}: {found:#?}"
            );
        };
        at(3, "has no .query");
        at(4, "applies to no files");
        at(5, ".max is a number");
        at(6, "unknown field .mesure");
    }
}
