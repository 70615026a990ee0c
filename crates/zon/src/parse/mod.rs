//! The parser: ZON text in, a spanned [`Value`] tree out, in one pass over
//! the characters with no separate token stream. It keeps line and column
//! as it goes (columns in characters) so every value and name gets a span
//! without rescanning, and every error a position.
//!
//! Nesting is capped at [`MAX_DEPTH`] so hostile input cannot overflow the
//! stack; everything else is linear in the input (duplicate field names are
//! found with a hash set per struct).

mod lit;
mod number;

use std::collections::HashMap;

use crate::error::Error;
use crate::span::{Position, Span};
use crate::value::{Field, Value, ValueKind};

/// Deepest nesting of `.{` accepted; one more is an error at that `.{`.
pub const MAX_DEPTH: usize = 128;

/// Structs up to this many fields look for a duplicate name by scanning;
/// bigger ones switch to a hash map so a huge struct stays linear.
const SMALL_STRUCT: usize = 16;

pub(crate) fn parse(src: &str) -> Result<Value, Error> {
    let mut p = Parser::new(src);
    let result = p.document();
    result.map_err(|e| e.with_source(src))
}

#[derive(Clone, Copy)]
struct Cursor {
    pos: usize,
    line: u32,
    column: u32,
}

pub(crate) struct Parser<'a> {
    src: &'a str,
    at: Cursor,
    depth: usize,
}

impl<'a> Parser<'a> {
    fn new(src: &'a str) -> Self {
        let pos = if src.starts_with('\u{feff}') { 3 } else { 0 };
        Self {
            src,
            at: Cursor {
                pos,
                line: 1,
                column: 1,
            },
            depth: 0,
        }
    }

    fn here(&self) -> Position {
        Position {
            line: self.at.line,
            column: self.at.column,
            offset: self.at.pos,
        }
    }

    fn span_from(&self, start: Position) -> Span {
        Span {
            start,
            end: self.here(),
        }
    }

    fn peek_byte(&self) -> Option<u8> {
        self.src.as_bytes().get(self.at.pos).copied()
    }

    fn peek_byte_at(&self, n: usize) -> Option<u8> {
        self.src.as_bytes().get(self.at.pos + n).copied()
    }

    fn peek(&self) -> Option<char> {
        self.src.get(self.at.pos..).and_then(|s| s.chars().next())
    }

    fn bump(&mut self) -> Option<char> {
        let b = self.peek_byte()?;
        // ASCII is nearly all of a config file; decode only past it.
        let c = if b < 0x80 { b as char } else { self.peek()? };
        self.at.pos += c.len_utf8();
        if c == '\n' {
            self.at.line += 1;
            self.at.column = 1;
        } else {
            self.at.column += 1;
        }
        Some(c)
    }

    /// Moves over the next `n` bytes, which hold no newline, in one step.
    fn skip_within_line(&mut self, n: usize) {
        let run = &self.src.as_bytes()[self.at.pos..self.at.pos + n];
        // Each character starts with one non-continuation byte.
        let chars = run.iter().filter(|&&b| b & 0xC0 != 0x80).count();
        self.at.column += u32::try_from(chars).unwrap_or(u32::MAX);
        self.at.pos += n;
    }

    /// Bytes from the cursor up to the next newline (or the end).
    fn rest_of_line(&self) -> usize {
        let rest = &self.src.as_bytes()[self.at.pos..];
        rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len())
    }

    fn describe_here(&self) -> String {
        match self.peek() {
            None => "the end of the input".to_owned(),
            Some(c) if c.is_control() => format!("character U+{:04X}", c as u32),
            Some(c) => format!("`{c}`"),
        }
    }

    /// Skips whitespace and `//` comments.
    fn skip_trivia(&mut self) {
        loop {
            match self.peek_byte() {
                Some(b' ' | b'\t' | b'\n' | b'\r') => {
                    self.bump();
                }
                Some(b'/') if self.peek_byte_at(1) == Some(b'/') => {
                    self.skip_within_line(self.rest_of_line());
                }
                _ => return,
            }
        }
    }

    fn document(&mut self) -> Result<Value, Error> {
        let v = self.value()?;
        self.skip_trivia();
        if self.peek().is_some() {
            return Err(Error::at(
                self.here(),
                format!(
                    "unexpected {} after the value: a ZON file holds exactly one value",
                    self.describe_here()
                ),
            ));
        }
        Ok(v)
    }

    fn value(&mut self) -> Result<Value, Error> {
        self.skip_trivia();
        let start = self.here();
        let kind = match self.peek_byte() {
            None => {
                return Err(Error::at(
                    start,
                    "expected a value, found the end of the input",
                ));
            }
            Some(b'.') => match self.peek_byte_at(1) {
                Some(b'{') => {
                    self.bump();
                    self.bump();
                    return self.container(start);
                }
                _ => {
                    self.bump();
                    ValueKind::EnumLiteral(self.name(start)?)
                }
            },
            Some(b'"') => ValueKind::String(self.string_lit()?),
            Some(b'\\') if self.peek_byte_at(1) == Some(b'\\') => {
                ValueKind::String(self.multiline())
            }
            Some(b'\'') => ValueKind::Char(self.char_lit()?),
            Some(b'-' | b'0'..=b'9') => self.number()?,
            Some(b) if b.is_ascii_alphabetic() || b == b'_' => self.word()?,
            Some(_) => {
                return Err(Error::at(
                    start,
                    format!("expected a value, found {}", self.describe_here()),
                ));
            }
        };
        Ok(Value {
            kind,
            span: self.span_from(start),
        })
    }

    /// `true`, `false`, `null`, or a helpful refusal of any other bare word.
    fn word(&mut self) -> Result<ValueKind, Error> {
        let start = self.here();
        let word = self.identifier();
        match word {
            "true" => Ok(ValueKind::Bool(true)),
            "false" => Ok(ValueKind::Bool(false)),
            "null" => Ok(ValueKind::Null),
            "inf" | "nan" => Err(Error::at(
                start,
                format!(
                    "`{word}` is not a ZON literal: ZON has no infinity or NaN, write a finite number"
                ),
            )),
            _ => Err(Error::at(
                start,
                format!(
                    "unexpected identifier `{word}`: write an enum literal `.{word}` or a string \"{word}\""
                ),
            )),
        }
    }

    /// Consumes `[A-Za-z0-9_]*` and returns it.
    fn identifier(&mut self) -> &'a str {
        let from = self.at.pos;
        while let Some(b) = self.peek_byte() {
            if !(b.is_ascii_alphanumeric() || b == b'_') {
                break;
            }
            self.bump();
        }
        &self.src[from..self.at.pos]
    }

    /// The name after a `.` (already consumed, at `dot`): an identifier or `@"..."`.
    fn name(&mut self, dot: Position) -> Result<String, Error> {
        match self.peek_byte() {
            Some(b) if b.is_ascii_alphabetic() || b == b'_' => Ok(self.identifier().to_owned()),
            Some(b'@') if self.peek_byte_at(1) == Some(b'"') => {
                self.bump();
                self.string_lit()
            }
            _ => Err(Error::at(
                dot,
                format!(
                    "expected a name or `{{` after `.`, found {}",
                    self.describe_here()
                ),
            )),
        }
    }

    /// Whether the next item of a container is `.name =`, without consuming it.
    fn at_field(&mut self) -> bool {
        let saved = self.at;
        let dot = self.here();
        let found = self.peek_byte() == Some(b'.')
            && self.peek_byte_at(1) != Some(b'{')
            && {
                self.bump();
                self.name(dot).is_ok()
            }
            && {
                self.skip_trivia();
                self.peek_byte() == Some(b'=')
            };
        self.at = saved;
        found
    }

    /// A struct or list; `.{` is consumed and began at `start`.
    fn container(&mut self, start: Position) -> Result<Value, Error> {
        if self.depth >= MAX_DEPTH {
            return Err(Error::at(
                start,
                format!("nesting too deep: more than {MAX_DEPTH} levels of `.{{`"),
            ));
        }
        self.depth += 1;
        self.skip_trivia();
        let kind = if self.peek_byte() == Some(b'}') {
            self.bump();
            ValueKind::Struct(Vec::new())
        } else if self.at_field() {
            ValueKind::Struct(self.struct_fields(start)?)
        } else {
            ValueKind::List(self.list_items(start)?)
        };
        self.depth -= 1;
        Ok(Value {
            kind,
            span: self.span_from(start),
        })
    }

    fn unterminated(&self, start: Position, what: &str) -> Error {
        Error::at(
            start,
            format!("unterminated {what}: the `.{{` here is never closed, add a `}}`"),
        )
    }

    /// After an item: a `,` (then maybe `}`), or `}`. Returns true at the end.
    /// `field` names the struct field just read, for the message (lists pass `None`).
    fn after_item(
        &mut self,
        start: Position,
        what: &str,
        field: Option<&str>,
    ) -> Result<bool, Error> {
        self.skip_trivia();
        match self.peek_byte() {
            Some(b',') => {
                self.bump();
                self.skip_trivia();
                if self.peek_byte() == Some(b'}') {
                    self.bump();
                    return Ok(true);
                }
                if self.peek_byte().is_none() {
                    return Err(self.unterminated(start, what));
                }
                Ok(false)
            }
            Some(b'}') => {
                self.bump();
                Ok(true)
            }
            None => Err(self.unterminated(start, what)),
            Some(_) => {
                let item = match field {
                    Some(name) => format!("the value of `.{name}`"),
                    None => "a list item".to_owned(),
                };
                Err(Error::at(
                    self.here(),
                    format!(
                        "expected `,` or `}}` after {item}, found {}",
                        self.describe_here()
                    ),
                ))
            }
        }
    }

    fn struct_fields(&mut self, start: Position) -> Result<Vec<Field>, Error> {
        let mut fields = Vec::new();
        let mut seen: HashMap<String, Position> = HashMap::new();
        loop {
            self.skip_trivia();
            let name_start = self.here();
            if self.peek_byte() != Some(b'.') || self.peek_byte_at(1) == Some(b'{') {
                return Err(Error::at(
                    name_start,
                    format!(
                        "expected a field `.name = value` in this struct, found {}",
                        self.describe_here()
                    ),
                ));
            }
            self.bump();
            let name = self.name(name_start)?;
            let name_span = self.span_from(name_start);
            self.skip_trivia();
            if self.peek_byte() != Some(b'=') {
                return Err(Error::at(
                    self.here(),
                    format!(
                        "expected `=` after the field name `.{name}`, found {}: a struct holds only `.name = value` fields",
                        self.describe_here()
                    ),
                ));
            }
            self.bump();
            let value = self.value()?;
            let earlier = if fields.len() < SMALL_STRUCT {
                fields
                    .iter()
                    .find(|f: &&Field| f.name == name)
                    .map(|f| f.name_span.start)
            } else {
                if seen.is_empty() {
                    seen.extend(fields.iter().map(|f| (f.name.clone(), f.name_span.start)));
                }
                seen.get(&name).copied()
            };
            if let Some(first) = earlier {
                return Err(Error::at(
                    name_start,
                    format!(
                        "duplicate field `{name}`: it is already set at line {}, column {}; keep one of the two",
                        first.line, first.column
                    ),
                ));
            }
            if !seen.is_empty() {
                seen.insert(name.clone(), name_start);
            }
            fields.push(Field {
                name,
                name_span,
                value,
            });
            let name = fields.last().map(|f| f.name.as_str());
            if self.after_item(start, "struct", name)? {
                return Ok(fields);
            }
        }
    }

    fn list_items(&mut self, start: Position) -> Result<Vec<Value>, Error> {
        let mut items = Vec::new();
        loop {
            items.push(self.value()?);
            if self.after_item(start, "list", None)? {
                return Ok(items);
            }
            if self.at_field() {
                return Err(Error::at(
                    self.here(),
                    "a `.name = value` field inside a list: a `.{ }` is either all fields or all items",
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests;
