//! Sessions that may still need a person, kept so that a new session can
//! say which ones without reading every log of the state directory.
//!
//! `index/unsettled/` holds one small file per session whose latest owner
//! opened it and has not yet ended it `done` or handed it over: the owner's
//! pid and the start time of that process (so a reused pid is not taken for
//! the owner) and the project. The log's writer keeps it current: a
//! `session.open` writes the file, a `session.end` that is `done` or
//! `handover` removes it. What is left is the sessions still running and the
//! ones that ended otherwise or whose process died, which is what `chock run`
//! reports at its start; it removes the file of any session it finds settled
//! after all (its workspace applied or gone).
//!
//! A state directory from before this file existed has no `.seeded` mark;
//! the first reader lists every session once, writes a file for each one
//! not settled, and then the mark.

use std::fs;
use std::path::{Path, PathBuf};

use crate::event::{EndReason, EventBody};
use crate::id::SessionId;
use crate::paths::{StateDir, write_private};

/// Who last opened an unsettled session, and for which project.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsettled {
    /// The session.
    pub id: SessionId,
    /// The owner's pid.
    pub pid: u32,
    /// When the owner's process started, in clock ticks since boot.
    pub started: u64,
    /// The session's project directory.
    pub project: PathBuf,
}

impl Unsettled {
    /// Whether the process that opened the session is still alive: the
    /// same pid, started at the same moment.
    pub fn owner_alive(&self) -> bool {
        process_start(self.pid) == Some(self.started)
    }
}

fn dir_of(root: &Path) -> PathBuf {
    root.join("index").join("unsettled")
}

/// The mark file of the session whose log is at `log`, when the log sits
/// where a state directory puts one (`<root>/sessions/<id>/log.jsonl`).
fn mark_of(log: &Path) -> Option<PathBuf> {
    let session = log.parent()?;
    let sessions = session.parent()?;
    if sessions.file_name()? != "sessions" {
        return None;
    }
    let id = session.file_name()?.to_str()?;
    SessionId::parse(id).ok()?;
    Some(dir_of(sessions.parent()?).join(id))
}

/// What the log's writer does after appending `body` to `log`: a
/// `session.open` marks the session unsettled, a `done` or `handover`
/// ending settles it. Best effort: the index is never needed.
pub(crate) fn after_append(log: &Path, body: &EventBody) {
    let Some(mark) = mark_of(log) else { return };
    match body {
        EventBody::SessionOpen(open) => {
            let pid = std::process::id();
            let Some(started) = process_start(pid) else {
                return;
            };
            let text = format!("{pid} {started}\n{}\n", open.project.display());
            let _ = write_mark(&mark, &text);
        }
        EventBody::SessionEnd(end)
            if matches!(end.reason, EndReason::Done | EndReason::Handover) =>
        {
            let _ = fs::remove_file(&mark);
        }
        _ => {}
    }
}

fn write_mark(mark: &Path, text: &str) -> std::io::Result<()> {
    write_private(mark, text.as_bytes())
}

/// Every unsettled session of `state`, and whether the state directory had
/// been seeded (`false`: the caller lists every session once and calls
/// [`seed`]).
pub fn read(state: &StateDir) -> (Vec<Unsettled>, bool) {
    let dir = dir_of(state.root());
    let seeded = dir.join(".seeded").exists();
    let Ok(entries) = fs::read_dir(&dir) else {
        return (Vec::new(), seeded);
    };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(Ok(id)) = name.to_str().map(SessionId::parse) else {
            continue;
        };
        let text = fs::read_to_string(entry.path()).unwrap_or_default();
        let mut lines = text.lines();
        let mut owner = lines.next().unwrap_or_default().split(' ');
        let pid = owner.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        let started = owner.next().and_then(|s| s.parse().ok()).unwrap_or(0);
        let project = PathBuf::from(lines.next().unwrap_or_default());
        found.push(Unsettled {
            id,
            pid,
            started,
            project,
        });
    }
    found.sort_unstable_by(|a, b| b.id.cmp(&a.id));
    (found, seeded)
}

/// Mark each of `sessions` (id and project) unsettled with no live owner,
/// then mark the state directory seeded.
pub fn seed<'a>(state: &StateDir, sessions: impl IntoIterator<Item = (&'a SessionId, &'a Path)>) {
    let dir = dir_of(state.root());
    for (id, project) in sessions {
        let _ = write_mark(
            &dir.join(id.as_str()),
            &format!("0 0\n{}\n", project.display()),
        );
    }
    let _ = write_mark(&dir.join(".seeded"), "");
}

/// Forget `id`: it needs nobody any more.
pub fn settle(state: &StateDir, id: &SessionId) {
    let _ = fs::remove_file(dir_of(state.root()).join(id.as_str()));
}

/// When process `pid` started, in clock ticks since boot (`/proc/<pid>/stat`,
/// field 22).
fn process_start(pid: u32) -> Option<u64> {
    if pid == 0 {
        return None;
    }
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}
