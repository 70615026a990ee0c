//! ZON (Zig Object Notation) for Chock's configuration files: `chock.zon`,
//! `config.zon` and the org bundle. Text is parsed into a spanned [`Value`]
//! tree first and read into serde types from there, so that every error, a
//! syntax error or a type mismatch found later, can name the line and column
//! a person has to fix and show that line. Writing goes the other way,
//! through the same tree, and is guaranteed to read back to the same value.
//!
//! The supported subset and the serde mapping are described in `docs/zon.md`.
//!
//! ```
//! #[derive(serde::Deserialize, Debug)]
//! #[serde(rename_all = "snake_case")]
//! enum Decision { Deny, Ask, Allow }
//!
//! #[derive(serde::Deserialize, Debug)]
//! #[serde(deny_unknown_fields)]
//! struct Rule { action: String, decision: Decision }
//!
//! let rule: Rule = chock_zon::from_str(r#".{ .action = "lsp.*", .decision = .deny }"#).unwrap();
//! assert_eq!(rule.action, "lsp.*");
//!
//! let err = chock_zon::from_str::<Rule>(".{ .action = \"lsp.*\", .decision = .maybe }").unwrap_err();
//! assert_eq!((err.line(), err.column()), (1, 35));
//! assert!(err.to_string().starts_with("line 1, column 35: unknown variant `maybe`"));
//! ```

#![deny(clippy::print_stdout, clippy::print_stderr)]
#![forbid(unsafe_code)]

mod de;
mod error;
mod parse;
mod ser;
mod span;
mod value;
mod write;

pub use error::Error;
pub use parse::MAX_DEPTH;
pub use span::{Position, Span, Spanned};
pub use value::{Field, Value, ValueKind};

/// Parses ZON text into `T`. Errors carry the line, column and source line.
pub fn from_str<T: serde::de::DeserializeOwned>(src: &str) -> Result<T, Error> {
    let value = parse(src)?;
    from_value(&value).map_err(|e| e.with_source(src))
}

/// Parses ZON text into the spanned value tree.
pub fn parse(src: &str) -> Result<Value, Error> {
    parse::parse(src)
}

/// Reads a value tree into `T`. Errors carry the position of the offending
/// value or name; the excerpt is empty, since the tree does not hold the
/// source text (use [`from_str`], or [`Error`]'s position with your own copy).
pub fn from_value<T: serde::de::DeserializeOwned>(v: &Value) -> Result<T, Error> {
    T::deserialize(de::ValueDe { value: v }).map_err(|e| e.or_at(v.span.start))
}

/// Writes `v` as pretty ZON: four spaces an indent, one item a line,
/// trailing commas, a final newline. Fails on what ZON cannot say: NaN or
/// infinite floats, integers past `i128`, map keys that are not names.
pub fn to_string<T: serde::Serialize + ?Sized>(v: &T) -> Result<String, Error> {
    let value = to_value(v)?;
    let mut out = value.to_string();
    out.push('\n');
    Ok(out)
}

/// Turns `v` into a value tree (with empty spans), as [`to_string`] writes it.
pub fn to_value<T: serde::Serialize + ?Sized>(v: &T) -> Result<Value, Error> {
    v.serialize(ser::ValueSer)
}
