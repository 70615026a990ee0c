//! `chock plan`: the latest plan with statuses.

use super::kit::chock_out;
use super::session_logs::{FIXTURE_ENDED, FIXTURE_RUNNING, on_fixtures, stdout, write_session};

#[test]
fn plan_of_the_fixture_session() {
    let (state, plan) = on_fixtures(&["plan", FIXTURE_RUNNING]);
    insta::assert_snapshot!(plan);
    let out = chock_out(state.path(), &["plan", FIXTURE_ENDED]);
    assert_eq!(
        stdout(&out),
        format!("session {FIXTURE_ENDED} has no plan yet\n")
    );
}

#[test]
fn plan_of_a_session_written_by_the_writer() {
    let state = tempfile::tempdir().unwrap();
    let proj = tempfile::tempdir().unwrap();
    let (id, _w) = write_session(state.path(), proj.path(), "t");
    let out = chock_out(state.path(), &["plan", id.as_str()]);
    assert_eq!(stdout(&out), "[x] first\n[ ] second\n");
}

#[test]
fn plan_json_of_the_fixture_sessions() {
    let (state, plan) = on_fixtures(&["plan", FIXTURE_RUNNING, "--json"]);
    assert_eq!(plan.lines().count(), 1, "{plan}");
    let report: serde_json::Value = serde_json::from_str(&plan).unwrap();
    assert_eq!(report["items"][1]["status"], "in_progress");
    insta::assert_snapshot!(plan);
    let out = chock_out(state.path(), &["plan", FIXTURE_ENDED, "--json"]);
    assert_eq!(
        stdout(&out),
        format!("{{\"session\":\"{FIXTURE_ENDED}\",\"items\":[]}}\n")
    );
}
