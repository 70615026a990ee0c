//! `chock usage`: tokens per model call and in all.

use super::session_logs::{FIXTURE_RUNNING, on_fixtures};

#[test]
fn usage_of_the_fixture_session() {
    let (_state, usage) = on_fixtures(&["usage", FIXTURE_RUNNING]);
    insta::assert_snapshot!(usage);
}

#[test]
fn usage_json_of_the_fixture_session() {
    let (_state, usage) = on_fixtures(&["usage", FIXTURE_RUNNING, "--json"]);
    assert_eq!(usage.lines().count(), 1, "{usage}");
    let report: serde_json::Value = serde_json::from_str(&usage).unwrap();
    assert_eq!(report["total"]["total_tokens"], 2725);
    insta::assert_snapshot!(usage);
}
