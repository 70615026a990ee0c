//! The model's text as a terminal shows it: markdown rendered one whole
//! line at a time, as the text streams. Each line is parsed on its own by
//! pulldown-cmark (headings, list items, quotes, rules, emphasis, inline
//! code, links); the one block that spans lines, a fenced code block, is
//! followed here, so its lines are shown as code and never parsed. A
//! construct that needs more than one line to be recognised (a setext
//! heading, a table) is shown as written, which reads the same.

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

use crate::style::{Looks, Tone};

/// The renderer's state between lines: inside a fenced code block or not.
#[derive(Debug, Default)]
pub struct Markdown {
    /// The fence that opened the current code block (```` ``` ```` or `~~~`).
    fence: Option<&'static str>,
}

impl Markdown {
    /// One whole line of the model's text (without its newline, its
    /// control characters already made visible), rendered.
    pub fn line(&mut self, line: &str, looks: Looks) -> String {
        let trimmed = line.trim_start();
        if let Some(fence) = self.fence {
            if trimmed.starts_with(fence) {
                self.fence = None;
                return looks.painted(Tone::Dim, line);
            }
            return looks.painted(Tone::Code, line);
        }
        for fence in ["```", "~~~"] {
            if trimmed.starts_with(fence) {
                self.fence = Some(fence);
                return looks.painted(Tone::Dim, line);
            }
        }
        if !looks.colour {
            return line.to_owned();
        }
        inline(line, looks)
    }
}

/// A line outside a code block, rendered from its parse.
fn inline(line: &str, looks: Looks) -> String {
    let indent = &line[..line.len() - line.trim_start().len()];
    let mut out = String::from(indent);
    let mut tones: Vec<Tone> = Vec::new();
    let mut numbers: Vec<Option<u64>> = Vec::new();
    let mut link: Vec<String> = Vec::new();
    let tone = |tones: &[Tone]| tones.last().copied().unwrap_or(Tone::Plain);
    for event in Parser::new_ext(
        line,
        Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS,
    ) {
        match event {
            Event::Start(Tag::Heading { .. } | Tag::Strong) => tones.push(Tone::Bold),
            Event::Start(Tag::Emphasis | Tag::Strikethrough) => tones.push(Tone::Italic),
            Event::Start(Tag::CodeBlock(_)) => tones.push(Tone::Code),
            Event::Start(Tag::BlockQuote(_)) => {
                looks.paint(&mut out, Tone::Dim, "│ ");
                tones.push(Tone::Italic);
            }
            Event::Start(Tag::List(first)) => numbers.push(first),
            Event::Start(Tag::Item) => match numbers.last_mut() {
                Some(Some(n)) => {
                    out.push_str(&format!("{n}. "));
                    *n += 1;
                }
                _ => out.push_str("• "),
            },
            Event::Start(Tag::Link { dest_url, .. }) => {
                link.push(dest_url.into_string());
                tones.push(Tone::Code);
            }
            Event::End(TagEnd::Link) => {
                tones.pop();
                if let Some(url) = link.pop() {
                    looks.paint(&mut out, Tone::Dim, &format!(" ({url})"));
                }
            }
            Event::End(
                TagEnd::Heading(_)
                | TagEnd::Strong
                | TagEnd::Emphasis
                | TagEnd::Strikethrough
                | TagEnd::CodeBlock
                | TagEnd::BlockQuote(_),
            ) => {
                tones.pop();
            }
            Event::End(TagEnd::List(_)) => {
                numbers.pop();
            }
            Event::Text(text) | Event::Html(text) | Event::InlineHtml(text) => {
                looks.paint(&mut out, tone(&tones), &text);
            }
            Event::Code(code) => looks.paint(&mut out, Tone::Code, &code),
            Event::SoftBreak | Event::HardBreak => out.push(' '),
            Event::Rule => looks.paint(&mut out, Tone::Dim, "────────"),
            Event::TaskListMarker(done) => out.push_str(if done { "[x] " } else { "[ ] " }),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const COLOUR: Looks = Looks { colour: true };
    const PLAIN: Looks = Looks { colour: false };

    fn strip(text: &str) -> String {
        let mut out = String::new();
        let mut chars = text.chars();
        while let Some(c) = chars.next() {
            if c == '\x1b' {
                for c in chars.by_ref() {
                    if c == 'm' {
                        break;
                    }
                }
            } else {
                out.push(c);
            }
        }
        out
    }

    #[test]
    fn headings_lists_and_inline_code_are_rendered() {
        let mut md = Markdown::default();
        assert_eq!(strip(&md.line("## Next steps", COLOUR)), "Next steps");
        assert!(md.line("## Next steps", COLOUR).contains("\x1b[1m"));
        assert_eq!(
            strip(&md.line("- run `sh check.sh`", COLOUR)),
            "• run sh check.sh"
        );
        assert_eq!(strip(&md.line("3. third", COLOUR)), "3. third");
        assert_eq!(
            strip(&md.line("  - nested **bold**", COLOUR)),
            "  • nested bold"
        );
        assert_eq!(
            strip(&md.line("see [docs](https://x.invalid)", COLOUR)),
            "see docs (https://x.invalid)"
        );
    }

    #[test]
    fn a_fenced_block_is_code_until_its_fence_closes() {
        let mut md = Markdown::default();
        md.line("```rust", COLOUR);
        let inside = md.line("# not a heading", COLOUR);
        assert_eq!(strip(&inside), "# not a heading");
        assert!(
            inside.contains("\x1b[38;5;14m") || inside.contains("\x1b[36m"),
            "{inside:?}"
        );
        md.line("```", COLOUR);
        assert_eq!(strip(&md.line("# a heading", COLOUR)), "a heading");
    }

    #[test]
    fn without_colour_the_text_is_as_written() {
        let mut md = Markdown::default();
        for line in ["## Title", "- item", "```", "code", "```"] {
            assert_eq!(md.line(line, PLAIN), line);
        }
    }
}
