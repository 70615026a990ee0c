//! Literals: strings (with Zig's escapes), `\\` multiline strings, character
//! literals, and the scan of a number's text. Number text is taken greedily
//! the way Zig's tokenizer does (so `12abc` is one bad literal, not `12` then
//! `abc`) and handed to [`super::number`] to check and convert.

use super::Parser;
use super::number::number_value;
use crate::error::Error;
use crate::value::ValueKind;

/// What one escape sequence stands for: a raw byte (`\xNN`) or a character.
enum Escaped {
    Byte(u8),
    Char(char),
}

const ESCAPES_HELP: &str = "ZON knows \\n \\r \\t \\\\ \\\" \\' \\xNN and \\u{NNNN}";

impl Parser<'_> {
    /// A `"..."` string; the cursor is on the opening quote.
    pub(super) fn string_lit(&mut self) -> Result<String, Error> {
        let start = self.here();
        self.bump();
        let mut bytes = Vec::new();
        loop {
            // Copy the run of ordinary characters in one go; stop at
            // anything that needs a look: a quote, a backslash, a newline,
            // or a control character (C0, DEL, or C1 encoded as C2 80..9F).
            let rest = &self.src.as_bytes()[self.at.pos..];
            let plain = rest
                .iter()
                .enumerate()
                .position(|(i, &b)| {
                    b == b'"'
                        || b == b'\\'
                        || (b < 0x20 && b != b'\t')
                        || b == 0x7f
                        || (b == 0xC2 && rest.get(i + 1).is_some_and(|n| (0x80..0xA0).contains(n)))
                })
                .unwrap_or(rest.len());
            bytes.extend_from_slice(&rest[..plain]);
            self.skip_within_line(plain);
            match self.peek() {
                None | Some('\n') => {
                    return Err(Error::at(
                        start,
                        "unterminated string: add a closing `\"` before the end of the line (use `\\\\` lines for text over several lines)",
                    ));
                }
                Some('"') => {
                    self.bump();
                    break;
                }
                Some('\\') => match self.escape()? {
                    Escaped::Byte(b) => bytes.push(b),
                    Escaped::Char(c) => {
                        bytes.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                    }
                },
                Some(c) if c.is_control() && c != '\t' => {
                    return Err(Error::at(
                        self.here(),
                        format!(
                            "control character U+{:04X} in a string: write it as an escape such as \\x{:02x}",
                            c as u32, c as u32
                        ),
                    ));
                }
                Some(c) => {
                    self.bump();
                    bytes.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                }
            }
        }
        String::from_utf8(bytes).map_err(|_| {
            Error::at(
                start,
                "string is not valid UTF-8: check its \\xNN escapes (use \\u{NNNN} for characters)",
            )
        })
    }

    /// One escape sequence; the cursor is on the backslash.
    fn escape(&mut self) -> Result<Escaped, Error> {
        let start = self.here();
        self.bump();
        let c = self.peek();
        let simple = match c {
            Some('n') => Some('\n'),
            Some('r') => Some('\r'),
            Some('t') => Some('\t'),
            Some('\\') => Some('\\'),
            Some('"') => Some('"'),
            Some('\'') => Some('\''),
            _ => None,
        };
        if let Some(simple) = simple {
            self.bump();
            return Ok(Escaped::Char(simple));
        }
        match c {
            Some('x') => {
                self.bump();
                let mut n = 0u8;
                for _ in 0..2 {
                    match self.peek().and_then(|c| c.to_digit(16)) {
                        Some(d) => {
                            self.bump();
                            n = n * 16 + d as u8;
                        }
                        None => {
                            return Err(Error::at(
                                start,
                                "invalid escape: `\\x` takes exactly two hex digits, as in \\x41",
                            ));
                        }
                    }
                }
                Ok(Escaped::Byte(n))
            }
            Some('u') => {
                self.bump();
                let bad = || {
                    Error::at(
                        start,
                        "invalid escape: write a Unicode escape as \\u{NNNN}, 1 to 6 hex digits in braces",
                    )
                };
                if self.peek() != Some('{') {
                    return Err(bad());
                }
                self.bump();
                let mut n = 0u32;
                let mut digits = 0;
                while let Some(d) = self.peek().and_then(|c| c.to_digit(16)) {
                    self.bump();
                    n = n.saturating_mul(16).saturating_add(d);
                    digits += 1;
                }
                if self.peek() != Some('}') || digits == 0 || digits > 6 {
                    return Err(bad());
                }
                self.bump();
                char::from_u32(n).map(Escaped::Char).ok_or_else(|| {
                    Error::at(
                        start,
                        format!("invalid escape: \\u{{{n:x}}} is not a Unicode scalar value"),
                    )
                })
            }
            None => Err(Error::at(
                start,
                "unterminated string: it ends in a lone `\\`",
            )),
            Some(other) => Err(Error::at(
                start,
                format!(
                    "invalid escape sequence `\\{}`: {ESCAPES_HELP}",
                    other.escape_debug()
                ),
            )),
        }
    }

    /// Consecutive `\\` lines, joined with `\n`; the cursor is on the first `\\`.
    pub(super) fn multiline(&mut self) -> String {
        let mut out = String::new();
        let mut first = true;
        loop {
            self.bump();
            self.bump();
            if !first {
                out.push('\n');
            }
            first = false;
            let from = self.at.pos;
            self.skip_within_line(self.rest_of_line());
            out.push_str(self.src[from..self.at.pos].trim_end_matches('\r'));
            let saved = self.at;
            self.skip_trivia();
            if !(self.peek_byte() == Some(b'\\') && self.peek_byte_at(1) == Some(b'\\')) {
                self.at = saved;
                return out;
            }
        }
    }

    /// A character literal; the cursor is on the opening `'`.
    pub(super) fn char_lit(&mut self) -> Result<u32, Error> {
        let start = self.here();
        self.bump();
        let code = match self.peek() {
            None | Some('\n') => {
                return Err(Error::at(
                    start,
                    "unterminated character literal: add a closing `'`",
                ));
            }
            Some('\'') => {
                return Err(Error::at(
                    start,
                    "empty character literal: put one character between the quotes",
                ));
            }
            Some('\\') => match self.escape()? {
                Escaped::Byte(b) => u32::from(b),
                Escaped::Char(c) => c as u32,
            },
            Some(c) if c.is_control() && c != '\t' => {
                return Err(Error::at(
                    self.here(),
                    format!(
                        "control character U+{:04X} in a character literal: write it as an escape",
                        c as u32
                    ),
                ));
            }
            Some(c) => {
                self.bump();
                c as u32
            }
        };
        if self.peek() != Some('\'') {
            return Err(Error::at(
                start,
                "a character literal holds exactly one character: close it with `'` (use \"...\" for text)",
            ));
        }
        self.bump();
        Ok(code)
    }

    /// An integer or float, with an optional leading `-`.
    pub(super) fn number(&mut self) -> Result<ValueKind, Error> {
        let start = self.here();
        let negative = self.peek_byte() == Some(b'-');
        if negative {
            self.bump();
            if !self.peek_byte().is_some_and(|b| b.is_ascii_digit()) {
                return Err(Error::at(
                    start,
                    format!(
                        "expected a number after `-`, found {}",
                        self.describe_here()
                    ),
                ));
            }
        }
        let from = self.at.pos;
        let base = match (self.peek_byte(), self.peek_byte_at(1)) {
            (Some(b'0'), Some(b'x')) => 16,
            (Some(b'0'), Some(b'o')) => 8,
            (Some(b'0'), Some(b'b')) => 2,
            _ => 10,
        };
        if base != 10 {
            self.bump();
            self.bump();
        }
        while let Some(b) = self.peek_byte() {
            if b.is_ascii_alphanumeric() || b == b'_' {
                let exponent = matches!((base, b), (10, b'e' | b'E') | (16, b'p' | b'P'));
                self.bump();
                if exponent && matches!(self.peek_byte(), Some(b'+' | b'-')) {
                    self.bump();
                }
            } else if b == b'.'
                && (base == 10 || base == 16)
                && self
                    .peek_byte_at(1)
                    .is_some_and(|d| (d as char).is_digit(base))
            {
                self.bump();
            } else {
                break;
            }
        }
        let text = &self.src[from..self.at.pos];
        number_value(text, base, negative).map_err(|m| {
            let shown = if negative {
                format!("-{text}")
            } else {
                text.to_owned()
            };
            Error::at(start, format!("{m} in the number literal `{shown}`"))
        })
    }
}
