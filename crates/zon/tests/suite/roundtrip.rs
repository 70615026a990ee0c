//! Write-then-read: whatever the writer prints parses back to the same
//! value, over arbitrary value trees and over typed serde structs.

use std::collections::BTreeMap;

use chock_zon::{Field, Span, Value, ValueKind, from_str, parse, to_string};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z_][a-z0-9_]{0,8}",
        any::<String>(),
        Just("while".to_owned()),
        Just("_".to_owned()),
    ]
}

fn leaf() -> impl Strategy<Value = ValueKind> {
    prop_oneof![
        any::<i128>().prop_map(ValueKind::Int),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(ValueKind::Float),
        any::<bool>().prop_map(ValueKind::Bool),
        Just(ValueKind::Null),
        any::<char>().prop_map(|c| ValueKind::Char(c as u32)),
        any::<String>().prop_map(ValueKind::String),
        name().prop_map(ValueKind::EnumLiteral),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    leaf()
        .prop_map(Value::new)
        .prop_recursive(5, 64, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6)
                    .prop_map(|v| Value::new(ValueKind::List(v))),
                prop::collection::btree_map(name(), inner, 0..6).prop_map(|m| {
                    Value::new(ValueKind::Struct(
                        m.into_iter()
                            .map(|(name, value)| Field {
                                name,
                                name_span: Span::default(),
                                value,
                            })
                            .collect(),
                    ))
                }),
            ]
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn written_values_parse_back_the_same(v in value()) {
        let text = v.to_string();
        let back = parse(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(back, v);
    }

    #[test]
    fn written_structs_read_back_the_same(c in config()) {
        let text = to_string(&c).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let back: Config = from_str(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(back, c);
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum Mode {
    Fast,
    Wrapped(i64),
    Pair(u8, String),
    Named { on: bool, note: Option<String> },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Inner {
    bytes: Vec<u8>,
    ratio: f32,
    unit: (),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Config {
    name: String,
    port: u16,
    offset: i128,
    ratio: f64,
    letter: char,
    tags: Vec<String>,
    modes: Vec<Mode>,
    limits: BTreeMap<String, u32>,
    ids: BTreeMap<i64, bool>,
    extra: Option<i32>,
    inner: Option<Inner>,
    pair: (u64, String),
}

fn mode() -> impl Strategy<Value = Mode> {
    prop_oneof![
        Just(Mode::Fast),
        any::<i64>().prop_map(Mode::Wrapped),
        (any::<u8>(), any::<String>()).prop_map(|(a, b)| Mode::Pair(a, b)),
        (any::<bool>(), any::<Option<String>>()).prop_map(|(on, note)| Mode::Named { on, note }),
    ]
}

fn config() -> impl Strategy<Value = Config> {
    let finite64 = any::<f64>().prop_filter("finite", |f| f.is_finite());
    let finite32 = any::<f32>().prop_filter("finite", |f| f.is_finite());
    let inner = (any::<Vec<u8>>(), finite32).prop_map(|(bytes, ratio)| Inner {
        bytes,
        ratio,
        unit: (),
    });
    (
        (
            any::<String>(),
            any::<u16>(),
            any::<i128>(),
            finite64,
            any::<char>(),
        ),
        (
            prop::collection::vec(any::<String>(), 0..4),
            prop::collection::vec(mode(), 0..4),
            prop::collection::btree_map(any::<String>(), any::<u32>(), 0..4),
            prop::collection::btree_map(any::<i64>(), any::<bool>(), 0..4),
        ),
        (
            any::<Option<i32>>(),
            prop::option::of(inner),
            (any::<u64>(), any::<String>()),
        ),
    )
        .prop_map(
            |(
                (name, port, offset, ratio, letter),
                (tags, modes, limits, ids),
                (extra, inner, pair),
            )| {
                Config {
                    name,
                    port,
                    offset,
                    ratio,
                    letter,
                    tags,
                    modes,
                    limits,
                    ids,
                    extra,
                    inner,
                    pair,
                }
            },
        )
}

#[test]
fn float_edges_round_trip() {
    for f in [
        0.0,
        -0.0,
        f64::MIN_POSITIVE,
        5e-324,
        f64::MAX,
        f64::MIN,
        1e16,
        1e-7,
        0.1 + 0.2,
    ] {
        let text = to_string(&f).unwrap();
        let back: f64 = from_str(&text).unwrap();
        assert_eq!(back.to_bits(), f.to_bits(), "{text}");
        assert!(
            matches!(parse(&text).unwrap().kind, ValueKind::Float(_)),
            "{text}"
        );
    }
}

/// Text built from ZON's own punctuation, so most inputs get deep into the
/// parser before they fail.
fn zonish() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just(".{".to_owned()),
            Just("}".to_owned()),
            Just(".a = ".to_owned()),
            Just(", ".to_owned()),
            Just("\\\\x\n".to_owned()),
            Just("// c\n".to_owned()),
            "[-.{}=,\"'\\\\@a-z0-9_xupeE+ \n]{0,6}",
        ],
        0..24,
    )
    .prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn any_text_parses_or_errors_with_a_position(src in prop_oneof![any::<String>(), zonish()]) {
        match parse(&src) {
            Ok(v) => {
                let text = v.to_string();
                let back = parse(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
                prop_assert_eq!(back, v);
            }
            Err(e) => {
                prop_assert!(e.line() >= 1 && e.column() >= 1, "{}", e);
                prop_assert!(!e.message().is_empty());
            }
        }
    }
}
