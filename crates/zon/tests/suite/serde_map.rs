//! The serde mapping: which ZON shape each serde shape reads from and
//! writes to, including the forms configs lean on (internally tagged
//! enums, `.{}` as any empty container, `Spanned` fields).

use std::collections::BTreeMap;

use chock_zon::{Spanned, from_str, to_string};
use pretty_assertions::assert_eq;
use serde::{Deserialize, Serialize};

#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
enum Provider {
    Openai {
        base_url: String,
    },
    Anthropic {
        #[serde(default)]
        api_key_env: Option<String>,
    },
}

#[test]
fn internally_tagged_enums_read_an_enum_literal_tag() {
    let p: Provider =
        from_str(r#".{ .kind = .openai, .base_url = "http://127.0.0.1:8080/v1" }"#).unwrap();
    assert_eq!(
        p,
        Provider::Openai {
            base_url: "http://127.0.0.1:8080/v1".into()
        }
    );
    let p: Provider = from_str(".{ .kind = .anthropic }").unwrap();
    assert_eq!(p, Provider::Anthropic { api_key_env: None });
    let text = to_string(&p).unwrap();
    assert_eq!(from_str::<Provider>(&text).unwrap(), p);
}

#[test]
fn internally_tagged_unknown_kind_names_a_position() {
    let e = from_str::<Provider>(".{\n    .kind = .gemini,\n}").unwrap_err();
    assert_eq!((e.line(), e.column()), (2, 13));
    assert!(e.message().starts_with("unknown variant `gemini`"), "{e}");
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Shape {
    Point,
    Circle(f64),
    Pair(i32, i32),
    Rect { w: u32, h: u32 },
}

#[test]
fn externally_tagged_variants() {
    let shapes: Vec<Shape> =
        from_str(".{ .point, .{ .circle = 1.5 }, .{ .pair = .{ 1, -2 } }, .{ .rect = .{ .w = 2, .h = 3 } } }")
            .unwrap();
    assert_eq!(
        shapes,
        vec![
            Shape::Point,
            Shape::Circle(1.5),
            Shape::Pair(1, -2),
            Shape::Rect { w: 2, h: 3 }
        ]
    );
    let text = to_string(&shapes).unwrap();
    assert_eq!(
        text,
        ".{\n    .point,\n    .{\n        .circle = 1.5,\n    },\n    .{\n        .pair = .{\n            1,\n            -2,\n        },\n    },\n    .{\n        .rect = .{\n            .w = 2,\n            .h = 3,\n        },\n    },\n}\n"
    );
    assert_eq!(from_str::<Vec<Shape>>(&text).unwrap(), shapes);
}

#[test]
fn variant_shape_mismatches_are_explained() {
    let e = from_str::<Shape>(".circle").unwrap_err();
    assert_eq!(
        e.message(),
        "the variant `circle` carries a value: write `.{ .circle = ... }`"
    );
    let e = from_str::<Shape>(".{ .point = 1 }").unwrap_err();
    assert_eq!((e.line(), e.column()), (1, 13));
    assert_eq!(
        e.message(),
        "the variant `point` carries no value: write `.point`"
    );
    let e = from_str::<Shape>(".{ .point = .{}, .circle = 1.0 }").unwrap_err();
    assert!(e.message().contains("one field"), "{e}");
}

#[test]
fn empty_braces_read_as_any_empty_container() {
    #[derive(Debug, PartialEq, Deserialize, Default)]
    struct Empty {}
    assert_eq!(from_str::<Vec<u8>>(".{}").unwrap(), Vec::<u8>::new());
    assert_eq!(
        from_str::<BTreeMap<String, u8>>(".{}").unwrap(),
        BTreeMap::new()
    );
    assert_eq!(from_str::<Empty>(".{}").unwrap(), Empty {});
    from_str::<()>(".{}").unwrap();
}

#[test]
fn options_null_and_present() {
    #[derive(Debug, PartialEq, Deserialize, Serialize)]
    struct O {
        a: Option<u8>,
        #[serde(default)]
        b: Option<String>,
    }
    assert_eq!(
        from_str::<O>(".{ .a = null }").unwrap(),
        O { a: None, b: None }
    );
    assert_eq!(
        from_str::<O>(".{ .a = 3, .b = \"x\" }").unwrap(),
        O {
            a: Some(3),
            b: Some("x".into())
        }
    );
    assert_eq!(
        to_string(&O { a: None, b: None }).unwrap(),
        ".{\n    .a = null,\n    .b = null,\n}\n"
    );
}

#[test]
fn chars_read_as_char_or_integer() {
    assert_eq!(from_str::<char>("'é'").unwrap(), 'é');
    assert_eq!(from_str::<u32>("'\\u{1F600}'").unwrap(), 0x1F600);
    assert_eq!(from_str::<u8>("'a'").unwrap(), b'a');
    assert_eq!(to_string(&'\'').unwrap(), "'\\''\n");
}

#[test]
fn integers_widen_into_floats_and_fit_every_width() {
    assert_eq!(from_str::<f64>("3").unwrap(), 3.0);
    assert_eq!(
        from_str::<i128>("-170141183460469231731687303715884105728").unwrap(),
        i128::MIN
    );
    assert_eq!(from_str::<u64>("0xffff_ffff_ffff_ffff").unwrap(), u64::MAX);
    assert_eq!(from_str::<i8>("-128").unwrap(), i8::MIN);
    assert!(from_str::<u64>("-1").is_err());
}

#[test]
fn maps_with_quoted_and_integer_names() {
    let m: BTreeMap<String, u8> = from_str(".{ .plain = 1, .@\"with space\" = 2 }").unwrap();
    assert_eq!(m.get("with space"), Some(&2));
    let ports: BTreeMap<u16, String> = [(3000, "web".to_owned())].into();
    let text = to_string(&ports).unwrap();
    assert_eq!(text, ".{\n    .@\"3000\" = \"web\",\n}\n");
    assert_eq!(from_str::<BTreeMap<u16, String>>(&text).unwrap(), ports);
}

#[test]
fn spanned_fields_remember_where_they_were_written() {
    #[derive(Debug, Deserialize)]
    struct R {
        action: Spanned<String>,
        rules: Vec<Spanned<u16>>,
    }
    let r: R =
        from_str(".{\n    .action = \"net.serve.3000\",\n    .rules = .{ 1, 22 },\n}").unwrap();
    assert_eq!(r.action.value, "net.serve.3000");
    let s = r.action.span;
    assert_eq!(
        (s.start.line, s.start.column, s.end.line, s.end.column),
        (2, 15, 2, 31)
    );
    assert_eq!(s.start.offset, 17);
    assert_eq!(r.rules[1].value, 22);
    assert_eq!(
        (r.rules[1].span.start.line, r.rules[1].span.start.column),
        (3, 20)
    );
}

#[test]
fn spanned_type_errors_still_point_at_the_value() {
    #[derive(Debug, Deserialize)]
    #[expect(dead_code, reason = "only the error is looked at")]
    struct R {
        port: Spanned<u8>,
    }
    let e = from_str::<R>(".{\n    .port = 300,\n}").unwrap_err();
    assert_eq!((e.line(), e.column()), (2, 13));
}

#[test]
fn writing_refuses_what_zon_cannot_say() {
    assert!(to_string(&f64::NAN).unwrap_err().message().contains("NaN"));
    assert!(to_string(&f64::INFINITY).is_err());
    assert!(to_string(&u128::MAX).is_err());
    let m: BTreeMap<Vec<u8>, u8> = [(vec![1], 1)].into();
    assert!(to_string(&m).is_err());
}

#[test]
fn map_keys_that_print_the_same_are_refused() {
    #[derive(Serialize)]
    struct Twice {
        a: u8,
        #[serde(flatten)]
        rest: BTreeMap<String, u8>,
    }
    let t = Twice {
        a: 1,
        rest: [("a".to_owned(), 2)].into(),
    };
    let e = to_string(&t).unwrap_err();
    assert_eq!(
        e.to_string(),
        "cannot write the field `a` twice in one struct"
    );
}
