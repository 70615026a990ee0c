//! The few looks the screen uses, and whether it uses them: colour and
//! emphasis only on a terminal and only when `NO_COLOR` is unset or empty
//! (<https://no-color.org>). With colour off, text is written as it is:
//! no escape code at all goes to a pipe or a file.

use crossterm::style::Stylize as _;

/// A look for a piece of text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Plain,
    /// What matters less: the status line, hints, context lines of a diff.
    Dim,
    Bold,
    Italic,
    /// Inline code and code blocks.
    Code,
    /// A diff's added line; a call that succeeded.
    Added,
    /// A diff's removed line; a call that failed.
    Removed,
    /// A question for the person, a decision that was not a plain allow.
    Asks,
}

/// Whether colour and emphasis are used for output to a terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Looks {
    pub colour: bool,
}

impl Looks {
    /// Colour when `tty` is a terminal and `NO_COLOR` is unset or empty.
    #[must_use]
    pub fn for_output(tty: bool) -> Looks {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Looks {
            colour: tty && !no_color,
        }
    }

    /// `text` in `tone`, appended to `out`.
    pub fn paint(self, out: &mut String, tone: Tone, text: &str) {
        use std::fmt::Write as _;
        if !self.colour || tone == Tone::Plain || text.is_empty() {
            out.push_str(text);
            return;
        }
        let _ = match tone {
            Tone::Plain => write!(out, "{text}"),
            Tone::Dim => write!(out, "{}", text.dim()),
            Tone::Bold => write!(out, "{}", text.bold()),
            Tone::Italic => write!(out, "{}", text.italic()),
            Tone::Code => write!(out, "{}", text.cyan()),
            Tone::Added => write!(out, "{}", text.green()),
            Tone::Removed => write!(out, "{}", text.red()),
            Tone::Asks => write!(out, "{}", text.yellow().bold()),
        };
    }

    /// `text` in `tone`, as a new string.
    #[must_use]
    pub fn painted(self, tone: Tone, text: &str) -> String {
        let mut out = String::new();
        self.paint(&mut out, tone, text);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_colour_nothing_but_the_text_is_written() {
        let plain = Looks { colour: false };
        for tone in [Tone::Dim, Tone::Bold, Tone::Code, Tone::Added, Tone::Asks] {
            assert_eq!(plain.painted(tone, "x"), "x");
        }
        let coloured = Looks { colour: true };
        assert!(coloured.painted(Tone::Added, "x").contains('\x1b'));
    }
}
