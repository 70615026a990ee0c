//! The daemon's view of the session logs, through `chock-log`: where they
//! are, the events after an id, a session's row from the fold, and whether
//! anyone holds a log's lock.
//!
//! The daemon only ever reads a log; the session's own process is its only
//! writer. Readers never lock, so ownership is learnt from `/proc/locks`
//! (`chock_log::locks`). What this module reads itself is small: the
//! envelope (`id`, `type`, `reason`) of lines `chock-log` returned, which is
//! what a watch needs to know where a session ends, and the id of the last
//! line from the log's tail, where a feed starts following.

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use chock_log::{EventHead, EventId, FoldedLog, SessionId, SessionRow, SessionState, StateDir};

/// How many bytes of events a connection holds at a time while it sends a
/// log on: the log is sent page by page, each page read after the one
/// before has been written to the client, so what a connection holds does
/// not grow with the log.
pub(crate) const PAGE_BYTES: usize = 64 << 10;
/// How many folded rows the cache keeps before it starts again.
const ROWS_KEPT: usize = 4096;

/// One complete event line of a log, with its head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LogEvent {
    pub(crate) head: EventHead,
    pub(crate) line: String,
}

impl LogEvent {
    fn parse(line: &str) -> Option<LogEvent> {
        Some(LogEvent {
            head: EventHead::parse(line)?,
            line: line.to_owned(),
        })
    }
}

/// The state directory's session logs.
#[derive(Debug)]
pub(crate) struct Store {
    state: StateDir,
    rows: Rows,
}

/// Folded rows by log, each kept while the log's length and modification
/// time are what they were when it was folded. One fold runs at a time:
/// a hundred watchers arriving together at a long log fold it once, and
/// the daemon's memory holds one fold's work, not a hundred.
#[derive(Debug, Default)]
struct Rows {
    kept: Mutex<HashMap<PathBuf, Kept>>,
    folding: Mutex<()>,
}

/// A log's length and modification time when it was folded, and the fold.
type Kept = (u64, Option<SystemTime>, SessionState);

impl Rows {
    fn fold(&self, path: &Path) -> Result<FoldedLog, chock_log::ReadError> {
        let stamp = || {
            std::fs::metadata(path)
                .map(|m| (m.len(), m.modified().ok()))
                .ok()
        };
        let cached = |stamp: Option<(u64, Option<SystemTime>)>| {
            let stamp = stamp?;
            let kept = lock(&self.kept);
            let (len, modified, state) = kept.get(path)?;
            ((*len, *modified) == stamp).then(|| FoldedLog {
                state: state.clone(),
                problems: Vec::new(),
            })
        };
        if let Some(hit) = cached(stamp()) {
            return Ok(hit);
        }
        let _one_at_a_time = lock(&self.folding);
        let before = stamp();
        if let Some(hit) = cached(before) {
            return Ok(hit);
        }
        let folded = chock_log::fold_row(path)?;
        for problem in &folded.problems {
            tracing::warn!(path = %path.display(), %problem, "session log");
        }
        // Kept only when nothing was appended while it was folded.
        if let Some((len, modified)) = before.filter(|b| stamp() == Some(*b)) {
            let mut kept = lock(&self.kept);
            if kept.len() >= ROWS_KEPT {
                kept.clear();
            }
            kept.insert(path.to_owned(), (len, modified, folded.state.clone()));
        }
        Ok(folded)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Every use is one insert, lookup or fold: a poisoned value is whole.
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Store {
    pub(crate) fn new(state_dir: PathBuf) -> Store {
        Store {
            state: StateDir::at(state_dir),
            rows: Rows::default(),
        }
    }

    /// A log folded for its row (without its conversation), from the cache
    /// when the log has not changed since.
    pub(crate) fn fold(&self, path: &Path) -> Result<FoldedLog, chock_log::ReadError> {
        self.rows.fold(path)
    }

    pub(crate) fn state(&self) -> &StateDir {
        &self.state
    }

    pub(crate) fn log_path(&self, session: &SessionId) -> PathBuf {
        self.state.log_path(session)
    }

    pub(crate) fn approve_socket(&self, session: &SessionId) -> PathBuf {
        self.state.approve_socket(session)
    }
}

/// A session id from a client, or the refusal that names it.
pub(crate) fn parse_session_id(text: &str) -> Result<SessionId, String> {
    SessionId::parse(text).map_err(|_| {
        format!(
            "'{}' is not a session id (ids look like 20261129-192736-123-7f3a9c1e): \
             'list <project directory>' shows the sessions",
            chock_control::sanitize(text)
        )
    })
}

/// One event line's envelope, or `None` for a line that is not an event.
pub(crate) fn parse_event(line: &str) -> Option<LogEvent> {
    LogEvent::parse(line)
}

/// The id of the log's last complete event, found from its tail so a long
/// log is not read whole; 0 for a log with no events.
pub(crate) fn last_id(path: &Path) -> Result<u64, chock_log::ReadError> {
    const WINDOW: u64 = 64 << 10;
    let tail = (|| {
        let mut file = File::open(path)?;
        let len = file.metadata()?.len();
        let start = len.saturating_sub(WINDOW);
        file.seek(SeekFrom::Start(start))?;
        let mut tail = Vec::new();
        file.read_to_end(&mut tail)?;
        std::io::Result::Ok((start, tail))
    })();
    if let Ok((start, tail)) = tail {
        if let Some(end) = tail.iter().rposition(|&b| b == b'\n') {
            let begin = tail[..end]
                .iter()
                .rposition(|&b| b == b'\n')
                .map(|at| at + 1);
            // A line that starts inside the window, or the file's first line.
            if let Some(begin) = begin.or((start == 0).then_some(0))
                && let Some(event) = std::str::from_utf8(&tail[begin..end])
                    .ok()
                    .and_then(EventHead::parse)
            {
                return Ok(event.id.0);
            }
        } else if start == 0 {
            return Ok(0);
        }
    }
    // A last line longer than the window, or not an event: the reader knows.
    chock_log::read_after(path, EventId(0)).map(|batch| batch.last_id.0)
}

/// One page of the events with an id greater than `after` ("I already
/// have this one"), about [`PAGE_BYTES`] long, found by `chock-log`'s
/// binary search rather than a scan from the start. An empty page is the
/// end of what the log holds now.
pub(crate) fn read_page(path: &Path, after: u64) -> Result<Vec<LogEvent>, chock_log::ReadError> {
    let batch = chock_log::read_page(path, EventId(after), PAGE_BYTES)?;
    for problem in &batch.problems {
        tracing::warn!(path = %path.display(), %problem, "session log");
    }
    Ok(batch
        .events
        .into_iter()
        .filter_map(|raw| LogEvent::parse(&raw.line))
        .collect())
}

/// The pid holding the log's lock, if anyone does and `/proc/locks` can name it.
pub(crate) fn owner(path: &Path) -> Option<u32> {
    chock_log::locks::owner_pid(path).ok().flatten()
}

/// Whether anyone holds the log's lock (also a holder in another pid namespace).
pub(crate) fn is_owned(path: &Path) -> bool {
    chock_log::locks::is_owned(path).unwrap_or(false)
}

/// The session's row, from the same fold every other view uses.
pub(crate) fn fold_row(
    store: &Store,
    session: &SessionId,
    path: &Path,
) -> Result<SessionRow, chock_log::ReadError> {
    let folded = store.fold(path)?;
    Ok(SessionRow::from_state(session, &folded.state))
}

/// Whether `session_project` (from the log) is the directory `project` names.
pub(crate) fn same_project(session_project: &Path, project: &Path) -> bool {
    session_project == project || session_project.canonicalize().is_ok_and(|p| p == project)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_cannot_walk_out_of_the_sessions_dir() {
        assert!(parse_session_id("20261129-192736-123-7f3a9c1e").is_ok());
        for bad in [
            "",
            "..",
            ".hidden",
            "a/b",
            "../etc",
            "s1",
            "20261129-192736-123-7f3a9c1e/..",
        ] {
            assert!(parse_session_id(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_last_id_comes_from_the_tail_and_skips_a_torn_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        std::fs::write(&path, "").unwrap();
        assert_eq!(last_id(&path).unwrap(), 0);
        std::fs::write(&path, "{\"id\":1,\"type\":\"a\"}\n").unwrap();
        assert_eq!(last_id(&path).unwrap(), 1);
        let long = "x".repeat(100 << 10);
        std::fs::write(
            &path,
            format!(
                "{{\"id\":1,\"at\":\"2026-11-29T19:00:00Z\",\"type\":\"a\"}}\n\
                 {{\"id\":2,\"at\":\"2026-11-29T19:00:00Z\",\"type\":\"b\",\"pad\":\"{long}\"}}\n{{\"id\":3,\"ty"
            ),
        )
        .unwrap();
        assert_eq!(last_id(&path).unwrap(), 2);
    }

    #[test]
    fn an_ending_by_handover_is_not_final() {
        let end = parse_event(r#"{"id":2,"type":"session.end","reason":"handover"}"#).unwrap();
        assert!(end.head.is_handover() && !end.head.ends_session());
        let end = parse_event(r#"{"id":3,"type":"session.end","reason":"done"}"#).unwrap();
        assert!(end.head.ends_session());
        assert_eq!(parse_event("not json"), None);
    }
}
