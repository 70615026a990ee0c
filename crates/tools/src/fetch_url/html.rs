//! HTML to the text a model reads: tags dropped, scripts and styles left
//! out, block elements on lines of their own, list items marked, links kept
//! as `[text](href)` so the model can follow them with another fetch_url,
//! `<pre>` kept as written, and the common character references decoded.
//!
//! This is a reader, not a parser: a page that is not well formed still
//! yields its text, which is all fetch_url promises.

/// Elements whose content is never text for a reader.
const SKIPPED: &[&str] = &["script", "style", "noscript", "template", "svg", "head"];

/// Elements that start a new line.
const BLOCKS: &[&str] = &[
    "p",
    "div",
    "br",
    "hr",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "ul",
    "ol",
    "table",
    "tr",
    "section",
    "article",
    "header",
    "footer",
    "nav",
    "main",
    "aside",
    "blockquote",
    "pre",
    "dl",
    "dt",
    "dd",
    "form",
    "title",
    "figure",
    "figcaption",
];

/// The readable text of `html`.
pub(super) fn to_text(html: &str) -> String {
    let mut reader = Reader {
        out: String::with_capacity(html.len() / 2),
        ..Reader::default()
    };
    let mut rest = html;
    while let Some(open) = rest.find('<') {
        reader.text(&rest[..open]);
        rest = &rest[open..];
        if rest.starts_with("<!--") {
            rest = rest.find("-->").map_or("", |end| &rest[end + 3..]);
            continue;
        }
        let Some(close) = rest.find('>') else {
            rest = "";
            break;
        };
        reader.tag(&rest[1..close]);
        rest = &rest[close + 1..];
    }
    if reader.skipping.is_none() {
        push_text(&mut reader.out, rest, reader.pre > 0);
    }
    let body = squeeze(&reader.out);
    let title = squeeze(&decode(&reader.title));
    if title.is_empty() {
        body
    } else {
        format!("# {title}\n\n{body}")
    }
}

/// Where the conversion is: the text so far, an element whose content is
/// skipped, how deep in `<pre>`, the open links, the title.
#[derive(Default)]
struct Reader {
    out: String,
    skipping: Option<String>,
    pre: usize,
    links: Vec<String>,
    title: String,
    in_title: bool,
}

impl Reader {
    /// Text between tags.
    fn text(&mut self, text: &str) {
        if self.in_title {
            self.title.push_str(text);
        } else if self.skipping.is_none() {
            push_text(&mut self.out, text, self.pre > 0);
        }
    }

    /// One tag, without its angle brackets.
    fn tag(&mut self, tag: &str) {
        let closing = tag.starts_with('/');
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(char::is_ascii_alphanumeric)
            .collect::<String>()
            .to_ascii_lowercase();
        if name == "title" {
            self.in_title = !closing;
        }
        if let Some(skipped) = &self.skipping {
            if closing && *skipped == name {
                self.skipping = None;
            }
            return;
        }
        if !closing && SKIPPED.contains(&name.as_str()) && !tag.ends_with('/') {
            self.skipping = Some(name);
            return;
        }
        let out = &mut self.out;
        match (name.as_str(), closing) {
            ("pre", false) => self.pre += 1,
            ("pre", true) => self.pre = self.pre.saturating_sub(1),
            ("li", false) => {
                newline(out);
                out.push_str("- ");
                return;
            }
            ("a", false) => {
                self.links.push(attribute(tag, "href").unwrap_or_default());
                out.push('[');
                return;
            }
            ("a", true) => {
                let href = self.links.pop().unwrap_or_default();
                if href.is_empty() || href.starts_with('#') || href.starts_with("javascript:") {
                    out.push(']');
                } else {
                    out.push_str(&format!("]({href})"));
                }
                return;
            }
            ("td" | "th", false) => {
                out.push_str(" | ");
                return;
            }
            _ => {}
        }
        if BLOCKS.contains(&name.as_str()) {
            newline(out);
        }
    }
}

fn push_text(out: &mut String, text: &str, keep_spaces: bool) {
    let text = decode(text);
    if keep_spaces {
        out.push_str(&text);
        return;
    }
    let mut last_space = out.ends_with([' ', '\n']) || out.is_empty();
    for c in text.chars() {
        if c.is_whitespace() {
            if !last_space {
                out.push(' ');
                last_space = true;
            }
        } else {
            out.push(c);
            last_space = false;
        }
    }
}

fn newline(out: &mut String) {
    while out.ends_with(' ') {
        out.pop();
    }
    if !out.is_empty() && !out.ends_with("\n\n") {
        out.push('\n');
    }
}

/// Trailing spaces off every line, no more than one blank line in a row,
/// no blank lines at either end.
fn squeeze(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = 0;
    for line in text.lines() {
        let line = line.trim_end();
        if line.trim().is_empty() {
            blank += 1;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank > 0 { "\n\n" } else { "\n" });
        }
        blank = 0;
        out.push_str(line);
    }
    out
}

/// The value of attribute `name` in a tag's text.
fn attribute(tag: &str, name: &str) -> Option<String> {
    let lower = tag.to_ascii_lowercase();
    let mut from = 0;
    while let Some(found) = lower[from..].find(name) {
        let at = from + found;
        from = at + name.len();
        let before_ok = lower[..at].ends_with(|c: char| c.is_whitespace());
        let after = lower[from..].trim_start();
        if !before_ok || !after.starts_with('=') {
            continue;
        }
        let value_start = tag.len() - after.len() + 1;
        let value = tag[value_start..].trim_start();
        let text = match value.chars().next() {
            Some(q @ ('"' | '\'')) => value[1..].split(q).next().unwrap_or(""),
            _ => value
                .split(|c: char| c.is_whitespace())
                .next()
                .unwrap_or(""),
        };
        return Some(decode(text));
    }
    None
}

/// The text with its character references decoded: the named ones pages
/// use most, and every numeric one.
fn decode(text: &str) -> String {
    if !text.contains('&') {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let end = rest[1..].find(';').map(|e| e + 1).filter(|&e| e <= 10);
        let Some(end) = end else {
            out.push('&');
            rest = &rest[1..];
            continue;
        };
        let name = &rest[1..end];
        let decoded = match name {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            "nbsp" => Some(' '),
            "mdash" => Some('—'),
            "ndash" => Some('–'),
            "hellip" => Some('…'),
            "copy" => Some('©'),
            _ => name.strip_prefix('#').and_then(|num| {
                let code = match num.strip_prefix(['x', 'X']) {
                    Some(hex) => u32::from_str_radix(hex, 16).ok(),
                    None => num.parse().ok(),
                };
                code.and_then(char::from_u32)
            }),
        };
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_page_reads_as_text_with_its_links() {
        let html = r#"<!doctype html><html><head><title>The &amp; page</title>
<style>body { color: red }</style><script>alert("x")</script></head>
<body><h1>Hello</h1><p>First   paragraph with <a href="/next">a link</a>.</p>
<!-- a comment --><ul><li>one</li><li>two &lt;3</li></ul>
<pre>  keep
    this</pre><p>caf&#233; &#x2764;</p></body></html>"#;
        assert_eq!(
            to_text(html),
            "# The & page\n\nHello\n\nFirst paragraph with [a link](/next).\n\n- one\n- two <3\n\n  keep\n    this\n\ncafé ❤"
        );
    }

    #[test]
    fn broken_markup_still_yields_its_text() {
        assert_eq!(to_text("a <b>bold</b> & <i"), "a bold &");
        assert_eq!(
            to_text("<a href=x>t</a> <a href='#top'>u</a>"),
            "[t](x) [u]"
        );
    }
}
