//! The one error type of the crate. Every error a parse or a typed read can
//! produce carries the position it is about and, when the source text is at
//! hand, the source line with a caret under the column, because the person
//! reading it is about to open that file and fix that line.
//!
//! Serde's own errors (`missing field`, `invalid type`, `unknown variant`)
//! are born without a position; the deserializer stamps the position of the
//! value it was reading on them as they pass outwards, innermost first, so
//! the position is always the narrowest one known.

use std::fmt;

use crate::span::Position;

/// Excerpts of longer lines are cut to a window around the column, so one
/// minified line does not flood a terminal.
const EXCERPT_WINDOW: usize = 60;

/// A ZON syntax error, a type mismatch while reading into a Rust type, or a
/// value that cannot be written as ZON.
#[derive(Clone, PartialEq, Eq)]
pub struct Error {
    inner: Box<Inner>,
}

#[derive(Clone, PartialEq, Eq)]
struct Inner {
    message: String,
    position: Option<Position>,
    excerpt: String,
    /// Characters of `excerpt` before the caret.
    caret: usize,
    /// Whether `excerpt` was filled from the source (it may be empty when
    /// the error is on an empty line or at the end of input).
    has_source: bool,
}

impl Error {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Self {
            inner: Box::new(Inner {
                message: message.into(),
                position: None,
                excerpt: String::new(),
                caret: 0,
                has_source: false,
            }),
        }
    }

    /// An error at `position`, for checks made after reading (an unknown
    /// action name at a [`Spanned`](crate::Spanned) value, say), so they
    /// report the same way the reader does. Add the excerpt with
    /// [`Error::with_source`].
    pub fn at(position: Position, message: impl Into<String>) -> Self {
        let mut e = Self::new(message);
        e.inner.position = Some(position);
        e
    }

    /// Gives the error a position unless a narrower one is already set.
    pub(crate) fn or_at(mut self, position: Position) -> Self {
        if self.inner.position.is_none() {
            self.inner.position = Some(position);
        }
        self
    }

    /// Fills in the excerpt from the source text the position refers to
    /// (for errors from [`from_value`](crate::from_value) or [`Error::at`]).
    pub fn with_source(mut self, src: &str) -> Self {
        let Some(pos) = self.inner.position else {
            return self;
        };
        let offset = pos.offset.min(src.len());
        let Some(line_start) = src
            .get(..offset)
            .map(|s| s.rfind('\n').map_or(0, |i| i + 1))
        else {
            return self;
        };
        let rest = &src[line_start..];
        let line = rest.split('\n').next().unwrap_or("").trim_end_matches('\r');
        let chars: Vec<char> = line.chars().collect();
        let col = (pos.column as usize).saturating_sub(1).min(chars.len());
        let from = col.saturating_sub(EXCERPT_WINDOW);
        let to = (col + EXCERPT_WINDOW).min(chars.len());
        let mut excerpt = String::new();
        let mut caret = col - from;
        if from > 0 {
            excerpt.push_str("...");
            caret += 3;
        }
        excerpt.extend(&chars[from..to]);
        if to < chars.len() {
            excerpt.push_str("...");
        }
        self.inner.excerpt = excerpt;
        self.inner.caret = caret;
        self.inner.has_source = true;
        self
    }

    /// The 1-based line the error is about; 0 when it has no position
    /// (only errors from writing a value have none).
    pub fn line(&self) -> u32 {
        self.inner.position.map_or(0, |p| p.line)
    }

    /// The 1-based column, in characters; 0 when it has no position.
    pub fn column(&self) -> u32 {
        self.inner.position.map_or(0, |p| p.column)
    }

    /// Where the error is, when known.
    pub fn position(&self) -> Option<Position> {
        self.inner.position
    }

    /// The source line the error is on (cut around the column when long);
    /// empty when the source was not at hand (`from_value`) or for write errors.
    pub fn excerpt(&self) -> &str {
        &self.inner.excerpt
    }

    /// What went wrong, without the position.
    pub fn message(&self) -> &str {
        &self.inner.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(p) = self.inner.position {
            write!(f, "line {}, column {}: ", p.line, p.column)?;
        }
        f.write_str(&self.inner.message)?;
        if self.inner.position.is_some() && self.inner.has_source {
            f.write_str("\n")?;
            f.write_str(&self.inner.excerpt)?;
            f.write_str("\n")?;
            // Tabs stay tabs so the caret lines up whatever the tab width.
            for c in self.inner.excerpt.chars().take(self.inner.caret) {
                f.write_str(if c == '\t' { "\t" } else { " " })?;
            }
            f.write_str("^")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "chock_zon::Error({self})")
    }
}

impl std::error::Error for Error {}

impl serde::de::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Self::new(msg.to_string())
    }
}

impl serde::ser::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Self::new(msg.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(line: u32, column: u32, offset: usize) -> Position {
        Position {
            line,
            column,
            offset,
        }
    }

    #[test]
    fn display_puts_the_caret_under_the_column() {
        let src = "a\n  bad here\n";
        let e = Error::at(pos(2, 3, 4), "oops").with_source(src);
        assert_eq!(e.to_string(), "line 2, column 3: oops\n  bad here\n  ^");
        assert_eq!(e.excerpt(), "  bad here");
    }

    #[test]
    fn caret_keeps_tabs_and_counts_characters() {
        let src = "\té=x";
        let e = Error::at(pos(1, 3, 3), "here").with_source(src);
        assert_eq!(e.to_string(), "line 1, column 3: here\n\té=x\n\t ^");
    }

    #[test]
    fn long_lines_are_cut_around_the_column() {
        let src = "x".repeat(500);
        let e = Error::at(pos(1, 250, 249), "m").with_source(&src);
        assert_eq!(e.excerpt().len(), 3 + 120 + 3);
        let caret_line = e.to_string().lines().last().unwrap_or("").to_owned();
        assert_eq!(caret_line.len(), 3 + 60 + 1);
    }

    #[test]
    fn or_at_keeps_the_narrower_position() {
        let e = Error::at(pos(3, 4, 0), "m").or_at(pos(1, 1, 0));
        assert_eq!((e.line(), e.column()), (3, 4));
        let e = Error::new("m").or_at(pos(1, 2, 0));
        assert_eq!((e.line(), e.column()), (1, 2));
    }

    #[test]
    fn error_at_end_of_input_has_an_empty_caret_line() {
        let e = Error::at(pos(2, 1, 3), "end").with_source("ab\n");
        assert_eq!(e.to_string(), "line 2, column 1: end\n\n^");
    }
}
