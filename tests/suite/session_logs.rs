//! Helpers for the session-log commands: real logs written with the writer,
//! and the checked-in fixtures of chock-log copied into a state directory
//! (their ids and times are fixed, which keeps snapshots stable).

use std::path::{Path, PathBuf};

use chock_log::event::{
    AssistantMessage, PlanItem, PlanStatus, PlanUpdate, SessionOpen, TitleSet, Usage, UserMessage,
};
use chock_log::{LogWriter, SessionId, StateDir};

pub(crate) const FIXTURE_RUNNING: &str = "20261129-192736-123-7f3a9c1e";
pub(crate) const FIXTURE_ENDED: &str = "20261128-080000-000-00000001";

/// Copy chock-log's fixtures into `state` under their own session ids.
pub(crate) fn copy_fixtures(state: &Path) {
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../crates/log/tests/fixtures");
    for (id, name) in [
        (FIXTURE_RUNNING, "session-v1.jsonl"),
        (FIXTURE_ENDED, "ended-v1.jsonl"),
    ] {
        let dir = state.join("sessions").join(id);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(fixtures.join(name), dir.join("log.jsonl")).unwrap();
    }
}

/// A state directory holding the fixture sessions ([`copy_fixtures`]).
pub(crate) fn fixture_state() -> tempfile::TempDir {
    let state = tempfile::tempdir().unwrap();
    copy_fixtures(state.path());
    state
}

/// `chock <args>` on a [`fixture_state`], asserted to succeed: the state
/// directory and the command's stdout.
pub(crate) fn on_fixtures(args: &[&str]) -> (tempfile::TempDir, String) {
    let state = fixture_state();
    let out = super::kit::chock_out(state.path(), args);
    assert!(out.status.success(), "{}", stderr(&out));
    (state, stdout(&out))
}

/// A state directory and a project with one [`write_session`] whose writer
/// is gone: a log not ended that nobody owns. The session's id.
pub(crate) fn orphaned_session(title: &str) -> (tempfile::TempDir, tempfile::TempDir, SessionId) {
    let state = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let (id, writer) = write_session(state.path(), project.path(), title);
    drop(writer);
    (state, project, id)
}

/// Asserts that a finished process's stderr says `part`.
pub(crate) fn assert_stderr_says(out: &std::process::Output, part: &str) {
    let said = stderr(out);
    assert!(said.contains(part), "{said}");
}

/// A session written with the real writer: open, a title, a plan, one
/// model call. The writer is returned so a test can keep appending.
pub(crate) fn write_session(state: &Path, project: &Path, title: &str) -> (SessionId, LogWriter) {
    let state = StateDir::at(state);
    let id = SessionId::new();
    let mut w = LogWriter::create(&state, &id).unwrap();
    w.append(SessionOpen {
        session_id: id.clone(),
        project: project.to_owned(),
        model: "test-model".into(),
        pid: std::process::id(),
        chock_version: env!("CARGO_PKG_VERSION").into(),
        parent: None,
    })
    .unwrap();
    w.append(TitleSet {
        title: title.into(),
    })
    .unwrap();
    w.append(UserMessage {
        text: "do it".into(),
    })
    .unwrap();
    w.append(AssistantMessage {
        text: "done".into(),
        usage: Usage {
            input_tokens: 100,
            output_tokens: 7,
            ..Default::default()
        },
        ..AssistantMessage::default()
    })
    .unwrap();
    w.append(PlanUpdate {
        items: vec![
            PlanItem {
                text: "first".into(),
                status: PlanStatus::Done,
            },
            PlanItem {
                text: "second".into(),
                status: PlanStatus::Pending,
            },
        ],
    })
    .unwrap();
    (id, w)
}

pub(crate) fn stdout(out: &std::process::Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

pub(crate) fn stderr(out: &std::process::Output) -> String {
    String::from_utf8(out.stderr.clone()).unwrap()
}
