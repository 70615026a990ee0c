//! `chock log`: lines verbatim, from an id, following appends.

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use chock_log::event::{EndReason, SessionEnd, UserMessage};

use super::chock;
use super::kit::chock_out;
use super::session_logs::{
    FIXTURE_ENDED, assert_stderr_says, fixture_state, orphaned_session, stderr, stdout,
    write_session,
};

#[test]
fn prints_the_log_verbatim_and_from_an_id() {
    let state = tempfile::tempdir().unwrap();
    let proj = tempfile::tempdir().unwrap();
    let (id, w) = write_session(state.path(), proj.path(), "t");
    let file = std::fs::read_to_string(w.path()).unwrap();
    let out = chock_out(state.path(), &["log", id.as_str()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), file);
    let out = chock_out(state.path(), &["log", id.as_str(), "--from", "3"]);
    let want: String = file.lines().skip(3).map(|l| format!("{l}\n")).collect();
    assert_eq!(stdout(&out), want);
}

#[test]
fn follow_prints_appends_and_returns_when_the_session_ends() {
    let state = tempfile::tempdir().unwrap();
    let proj = tempfile::tempdir().unwrap();
    let (id, mut w) = write_session(state.path(), proj.path(), "t");
    let mut child = chock(state.path())
        .args(["log", id.as_str(), "--from", "5", "--follow"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    w.append(UserMessage {
        text: "late".into(),
    })
    .unwrap();
    let first = lines.next().unwrap().unwrap();
    assert!(
        first.starts_with("{\"id\":6,") && first.contains("late"),
        "{first}"
    );
    w.append(SessionEnd {
        reason: EndReason::Done,
        detail: String::new(),
    })
    .unwrap();
    let second = lines.next().unwrap().unwrap();
    assert!(second.contains("\"session.end\""), "{second}");
    assert!(lines.next().is_none());
    assert!(child.wait().unwrap().success());
}

#[test]
fn follow_stops_when_nobody_owns_an_unended_log() {
    let (state, _project, id) = orphaned_session("t");
    let out = chock_out(state.path(), &["log", id.as_str(), "--follow"]);
    assert!(out.status.success());
    assert_eq!(stdout(&out).lines().count(), 5);
    assert_stderr_says(&out, "the session is not running");
}

#[test]
fn a_damaged_line_is_reported_with_its_number_and_the_rest_printed() {
    let state = fixture_state();
    let path = state
        .path()
        .join("sessions")
        .join(FIXTURE_ENDED)
        .join("log.jsonl");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.insert_str(text.find("{\"id\":3,").unwrap(), "not json at all\n");
    std::fs::write(&path, &text).unwrap();
    let out = chock_out(state.path(), &["log", FIXTURE_ENDED]);
    assert!(out.status.success());
    assert_eq!(stdout(&out).lines().count(), 11);
    assert_stderr_says(&out, "line 3 is not a valid event");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
}

#[test]
fn unknown_and_malformed_ids_are_clear_errors() {
    let state = tempfile::tempdir().unwrap();
    for (arg, want) in [
        (
            "20261129-192736-123-00000000",
            "no session 20261129-192736-123-00000000",
        ),
        ("../../etc/passwd", "'../../etc/passwd' is not a session id"),
    ] {
        for cmd in ["log", "usage", "plan"] {
            let out = chock(state.path()).args([cmd, arg]).output().unwrap();
            assert_eq!(out.status.code(), Some(1), "{cmd} {arg}");
            let err = stderr(&out);
            assert!(
                err.contains(want) && err.contains("chock sessions"),
                "{cmd}: {err}"
            );
        }
    }
}
