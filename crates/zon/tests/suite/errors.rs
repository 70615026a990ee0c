//! Error reports exactly as a person sees them: position, message, the
//! source line and a caret. Each bad input the issue lists is here, and
//! each asserts its line and column.

use chock_zon::{Error, from_str, parse};
use pretty_assertions::assert_eq;
use serde::Deserialize;

use super::types::{Project, Rule};

fn syntax(src: &str) -> Error {
    match parse(src) {
        Ok(v) => panic!("should not parse: {v:?}"),
        Err(e) => e,
    }
}

fn typed<T: serde::de::DeserializeOwned + std::fmt::Debug>(src: &str) -> Error {
    match from_str::<T>(src) {
        Ok(v) => panic!("should not read: {v:?}"),
        Err(e) => e,
    }
}

#[test]
fn syntax_error_missing_comma() {
    let e = syntax(".{\n    .action = \"lsp.*\"\n    .decision = .deny,\n}");
    assert_eq!((e.line(), e.column()), (3, 5));
    assert_eq!(
        e.to_string(),
        "line 3, column 5: expected `,` or `}` after the value of `.action`, found `.`\n    .decision = .deny,\n    ^"
    );
    assert_eq!(e.excerpt(), "    .decision = .deny,");
}

#[test]
fn unterminated_string() {
    let e = syntax(".{\n    .action = \"call.write_file,\n    .decision = .ask,\n}");
    assert_eq!((e.line(), e.column()), (2, 15));
    assert_eq!(
        e.to_string(),
        "line 2, column 15: unterminated string: add a closing `\"` before the end of the line (use `\\\\` lines for text over several lines)\n    .action = \"call.write_file,\n              ^"
    );
}

#[test]
fn unterminated_struct() {
    let e = syntax(".{\n    .policy = .{\n        .rules = .{},\n    },\n");
    assert_eq!((e.line(), e.column()), (1, 1));
    assert_eq!(
        e.to_string(),
        "line 1, column 1: unterminated struct: the `.{` here is never closed, add a `}`\n.{\n^"
    );
}

#[test]
fn unterminated_struct_after_a_multiline_string() {
    let e = syntax(".{\n    .note = .{ .text =\n        \\\\first line\n        \\\\second line\n");
    assert_eq!((e.line(), e.column()), (2, 13));
    assert_eq!(
        e.to_string(),
        "line 2, column 13: unterminated struct: the `.{` here is never closed, add a `}`\n    .note = .{ .text =\n            ^"
    );
}

#[test]
fn huge_number() {
    let e = syntax(".{ .port = 1000000000000000000000000000000000000000 }");
    assert_eq!((e.line(), e.column()), (1, 12));
    assert_eq!(
        e.to_string(),
        "line 1, column 12: integer literal too large: it does not fit in a 128-bit signed integer in the number literal `1000000000000000000000000000000000000000`\n.{ .port = 1000000000000000000000000000000000000000 }\n           ^"
    );
}

#[test]
fn bad_escape() {
    let e = syntax(".{ .path = \"C:\\dir\" }");
    assert_eq!((e.line(), e.column()), (1, 15));
    assert_eq!(
        e.to_string(),
        "line 1, column 15: invalid escape sequence `\\d`: ZON knows \\n \\r \\t \\\\ \\\" \\' \\xNN and \\u{NNNN}\n.{ .path = \"C:\\dir\" }\n              ^"
    );
}

#[test]
fn duplicate_field() {
    let e = syntax(".{\n    .action = \"a\",\n    .decision = .ask,\n    .action = \"b\",\n}");
    assert_eq!((e.line(), e.column()), (4, 5));
    assert_eq!(
        e.to_string(),
        "line 4, column 5: duplicate field `action`: it is already set at line 2, column 5; keep one of the two\n    .action = \"b\",\n    ^"
    );
}

#[test]
fn unknown_field_points_at_its_name() {
    let e = typed::<Rule>(".{\n    .action = \"lsp.*\",\n    .decison = .deny,\n}");
    assert_eq!((e.line(), e.column()), (3, 5));
    assert_eq!(
        e.to_string(),
        "line 3, column 5: unknown field `decison`, expected `action` or `decision`\n    .decison = .deny,\n    ^"
    );
}

#[test]
fn unknown_field_deep_inside_points_at_its_name() {
    let e = typed::<Project>(
        ".{ .policy = .{\n    .rules = .{},\n    .net = .{ .routr = .auto },\n} }",
    );
    assert_eq!((e.line(), e.column()), (3, 15));
    assert_eq!(
        e.message(),
        "unknown field `routr`, expected `router` or `background`"
    );
}

#[test]
fn unknown_variant_points_at_the_literal() {
    let e = typed::<Rule>(".{ .action = \"lsp.*\", .decision = .maybe }");
    assert_eq!((e.line(), e.column()), (1, 35));
    assert_eq!(
        e.to_string(),
        "line 1, column 35: unknown variant `maybe`, expected one of `deny`, `agent_then_human`, `ask`, `agent_review`, `allow`\n.{ .action = \"lsp.*\", .decision = .maybe }\n                                  ^"
    );
}

#[test]
fn wrong_type_points_at_the_value() {
    let e = typed::<Rule>(".{ .action = 42, .decision = .ask }");
    assert_eq!((e.line(), e.column()), (1, 14));
    assert_eq!(e.message(), "invalid type: integer `42`, expected a string");
}

#[test]
fn integer_out_of_range_for_the_field_names_the_position() {
    #[derive(Debug, Deserialize)]
    #[expect(dead_code, reason = "only the error is looked at")]
    struct Port {
        port: u8,
    }
    let e = typed::<Port>(".{\n    .port = 300,\n}");
    assert_eq!((e.line(), e.column()), (2, 13));
    assert_eq!(e.message(), "invalid value: integer `300`, expected u8");
}

#[test]
fn missing_field_points_at_the_struct() {
    let e = typed::<Rule>(".{\n    .action = \"x\",\n}");
    assert_eq!((e.line(), e.column()), (1, 1));
    assert_eq!(e.message(), "missing field `decision`");
    let e = typed::<Vec<Rule>>(".{\n    .{ .action = \"x\" },\n}");
    assert_eq!((e.line(), e.column()), (2, 5));
    assert_eq!(e.message(), "missing field `decision`");
}

#[test]
fn errors_from_a_value_tree_keep_positions_without_an_excerpt() {
    let v = parse(".{\n    .decision = .nope,\n}").unwrap();
    let e = chock_zon::from_value::<Rule>(&v).unwrap_err();
    assert_eq!((e.line(), e.column()), (2, 17));
    assert_eq!(e.excerpt(), "");
    assert!(
        e.to_string()
            .starts_with("line 2, column 17: unknown variant `nope`")
    );
}

#[test]
fn callers_can_report_their_own_checks_at_a_spanned_value() {
    #[derive(Debug, Deserialize)]
    struct R {
        action: chock_zon::Spanned<String>,
    }
    let src = ".{\n    .action = \"no.such.action\",\n}";
    let r: R = from_str(src).unwrap();
    let e = Error::at(
        r.action.span.start,
        format!("unknown action `{}`", r.action.value),
    )
    .with_source(src);
    assert_eq!(
        e.to_string(),
        "line 2, column 15: unknown action `no.such.action`\n    .action = \"no.such.action\",\n              ^"
    );
}
