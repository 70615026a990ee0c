//! `chock usage`: tokens per model call and in all.

use super::kit::chock_out;
use super::session_logs::{FIXTURE_RUNNING, copy_fixtures, stderr, stdout};

#[test]
fn usage_of_the_fixture_session() {
    let state = tempfile::tempdir().unwrap();
    copy_fixtures(state.path());
    let out = chock_out(state.path(), &["usage", FIXTURE_RUNNING]);
    assert!(out.status.success(), "{}", stderr(&out));
    insta::assert_snapshot!(stdout(&out));
}
