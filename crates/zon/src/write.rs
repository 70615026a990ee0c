//! The writer: a [`Value`] tree as pretty ZON, four spaces an indent level,
//! one item a line, trailing commas. The output is meant to parse back to
//! the same tree, so strings and characters escape exactly what the parser
//! would not take literally, floats always print in a form that reads back
//! as a float and as the same `f64`, and names that are not plain Zig
//! identifiers are written `.@"..."`.

use std::fmt::{self, Write};

use crate::value::{Value, ValueKind};

/// Zig's keywords: a field or enum literal with one of these names has to be
/// quoted for Zig itself to read it.
const KEYWORDS: &[&str] = &[
    "addrspace",
    "align",
    "allowzero",
    "and",
    "anyframe",
    "anytype",
    "asm",
    "break",
    "callconv",
    "catch",
    "comptime",
    "const",
    "continue",
    "defer",
    "else",
    "enum",
    "errdefer",
    "error",
    "export",
    "extern",
    "fn",
    "for",
    "if",
    "inline",
    "linksection",
    "noalias",
    "noinline",
    "nosuspend",
    "opaque",
    "or",
    "orelse",
    "packed",
    "pub",
    "resume",
    "return",
    "struct",
    "suspend",
    "switch",
    "test",
    "threadlocal",
    "try",
    "union",
    "unreachable",
    "usingnamespace",
    "var",
    "volatile",
    "while",
];

/// Whether `name` can be written bare after a `.`.
pub(crate) fn is_plain_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    (first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name != "_"
        && !KEYWORDS.contains(&name)
}

pub(crate) fn write_name(out: &mut impl Write, name: &str) -> fmt::Result {
    out.write_char('.')?;
    if is_plain_identifier(name) {
        out.write_str(name)
    } else {
        out.write_char('@')?;
        write_string(out, name)
    }
}

pub(crate) fn write_string(out: &mut impl Write, s: &str) -> fmt::Result {
    out.write_char('"')?;
    for c in s.chars() {
        write_escaped(out, c, '"')?;
    }
    out.write_char('"')
}

fn write_escaped(out: &mut impl Write, c: char, quote: char) -> fmt::Result {
    match c {
        '\n' => out.write_str("\\n"),
        '\r' => out.write_str("\\r"),
        '\t' => out.write_str("\\t"),
        '\\' => out.write_str("\\\\"),
        c if c == quote => {
            out.write_char('\\')?;
            out.write_char(c)
        }
        // The parser refuses raw control characters, so they are escaped;
        // `\xNN` is a byte, so past ASCII only `\u{...}` keeps UTF-8 valid.
        c if c.is_control() && c.is_ascii() => write!(out, "\\x{:02x}", c as u32),
        c if c.is_control() => write!(out, "\\u{{{:x}}}", c as u32),
        c => out.write_char(c),
    }
}

/// A float that reads back as the same `f64` and as a float, not an integer.
/// `{:?}` prints the shortest round-tripping digits and keeps a `.0` or an
/// exponent, which is exactly that. NaN and infinities have no ZON literal;
/// [`to_string`](crate::to_string) refuses them before they get here.
fn write_float(out: &mut impl Write, f: f64) -> fmt::Result {
    write!(out, "{f:?}")
}

fn indent(out: &mut impl Write, level: usize) -> fmt::Result {
    for _ in 0..level {
        out.write_str("    ")?;
    }
    Ok(())
}

pub(crate) fn write_value(out: &mut impl Write, v: &Value, level: usize) -> fmt::Result {
    match &v.kind {
        ValueKind::Struct(fields) if fields.is_empty() => out.write_str(".{}"),
        ValueKind::List(items) if items.is_empty() => out.write_str(".{}"),
        ValueKind::Struct(fields) => {
            out.write_str(".{\n")?;
            for f in fields {
                indent(out, level + 1)?;
                write_name(out, &f.name)?;
                out.write_str(" = ")?;
                write_value(out, &f.value, level + 1)?;
                out.write_str(",\n")?;
            }
            indent(out, level)?;
            out.write_char('}')
        }
        ValueKind::List(items) => {
            out.write_str(".{\n")?;
            for item in items {
                indent(out, level + 1)?;
                write_value(out, item, level + 1)?;
                out.write_str(",\n")?;
            }
            indent(out, level)?;
            out.write_char('}')
        }
        ValueKind::EnumLiteral(name) => write_name(out, name),
        ValueKind::String(s) => write_string(out, s),
        ValueKind::Int(i) => write!(out, "{i}"),
        ValueKind::Float(f) => write_float(out, *f),
        ValueKind::Bool(b) => write!(out, "{b}"),
        ValueKind::Null => out.write_str("null"),
        ValueKind::Char(c) => match char::from_u32(*c) {
            Some(c) => {
                out.write_char('\'')?;
                write_escaped(out, c, '\'')?;
                out.write_char('\'')
            }
            // Not a Unicode scalar: only a hand-built tree can hold one, and
            // its number is the most faithful thing to write.
            None => write!(out, "{c}"),
        },
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_value(f, self, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_are_not_identifiers_are_quoted() {
        let mut s = String::new();
        for n in ["plain", "with space", "1st", "while", "_", "a_1", ""] {
            write_name(&mut s, n).unwrap();
            s.push(' ');
        }
        assert_eq!(
            s,
            r#".plain .@"with space" .@"1st" .@"while" .@"_" .a_1 .@"" "#
        );
    }

    #[test]
    fn strings_escape_quotes_backslashes_and_controls() {
        let mut s = String::new();
        write_string(&mut s, "a\"b\\c\nd\u{1}é'\u{85}").unwrap();
        assert_eq!(s, r#""a\"b\\c\nd\x01é'\u{85}""#);
    }

    #[test]
    fn floats_always_look_like_floats() {
        for (f, want) in [
            (1.0, "1.0"),
            (-0.0, "-0.0"),
            (1e100, "1e100"),
            (0.1, "0.1"),
            (1e-7, "1e-7"),
        ] {
            let mut s = String::new();
            write_float(&mut s, f).unwrap();
            assert_eq!(s, want);
        }
    }
}
