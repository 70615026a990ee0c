//! The tool specs the model is sent, pinned: every tool's name, description
//! and parameter schema, as derived from its argument type, must equal
//! `src/specs.json`, which is what a session sends, so a change to what the
//! model is told is seen and made on purpose. After such a change, write the
//! file anew with `CHOCK_WRITE_SPECS=1 cargo test -p chock-tools specs`.

use chock_providers::ToolSpec;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

/// Specs as the JSON array `specs.json` holds.
fn as_json(specs: Vec<ToolSpec>) -> Value {
    specs
        .into_iter()
        .map(|spec| {
            json!({
                "name": spec.name,
                "description": spec.description,
                "parameters": spec.parameters,
            })
        })
        .collect()
}

#[test]
fn the_derived_specs_are_the_ones_a_session_sends() {
    let derived = as_json(chock_tools::derived_specs());
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/src/specs.json");
    if std::env::var_os("CHOCK_WRITE_SPECS").is_some() {
        let mut text = serde_json::to_string_pretty(&derived).unwrap();
        text.push('\n');
        std::fs::write(file, text).unwrap();
    }
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    assert_eq!(derived, stored, "specs.json is not what the types derive");
    assert_eq!(as_json(chock_tools::specs()), stored);
}
