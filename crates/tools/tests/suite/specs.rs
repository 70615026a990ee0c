//! The tool specs the model is sent, pinned: every tool's name, description
//! and parameter schema must equal `fixtures/specs.json`, so a change to
//! what the model is told is seen and made on purpose.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

/// Every spec as the JSON object it is compared by, in `specs()` order.
fn specs_as_json() -> Value {
    chock_tools::specs()
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
fn specs_equal_the_fixture() {
    let fixture: Value = serde_json::from_str(include_str!("../fixtures/specs.json")).unwrap();
    assert_eq!(specs_as_json(), fixture);
}
