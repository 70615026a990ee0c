//! What the session tests share: the operator's config in a test's state
//! dir, finding the session a run made, and reading its log back as JSON.

use std::path::{Path, PathBuf};

use chock_log::{SessionId, StateDir};
use serde_json::Value;

/// Writes the operator's config.zon where `chock(state)` reads it.
pub(crate) fn write_config(state: &Path, text: &str) {
    let dir = state.join("config").join("chock");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.zon"), text).unwrap();
}

/// The sessions in `state` (none when no run has made the directory).
pub(crate) fn sessions(state: &Path) -> Vec<SessionId> {
    match std::fs::read_dir(state.join("sessions")) {
        Ok(entries) => entries
            .map(|e| SessionId::parse(&e.unwrap().file_name().to_string_lossy()).unwrap())
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// The log of the one session in `state`; panics unless there is exactly one.
pub(crate) fn only_log(state: &Path) -> PathBuf {
    let sessions = sessions(state);
    assert_eq!(sessions.len(), 1, "exactly one session: {sessions:?}");
    StateDir::at(state).log_path(&sessions[0])
}

/// A log's events, each line parsed as JSON.
pub(crate) fn log_values(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// The first event of `kind` recorded for tool call `call`.
pub(crate) fn of_call<'a>(events: &'a [Value], kind: &str, call: &str) -> Option<&'a Value> {
    events
        .iter()
        .find(|event| event["type"] == kind && event["call_id"] == call)
}

/// The session's workspace, as its first `workspace.open` names it.
pub(crate) fn workspace_dir(events: &[Value]) -> PathBuf {
    let open = events
        .iter()
        .find(|e| e["type"] == "workspace.open")
        .expect("a workspace.open event");
    PathBuf::from(open["dir"].as_str().unwrap())
}
