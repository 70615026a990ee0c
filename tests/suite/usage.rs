//! `chock usage`: tokens per model call and in all.

use super::session_logs::{FIXTURE_RUNNING, on_fixtures};

#[test]
fn usage_of_the_fixture_session() {
    let (_state, usage) = on_fixtures(&["usage", FIXTURE_RUNNING]);
    insta::assert_snapshot!(usage);
}
