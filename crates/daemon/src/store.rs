//! Reading session logs: where they are, the events after an id, a session's
//! row, and whether anyone holds the log's lock.
//!
//! The daemon only ever reads a log; the session's own process is its only
//! writer. Readers never lock, so ownership is learnt from `/proc/locks`
//! (the kernel's list of held `flock`s) rather than by trying the lock, which
//! could make a writer that is taking it fail.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// One complete event line of a log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LogEvent {
    pub(crate) id: u64,
    pub(crate) kind: String,
    /// The `reason` of a `session.end`.
    pub(crate) reason: Option<String>,
    pub(crate) line: String,
}

impl LogEvent {
    /// A `session.end` that is the session's last word. A `handover` ending
    /// is not: the next owner appends a new `session.open` and carries on.
    pub(crate) fn is_final(&self) -> bool {
        self.kind == "session.end" && !self.is_handover()
    }

    pub(crate) fn is_handover(&self) -> bool {
        self.kind == "session.end" && self.reason.as_deref() == Some("handover")
    }
}

#[derive(Deserialize)]
struct Head {
    id: u64,
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    reason: Option<serde_json::Value>,
}

/// The state directory's session logs.
#[derive(Debug, Clone)]
pub(crate) struct Store {
    state_dir: PathBuf,
}

impl Store {
    pub(crate) fn new(state_dir: PathBuf) -> Store {
        Store { state_dir }
    }

    pub(crate) fn state_dir(&self) -> &Path {
        &self.state_dir
    }

    pub(crate) fn sessions_dir(&self) -> PathBuf {
        self.state_dir.join("sessions")
    }

    pub(crate) fn log_path(&self, session: &str) -> PathBuf {
        self.sessions_dir().join(session).join("log.jsonl")
    }

    pub(crate) fn approve_socket(&self, session: &str) -> PathBuf {
        self.sessions_dir().join(session).join("approve.sock")
    }
}

/// A session id names a directory, so it may hold nothing that walks out
/// of one: letters, digits, `-`, `_` and `.`, not first.
pub(crate) fn check_session_id(id: &str) -> Result<(), String> {
    let ok = !id.is_empty()
        && id.len() <= 128
        && !id.starts_with('.')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "'{}' is not a session id: ids are letters, digits, '-', '_' and '.'",
            chock_control::sanitize(id)
        ))
    }
}

/// Complete lines from `offset` to the end of the file, and the offset just
/// past the last complete line. A final line without its newline is a torn
/// write in progress and is left for the next read; a line that is not an
/// event is skipped, because one bad line must not hide the rest.
pub(crate) fn read_from(path: &Path, offset: u64) -> std::io::Result<(Vec<LogEvent>, u64)> {
    let mut file = File::open(path)?;
    file.seek(SeekFrom::Start(offset))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    let complete = bytes
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |at| at + 1);
    let mut events = Vec::new();
    for raw in bytes[..complete].split(|&b| b == b'\n') {
        if raw.is_empty() {
            continue;
        }
        let Ok(line) = std::str::from_utf8(raw) else {
            tracing::warn!(path = %path.display(), "skipping a log line that is not UTF-8");
            continue;
        };
        match serde_json::from_str::<Head>(line) {
            Ok(head) => events.push(LogEvent {
                id: head.id,
                reason: match head.reason {
                    Some(serde_json::Value::String(reason)) => Some(reason),
                    _ => None,
                },
                kind: head.kind,
                line: line.to_owned(),
            }),
            Err(err) => {
                tracing::warn!(path = %path.display(), %err, "skipping a log line that is not an event");
            }
        }
    }
    Ok((events, offset + complete as u64))
}

/// The offset just past the log's last complete line, found from its tail
/// so a long log is not read whole.
pub(crate) fn end_offset(path: &Path) -> std::io::Result<u64> {
    const WINDOW: u64 = 64 << 10;
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    let start = len.saturating_sub(WINDOW);
    file.seek(SeekFrom::Start(start))?;
    let mut tail = Vec::new();
    file.read_to_end(&mut tail)?;
    match tail.iter().rposition(|&b| b == b'\n') {
        Some(at) => Ok(start + at as u64 + 1),
        // No newline in the window: a very long torn line, or no complete
        // line at all; the slow way settles it.
        None if start == 0 => Ok(0),
        None => read_from(path, 0).map(|(_, end)| end),
    }
}

/// The events with an id greater than `after`: "I already have this one".
pub(crate) fn read_after(path: &Path, after: u64) -> std::io::Result<Vec<LogEvent>> {
    let (events, _) = read_from(path, 0)?;
    Ok(events.into_iter().filter(|e| e.id > after).collect())
}

/// The pid holding an exclusive `flock` on `path`, if anyone does.
pub(crate) fn owner(path: &Path) -> Option<u32> {
    let meta = std::fs::metadata(path).ok()?;
    let dev = rustix::fs::Dev::from(meta.dev());
    let wanted = format!(
        "{:02x}:{:02x}:{}",
        rustix::fs::major(dev),
        rustix::fs::minor(dev),
        meta.ino()
    );
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    locks.lines().find_map(|line| {
        // `1: FLOCK  ADVISORY  WRITE 1234 fe:00:5678 0 EOF`; a waiter's
        // line carries `->` after the number and holds nothing yet.
        let fields: Vec<&str> = line.split_whitespace().collect();
        match fields.as_slice() {
            [_, "FLOCK", _, "WRITE", pid, file, ..] if *file == wanted => pid.parse().ok(),
            _ => None,
        }
    })
}

pub(crate) use chock_control::{ChildRow, SessionRow as Row};

#[derive(Deserialize, Default)]
struct Fields {
    #[serde(default)]
    at: String,
    #[serde(default)]
    project: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default)]
    request: Option<serde_json::Value>,
    #[serde(default)]
    request_id: Option<serde_json::Value>,
}

impl Fields {
    fn request_id(&self) -> Option<String> {
        let value = self.request_id.as_ref().or(self.request.as_ref())?;
        match value {
            serde_json::Value::String(s) => Some(s.clone()),
            serde_json::Value::Number(n) => Some(n.to_string()),
            _ => None,
        }
    }
}

/// Folds a session's events into its row.
pub(crate) fn fold_row(session: &str, events: &[LogEvent]) -> Row {
    let mut row = Row {
        id: session.to_owned(),
        status: "running".to_owned(),
        ..Row::default()
    };
    let mut pending = BTreeSet::new();
    for event in events {
        let fields: Fields = serde_json::from_str(&event.line).unwrap_or_default();
        if row.started_at.is_empty() {
            row.started_at = fields.at.clone();
        }
        row.last_event_id = event.id;
        match event.kind.as_str() {
            "session.open" => {
                // A new owner after a handover: the session runs again.
                row.status = "running".to_owned();
                row.reason = None;
                row.project = fields.project.unwrap_or_default();
                row.model = fields.model.or(row.model.take());
                if !fields.at.is_empty() {
                    row.started_at = fields.at;
                }
            }
            "title.set" => row.title = fields.title,
            "approval.request" => {
                if let Some(id) = fields.request_id() {
                    pending.insert(id);
                }
            }
            "approval.answer" => {
                if let Some(id) = fields.request_id() {
                    pending.remove(&id);
                }
            }
            "session.end" => {
                row.status = "ended".to_owned();
                row.reason = fields.reason;
            }
            _ => {}
        }
    }
    if row.status == "ended" {
        pending.clear();
    }
    row.pending_approvals = pending.into_iter().collect();
    row
}

/// Whether `session_project` (from the log) is the directory `project` names.
pub(crate) fn same_project(session_project: &str, project: &Path) -> bool {
    let theirs = Path::new(session_project);
    theirs == project || theirs.canonicalize().is_ok_and(|p| p == project)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(id: u64, kind: &str, rest: &str) -> LogEvent {
        let line = format!(r#"{{"id":{id},"at":"2026-11-29T19:00:0{id}Z","type":"{kind}"{rest}}}"#);
        LogEvent {
            id,
            kind: kind.to_owned(),
            reason: None,
            line,
        }
    }

    #[test]
    fn the_row_folds_open_title_approvals_and_end() {
        let events = [
            event(1, "session.open", r#","project":"/p","model":"m1""#),
            event(2, "title.set", r#","title":"Fix it""#),
            event(3, "approval.request", r#","request":"r1""#),
            event(4, "approval.request", r#","request":"r2""#),
            event(5, "approval.answer", r#","request":"r1","answer":"yes""#),
        ];
        let row = fold_row("s", &events);
        assert_eq!(row.project, "/p");
        assert_eq!(row.model.as_deref(), Some("m1"));
        assert_eq!(row.title.as_deref(), Some("Fix it"));
        assert_eq!(row.started_at, "2026-11-29T19:00:01Z");
        assert_eq!(row.status, "running");
        assert_eq!(row.pending_approvals, vec!["r2".to_owned()]);
        assert_eq!(row.last_event_id, 5);
        let mut ended = events.to_vec();
        ended.push(event(6, "session.end", r#","reason":"done""#));
        let row = fold_row("s", &ended);
        assert_eq!(
            (row.status.as_str(), row.reason.as_deref()),
            ("ended", Some("done"))
        );
        assert!(row.pending_approvals.is_empty());
    }

    #[test]
    fn session_ids_cannot_walk_out_of_the_sessions_dir() {
        for good in ["0193a0c4-1", "a.b_c"] {
            assert_eq!(check_session_id(good), Ok(()));
        }
        for bad in ["", "..", ".hidden", "a/b", "../etc", "a b", "a\tb"] {
            assert!(check_session_id(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn reads_complete_lines_skips_bad_ones_and_leaves_a_torn_tail() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        std::fs::write(
            &path,
            "{\"id\":1,\"type\":\"a\"}\nnot json\n{\"id\":2,\"type\":\"b\"}\n{\"id\":3,\"ty",
        )
        .unwrap();
        let (events, offset) = read_from(&path, 0).unwrap();
        assert_eq!(events.iter().map(|e| e.id).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(offset, 49);
        assert_eq!(read_after(&path, 1).unwrap().len(), 1);
        let (rest, _) = read_from(&path, offset).unwrap();
        assert!(rest.is_empty());
        assert_eq!(end_offset(&path).unwrap(), offset);
    }

    #[test]
    fn an_flock_holder_is_found_and_a_free_log_has_none() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        let file = File::create(&path).unwrap();
        assert_eq!(owner(&path), None);
        rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive).unwrap();
        assert_eq!(owner(&path), Some(std::process::id()));
        drop(file);
        assert_eq!(owner(&path), None);
    }
}
