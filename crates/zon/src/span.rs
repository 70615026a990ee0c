//! Where things sit in the source: [`Position`], [`Span`], and [`Spanned`],
//! the serde wrapper that lets a typed config remember where each of its
//! values was written, so a later check (an unknown action name, a port out
//! of range) can still point at the line a person has to fix.
//!
//! `Spanned<T>` travels through serde as a struct with a private name and
//! private field names; only this crate's deserializer recognises that name
//! and answers with the span, so the trick costs nothing for other formats.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use serde::ser::{Serialize, Serializer};

/// A place in the source text. `line` and `column` are 1-based and the
/// column counts characters, not bytes; `offset` is the byte offset.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Position {
    pub line: u32,
    pub column: u32,
    pub offset: usize,
}

/// The stretch of source a value or name was written in: `start` is its
/// first character, `end` is just past its last one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Span {
    pub start: Position,
    pub end: Position,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

/// A deserialized value together with where it was written. Equality and
/// hashing look at the value alone: two configs that say the same thing are
/// equal wherever they said it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Spanned<T> {
    pub value: T,
    pub span: Span,
}

impl<T> Spanned<T> {
    pub fn new(value: T, span: Span) -> Self {
        Self { value, span }
    }

    pub fn into_inner(self) -> T {
        self.value
    }
}

impl<T> std::ops::Deref for Spanned<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T: PartialEq> PartialEq for Spanned<T> {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

impl<T: Eq> Eq for Spanned<T> {}

impl<T: std::hash::Hash> std::hash::Hash for Spanned<T> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.value.hash(state);
    }
}

pub(crate) const NAME: &str = "$__chock_zon_private_Spanned";
pub(crate) const FIELDS: &[&str] = &[
    "$__chock_zon_private_start_line",
    "$__chock_zon_private_start_column",
    "$__chock_zon_private_start_offset",
    "$__chock_zon_private_end_line",
    "$__chock_zon_private_end_column",
    "$__chock_zon_private_end_offset",
    "$__chock_zon_private_value",
];

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Spanned<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_struct(NAME, FIELDS, SpannedVisitor(std::marker::PhantomData))
    }
}

struct SpannedVisitor<T>(std::marker::PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for SpannedVisitor<T> {
    type Value = Spanned<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a value read by chock-zon (Spanned works only with chock_zon::from_str)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut numbers = [0u64; 6];
        for (i, want) in FIELDS[..6].iter().enumerate() {
            match map.next_key::<String>()? {
                Some(k) if k == *want => numbers[i] = map.next_value()?,
                _ => {
                    return Err(de::Error::custom(
                        "Spanned works only with chock_zon::from_str",
                    ));
                }
            }
        }
        match map.next_key::<String>()? {
            Some(k) if k == FIELDS[6] => {}
            _ => {
                return Err(de::Error::custom(
                    "Spanned works only with chock_zon::from_str",
                ));
            }
        }
        let value = map.next_value()?;
        let line = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
        let off = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        let span = Span {
            start: Position {
                line: line(numbers[0]),
                column: line(numbers[1]),
                offset: off(numbers[2]),
            },
            end: Position {
                line: line(numbers[3]),
                column: line(numbers[4]),
                offset: off(numbers[5]),
            },
        };
        Ok(Spanned { value, span })
    }
}

impl<T: Serialize> Serialize for Spanned<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(serializer)
    }
}
