//! Shared helpers: temporary state directories, hand-written logs, and a
//! child process that holds a log's lock.

mod fixtures;
mod fold;
mod follow;
mod list;
mod reader;
mod writer;

use std::fs;
use std::path::{Path, PathBuf};

use chock_log::event::{TurnEnd, UserMessage};
use chock_log::{EventId, LogWriter, SessionId, StateDir};

/// A state directory in a temporary directory that lives as long as it.
pub(crate) struct TempState {
    pub(crate) _tmp: tempfile::TempDir,
    pub(crate) state: StateDir,
}

pub(crate) fn temp_state() -> TempState {
    let tmp = tempfile::tempdir().unwrap();
    let state = StateDir::at(tmp.path().join("state"));
    TempState { _tmp: tmp, state }
}

/// A [`temp_state`] and the path of a log `x/log.jsonl` in it, not yet written.
pub(crate) fn temp_log() -> (TempState, PathBuf) {
    let t = temp_state();
    let path = t.state.sessions().join("x/log.jsonl");
    (t, path)
}

/// A fresh session with `n` user messages, returning its id and log path.
pub(crate) fn session_with(state: &StateDir, n: u64) -> (SessionId, PathBuf) {
    let id = SessionId::new();
    let mut writer = LogWriter::create(state, &id).unwrap();
    for i in 0..n {
        writer
            .append(UserMessage {
                text: format!("message {i}"),
            })
            .unwrap();
    }
    writer.append(TurnEnd {}).unwrap();
    let path = state.log_path(&id);
    (id, path)
}

/// A line as the writer would write it, for hand-built logs.
pub(crate) fn line(id: u64, text: &str) -> String {
    format!(
        "{{\"id\":{id},\"at\":\"2026-11-29T19:27:36.123Z\",\"type\":\"user.message\",\"text\":\"{text}\"}}\n"
    )
}

pub(crate) fn ids(events: &[chock_log::RawEvent]) -> Vec<u64> {
    events.iter().map(|e| e.id.0).collect()
}

pub(crate) fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

pub(crate) fn after(n: u64) -> EventId {
    EventId(n)
}
