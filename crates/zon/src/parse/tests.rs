//! Parser unit tests: each literal form, the container rules, and the
//! position every syntax error reports.

use super::*;

fn kind(src: &str) -> ValueKind {
    match parse(src) {
        Ok(v) => v.kind,
        Err(e) => panic!("{src:?} should parse: {e}"),
    }
}

fn err(src: &str) -> Error {
    match parse(src) {
        Ok(v) => panic!("{src:?} should not parse, got {v:?}"),
        Err(e) => e,
    }
}

fn at(src: &str) -> (u32, u32, String) {
    let e = err(src);
    (e.line(), e.column(), e.message().to_owned())
}

#[test]
fn integers_in_every_base_with_separators() {
    assert_eq!(kind("42"), ValueKind::Int(42));
    assert_eq!(kind("-42"), ValueKind::Int(-42));
    assert_eq!(kind("1_000_000"), ValueKind::Int(1_000_000));
    assert_eq!(kind("0xff_FF"), ValueKind::Int(0xffff));
    assert_eq!(kind("0o755"), ValueKind::Int(0o755));
    assert_eq!(kind("0b1010_1010"), ValueKind::Int(0b1010_1010));
    assert_eq!(kind("-0x10"), ValueKind::Int(-16));
    assert_eq!(kind("0"), ValueKind::Int(0));
}

#[test]
fn integer_limits_are_exact() {
    assert_eq!(kind(&i128::MAX.to_string()), ValueKind::Int(i128::MAX));
    assert_eq!(kind(&i128::MIN.to_string()), ValueKind::Int(i128::MIN));
    let (l, c, m) = at(".{ .n = 170141183460469231731687303846346303728 }");
    assert_eq!((l, c), (1, 9));
    assert!(m.starts_with("integer literal too large"), "{m}");
    let (_, _, m) = at("99999999999999999999999999999999999999999999999999999");
    assert!(m.starts_with("integer literal too large"), "{m}");
    let (_, _, m) = at("-170141183460469231731687303846346303729");
    assert!(m.starts_with("integer literal too large"), "{m}");
}

#[test]
fn bad_number_literals_are_refused() {
    for src in [
        "1__0", "1_", "0x", "0x_1", "012", "12abc", "0b102", "0o8", "1e", "1e+", "0X10", "1.5.3",
    ] {
        let e = err(src);
        assert_eq!((e.line(), e.column()), (1, 1), "{src}: {e}");
    }
}

#[test]
fn floats_decimal_and_hex() {
    assert_eq!(kind("1.5"), ValueKind::Float(1.5));
    assert_eq!(kind("-0.25"), ValueKind::Float(-0.25));
    assert_eq!(kind("1e3"), ValueKind::Float(1000.0));
    assert_eq!(kind("1.5E-3"), ValueKind::Float(1.5e-3));
    assert_eq!(kind("1_0.0_1"), ValueKind::Float(10.01));
    assert_eq!(kind("0x1.8p1"), ValueKind::Float(3.0));
    assert_eq!(kind("0x10p-4"), ValueKind::Float(1.0));
    let (_, _, m) = at("1e999");
    assert!(m.starts_with("float literal out of range"), "{m}");
    let (_, _, m) = at("inf");
    assert!(m.contains("not a ZON literal"), "{m}");
    let (_, _, m) = at("-inf");
    assert!(m.contains("expected a number after `-`"), "{m}");
}

#[test]
fn strings_and_escapes() {
    assert_eq!(
        kind(r#""a\n\r\t\\\"\'b""#),
        ValueKind::String("a\n\r\t\\\"'b".into())
    );
    assert_eq!(
        kind(r#""\x41\u{e9}\u{1F600}""#),
        ValueKind::String("Aé😀".into())
    );
    assert_eq!(kind(r#""\xc3\xa9""#), ValueKind::String("é".into()));
    assert_eq!(kind(r#""tab	in""#), ValueKind::String("tab\tin".into()));
    let (_, c, m) = at(r#""\xff""#);
    assert_eq!(c, 1);
    assert!(m.contains("not valid UTF-8"), "{m}");
    for bad in [
        r#""\q""#,
        r#""\x4""#,
        r#""\u{}""#,
        r#""\u{110000}""#,
        r#""\u{d800}""#,
        r#""\u1234""#,
    ] {
        let e = err(bad);
        assert_eq!(e.column(), 2, "{bad}: {e}");
        assert!(e.message().contains("escape"), "{bad}: {e}");
    }
}

#[test]
fn multiline_strings_join_lines_without_a_trailing_newline() {
    let src = ".{ .text =\n    \\\\first\n    \\\\  second \"quoted\" \\n\n    // a comment between\n    \\\\\n    , .n = 1 }";
    let v = parse(src).unwrap();
    assert_eq!(
        v.get("text").unwrap().as_str(),
        Some("first\n  second \"quoted\" \\n\n")
    );
    assert_eq!(v.get("n").unwrap().kind, ValueKind::Int(1));
    assert_eq!(kind("\\\\only\r\n"), ValueKind::String("only".into()));
}

#[test]
fn char_literals() {
    assert_eq!(kind("'a'"), ValueKind::Char('a' as u32));
    assert_eq!(kind(r"'\n'"), ValueKind::Char(10));
    assert_eq!(kind(r"'\u{1F600}'"), ValueKind::Char(0x1F600));
    assert_eq!(kind("'é'"), ValueKind::Char('é' as u32));
    assert_eq!(kind(r"'\''"), ValueKind::Char('\'' as u32));
    assert_eq!(kind(r"'\xff'"), ValueKind::Char(0xff));
    assert!(err("''").message().contains("empty character literal"));
    assert!(err("'ab'").message().contains("exactly one character"));
    assert!(err("'a").message().contains("exactly one character"));
}

#[test]
fn words_and_enum_literals() {
    assert_eq!(kind("true"), ValueKind::Bool(true));
    assert_eq!(kind("false"), ValueKind::Bool(false));
    assert_eq!(kind("null"), ValueKind::Null);
    assert_eq!(kind(".allow"), ValueKind::EnumLiteral("allow".into()));
    assert_eq!(
        kind(".@\"weird name\""),
        ValueKind::EnumLiteral("weird name".into())
    );
    let (_, _, m) = at("allow");
    assert!(m.contains("enum literal `.allow`"), "{m}");
}

#[test]
fn containers_structs_lists_and_empty() {
    assert_eq!(kind(".{}"), ValueKind::Struct(vec![]));
    assert_eq!(kind(".{ // nothing\n }"), ValueKind::Struct(vec![]));
    let list = parse(".{ 1, .a, \"s\", .{}, }").unwrap();
    assert_eq!(list.as_list().map(<[Value]>::len), Some(4));
    let list = parse(".{ .a, .b }").unwrap();
    assert_eq!(list.as_list().map(<[Value]>::len), Some(2));
    let s = parse(".{ .a = 1, .@\"b c\" = .{ .d = true } }").unwrap();
    assert_eq!(
        s.get("b c").and_then(|v| v.get("d")).map(|v| &v.kind),
        Some(&ValueKind::Bool(true))
    );
}

#[test]
fn spans_cover_values_and_names() {
    let v = parse(".{\n    .name = \"x\",\n}").unwrap();
    let f = v.field("name").unwrap();
    assert_eq!((f.name_span.start.line, f.name_span.start.column), (2, 5));
    assert_eq!((f.name_span.end.line, f.name_span.end.column), (2, 10));
    assert_eq!(
        (f.value.span.start.line, f.value.span.start.column),
        (2, 13)
    );
    assert_eq!(f.value.span.end.column, 16);
    assert_eq!((v.span.end.line, v.span.end.column), (3, 2));
}

#[test]
fn syntax_errors_point_at_the_problem() {
    let (l, c, m) = at(".{ .a = 1 .b = 2 }");
    assert_eq!((l, c), (1, 11));
    assert_eq!(m, "expected `,` or `}` after the value of `.a`, found `.`");
    let (l, c, m) = at(".{\n    .a = 1,\n    .a = 2,\n}");
    assert_eq!((l, c), (3, 5));
    assert_eq!(
        m,
        "duplicate field `a`: it is already set at line 2, column 5; keep one of the two"
    );
    let (l, c, m) = at(".{\n  .a = 1,\n");
    assert_eq!((l, c), (1, 1));
    assert!(m.starts_with("unterminated struct"), "{m}");
    let (l, c, m) = at(".{ 1, 2");
    assert_eq!((l, c), (1, 1));
    assert!(m.starts_with("unterminated list"), "{m}");
    let (l, c, m) = at(".{ .a, .b = 1 }");
    assert_eq!((l, c), (1, 8));
    assert!(m.contains("inside a list"), "{m}");
    let (l, c, m) = at(".{ .a = 1, 2 }");
    assert_eq!((l, c), (1, 12));
    assert!(m.starts_with("expected a field"), "{m}");
    let (_, _, m) = at("");
    assert_eq!(m, "expected a value, found the end of the input");
    let (l, c, _) = at("1 2");
    assert_eq!((l, c), (1, 3));
    let (_, c, m) = at(".{ .a = # }");
    assert_eq!(c, 9);
    assert_eq!(m, "expected a value, found `#`");
    let (_, _, m) = at(". x");
    assert!(m.contains("after `.`"), "{m}");
}

#[test]
fn nesting_is_capped_with_a_position() {
    let ok = ".{".repeat(MAX_DEPTH) + &"}".repeat(MAX_DEPTH);
    assert!(parse(&ok).is_ok());
    let deep = ".{".repeat(MAX_DEPTH + 1) + &"}".repeat(MAX_DEPTH + 1);
    let e = err(&deep);
    assert_eq!((e.line(), e.column()), (1, 2 * MAX_DEPTH as u32 + 1));
    assert!(e.message().starts_with("nesting too deep"));
    // Far deeper input fails the same way instead of overflowing the stack.
    assert!(parse(&".{".repeat(1_000_000)).is_err());
}

#[test]
fn a_byte_order_mark_and_comments_are_skipped() {
    assert_eq!(
        kind("\u{feff}// head\n.x // tail"),
        ValueKind::EnumLiteral("x".into())
    );
}

#[test]
fn duplicates_are_found_in_big_structs_too() {
    let mut src = String::from(".{\n");
    for i in 0..40 {
        src.push_str(&format!("    .f{i} = {i},\n"));
    }
    src.push_str("    .f3 = 0,\n}");
    let (l, c, m) = at(&src);
    assert_eq!((l, c), (42, 5));
    assert_eq!(
        m,
        "duplicate field `f3`: it is already set at line 5, column 5; keep one of the two"
    );
    src.insert_str(src.len() - 1, "    .f17 = 1,\n");
    let src = src.replace("    .f3 = 0,\n", "");
    let (l, _, m) = at(&src);
    assert_eq!(l, 42);
    assert!(
        m.starts_with("duplicate field `f17`: it is already set at line 19"),
        "{m}"
    );
}
