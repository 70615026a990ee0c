//! Every session in a state directory, newest first, each as the
//! [`Summary`] a listing needs.
//!
//! A listing costs the same with ten thousand kept sessions as with ten:
//! it folds only the logs that changed since the last listing. What it
//! learnt is kept in the state directory's index (`index.rs`), keyed
//! by each log's inode, length and change times; the log stays the truth,
//! so an entry whose key no longer matches its log is folded again, and a
//! missing, truncated or garbled index is simply rebuilt.
//!
//! A session that cannot be read (a missing or unreadable log, a directory
//! whose name is not a session id) is skipped and reported, never allowed to
//! hide the others.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::event::EndReason;
use crate::fold::{SessionState, Status, Workspace, fold_row};
use crate::id::SessionId;
use crate::index::{Found, Index, Key};
use crate::locks::Snapshot;
use crate::paths::StateDir;
use crate::row::{RowStatus, SessionRow};

/// What a listing knows of one session: its row (as `chock sessions` and
/// the daemon's `list` show it, owner not yet looked up), the pid of its
/// latest owner and its workspace.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Summary {
    /// The row, with `owned` unknown.
    pub row: SessionRow,
    /// The pid of the latest owner.
    pub owner_pid: Option<u32>,
    /// The latest workspace.
    pub workspace: Option<Workspace>,
}

impl Summary {
    /// The summary of a folded session.
    pub fn of(id: &SessionId, state: &SessionState) -> Summary {
        Summary {
            row: SessionRow::from_state(id, state),
            owner_pid: state.owner_pid,
            workspace: state.workspace.clone(),
        }
    }

    /// Where the session stands, as the fold said it.
    pub fn status(&self) -> Status {
        match self.row.status {
            RowStatus::Ended => Status::Ended {
                reason: self
                    .row
                    .reason
                    .clone()
                    .unwrap_or(EndReason::Unknown(String::new())),
                detail: self.row.detail.clone().unwrap_or_default(),
            },
            RowStatus::Waiting => Status::WaitingForApproval,
            RowStatus::Retrying => {
                Status::WaitingForProvider(self.row.detail.clone().unwrap_or_default())
            }
            RowStatus::Running | RowStatus::Unknown(_) => Status::Running,
        }
    }

    /// The project directory, as the log recorded it.
    pub fn project(&self) -> Option<&Path> {
        Some(self.row.project.as_path()).filter(|p| !p.as_os_str().is_empty())
    }
}

/// One listed session.
#[derive(Clone, Debug)]
pub struct Listed {
    /// Its id.
    pub id: SessionId,
    /// What its log says.
    pub summary: Summary,
    /// What was looked at of its log.
    stamp: LogStamp,
}

impl Listed {
    /// Whether a process holds the log's lock, by one reading of
    /// `/proc/locks` shared by every session of a listing.
    pub fn owned(&self, locks: &Snapshot) -> bool {
        self.stamp.owned(locks)
    }

    /// The row with `owned` filled in from `locks`, one reading of
    /// `/proc/locks` for the whole listing, and [`SessionRow::settled`].
    pub fn into_row(self, locks: &mut LazyLocks) -> SessionRow {
        let owned = locks.get().map(|locks| self.owned(locks));
        SessionRow {
            owned,
            ..self.summary.row
        }
        .settled()
    }
}

/// What a listing looked at of one log: the index's key (its inode, length
/// and change times) and its device, to find its lock holder by. Two equal
/// stamps are one state of the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogStamp {
    key: Key,
    dev: u64,
}

impl LogStamp {
    fn of(stat: &rustix::fs::Stat) -> LogStamp {
        LogStamp {
            key: Key::of(stat),
            dev: stat.st_dev,
        }
    }

    /// Whether a process holds the log's lock, by `locks`.
    pub fn owned(&self, locks: &Snapshot) -> bool {
        locks.holds(self.dev, self.key.ino())
    }

    /// The stamp of the log at `path`, as a listing takes it.
    pub fn of_log(path: &Path) -> std::io::Result<LogStamp> {
        Ok(LogStamp::of(&rustix::fs::stat(path)?))
    }
}

/// `/proc/locks`, read once, the first time a listing needs it, or read
/// ahead on a thread of its own ([`LazyLocks::ahead`]): a reading waits for
/// the kernel's file-lock semaphore to change hands, about 10 ms of
/// sleeping on this kernel, which a listing's own work can overlap.
#[derive(Debug, Default)]
pub struct LazyLocks {
    reading: Option<std::thread::JoinHandle<Option<Snapshot>>>,
    read: Option<Option<Snapshot>>,
}

impl LazyLocks {
    /// Starts reading `/proc/locks` now, on a thread, for a caller that
    /// will need it after work of its own (read in place when no thread
    /// can be started).
    pub fn ahead() -> LazyLocks {
        LazyLocks {
            reading: std::thread::Builder::new()
                .name("chock-locks".to_owned())
                .spawn(|| Snapshot::read().ok())
                .ok(),
            read: None,
        }
    }

    /// The snapshot, or `None` when `/proc/locks` cannot be read.
    pub fn get(&mut self) -> Option<&Snapshot> {
        let reading = self.reading.take();
        self.read
            .get_or_insert_with(|| match reading {
                Some(reading) => reading.join().ok().flatten(),
                None => Snapshot::read().ok(),
            })
            .as_ref()
    }
}

/// The result of [`list_sessions`].
#[derive(Debug, Default)]
pub struct ListedSessions {
    /// Sessions, newest first.
    pub sessions: Vec<Listed>,
    /// Entries that were skipped: the path and why.
    pub skipped: Vec<(PathBuf, String)>,
}

/// Every session under `state`, newest first; with `project`, only the
/// sessions of that project directory.
pub fn list_sessions(state: &StateDir, project: Option<&Path>) -> ListedSessions {
    // The index is read and parsed on a second thread while this one lists
    // the directory and stats every log: the two are a listing's two big
    // costs and need nothing of each other.
    std::thread::scope(|scope| {
        let index = std::thread::Builder::new()
            .name("chock-index".to_owned())
            .spawn_scoped(scope, || Index::load(state));
        let stats = stat_logs(state);
        let index = match index {
            Ok(thread) => thread.join().unwrap_or_else(|_| Index::empty()),
            // No second thread to be had: read it here.
            Err(_) => Index::load(state),
        };
        summarise(state, project, stats, index)
    })
}

/// The first half of [`list_sessions`]: every session's log statted,
/// newest first, for a caller that remembers rows of its own and needs a
/// summary only of the logs whose [`LogStamp`] changed. [`list_statted`]
/// is the second half.
pub fn stat_sessions(state: &StateDir) -> Statted {
    Statted(stat_logs(state))
}

/// Every session's log, statted: [`stat_sessions`].
#[derive(Debug)]
pub struct Statted(Stats);

impl Statted {
    /// Each session's id and its log's stamp, newest first.
    pub fn logs(&self) -> impl ExactSizeIterator<Item = (&SessionId, LogStamp)> {
        self.0
            .logs
            .iter()
            .map(|(id, stat)| (id, LogStamp::of(stat)))
    }

    /// The entries that were skipped: the path and why.
    pub fn skipped(&self) -> &[(PathBuf, String)] {
        &self.0.skipped
    }
}

/// The second half of [`list_sessions`], for every project: the summary
/// of every log [`stat_sessions`] statted, from the index where its key
/// still matches and folded where not; the skipped entries are the stats'
/// and the summaries'.
pub fn list_statted(state: &StateDir, statted: Statted) -> ListedSessions {
    summarise(state, None, statted.0, Index::load(state))
}

/// Every session's id with its log's `stat`, newest first, and what was
/// skipped.
#[derive(Debug)]
struct Stats {
    logs: Vec<(SessionId, rustix::fs::Stat)>,
    skipped: Vec<(PathBuf, String)>,
    /// Whether the sessions directory was read: an index is written back
    /// only from a listing that saw it.
    read: bool,
}

fn stat_logs(state: &StateDir) -> Stats {
    let mut stats = Stats {
        logs: Vec::new(),
        skipped: Vec::new(),
        read: false,
    };
    let Some(ids) = session_ids(state, &mut stats.skipped) else {
        return stats;
    };
    let sessions = state.sessions();
    let dir = match rustix::fs::open(
        &sessions,
        rustix::fs::OFlags::PATH | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    ) {
        Ok(dir) => dir,
        Err(e) => {
            let e = std::io::Error::from(e);
            stats
                .skipped
                .push((sessions, format!("cannot list sessions: {e}")));
            return stats;
        }
    };
    stats.read = true;
    stats.logs.reserve(ids.len());
    // A stat is a path walk in the kernel, about 2 µs: ten thousand of
    // them are a listing's biggest cost, so a long list is statted in two
    // halves at once (in order, each half's results after the other's).
    let (first, second) = if ids.len() >= PARALLEL_STATS {
        ids.split_at(ids.len() / 2)
    } else {
        (&ids[..], &[][..])
    };
    let halves = std::thread::scope(|scope| {
        let other = (!second.is_empty())
            .then(|| {
                std::thread::Builder::new()
                    .name("chock-stat".to_owned())
                    .spawn_scoped(scope, || stat_each(state, &dir, second))
                    .ok()
            })
            .flatten();
        let first = stat_each(state, &dir, first);
        (first, other.and_then(|thread| thread.join().ok()))
    });
    // No second thread to be had: the second half here.
    let second = halves.1.unwrap_or_else(|| stat_each(state, &dir, second));
    for half in [halves.0, second] {
        stats.logs.extend(half.logs);
        stats.skipped.extend(half.skipped);
    }
    stats
}

/// From how many sessions a listing stats its logs on two threads.
const PARALLEL_STATS: usize = 2048;

/// Stats each of `ids`' logs, relative to the sessions directory `dir`:
/// one short path walk each, the path written into one buffer.
fn stat_each(state: &StateDir, dir: &rustix::fd::OwnedFd, ids: &[SessionId]) -> Stats {
    let mut stats = Stats {
        logs: Vec::with_capacity(ids.len()),
        skipped: Vec::new(),
        read: true,
    };
    let mut path = Vec::with_capacity(64);
    for id in ids {
        path.clear();
        path.extend_from_slice(id.as_str().as_bytes());
        path.extend_from_slice(b"/log.jsonl\0");
        // A session id has no NUL in it: it parsed as one.
        let stat = std::ffi::CStr::from_bytes_with_nul(&path)
            .map_err(|_| rustix::io::Errno::INVAL)
            .and_then(|name| rustix::fs::statat(dir, name, rustix::fs::AtFlags::empty()));
        match stat {
            Ok(stat) => stats.logs.push((id.clone(), stat)),
            Err(e) => {
                let path = state.log_path(id);
                let why = if e == rustix::io::Errno::NOENT {
                    format!("no session log at {}", path.display())
                } else {
                    let e = std::io::Error::from(e);
                    format!("cannot read the session log {}: {e}", path.display())
                };
                stats.skipped.push((path, why));
            }
        }
    }
    stats
}

/// Each statted log's summary, from the index where its key still matches
/// and folded where not; the index written back when it learnt something.
fn summarise(
    state: &StateDir,
    project: Option<&Path>,
    stats: Stats,
    mut index: Index,
) -> ListedSessions {
    let read = stats.read;
    let mut listed = ListedSessions {
        sessions: Vec::with_capacity(stats.logs.len()),
        skipped: stats.skipped,
    };
    let mut found = Vec::with_capacity(stats.logs.len());
    let mut stamps = Vec::with_capacity(stats.logs.len());
    for (id, stat) in stats.logs {
        let key = Key::of(&stat);
        // The row fold keeps none of the conversation: what a listing
        // holds does not grow with a log's length.
        let summary = index.take(&id, key).unwrap_or_else(|| {
            fold_row(&state.log_path(&id))
                .map(|f| Summary::of(&id, &f.state))
                .map_err(|e| e.to_string())
        });
        stamps.push(LogStamp::of(&stat));
        found.push(Found { id, key, summary });
    }
    if read {
        index.save(state, &found);
    }
    // The project is canonicalised once; a log records its project as the
    // session canonicalised it, so theirs is compared as written.
    let want = project.map(|p| (fs::canonicalize(p).unwrap_or_else(|_| p.to_owned()), p));
    for (f, stamp) in found.into_iter().zip(stamps) {
        match f.summary {
            Ok(summary) => {
                if let Some((canonical, given)) = &want {
                    let theirs = summary.project();
                    if theirs != Some(canonical.as_path()) && theirs != Some(*given) {
                        continue;
                    }
                }
                listed.sessions.push(Listed {
                    id: f.id,
                    summary,
                    stamp,
                });
            }
            Err(why) => listed.skipped.push((state.log_path(&f.id), why)),
        }
    }
    listed
}

/// The session ids under `state`, newest first; `None` when there is no
/// sessions directory to list.
fn session_ids(state: &StateDir, skipped: &mut Vec<(PathBuf, String)>) -> Option<Vec<SessionId>> {
    let dir = state.sessions();
    let entries = match fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            skipped.push((dir, format!("cannot list sessions: {e}")));
            return None;
        }
    };
    let mut ids = Vec::new();
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                skipped.push((dir.clone(), format!("cannot list sessions: {e}")));
                continue;
            }
        };
        let name = entry.file_name();
        match name.to_str().map(SessionId::parse) {
            Some(Ok(id)) => ids.push(id),
            _ => skipped.push((
                entry.path(),
                "not a session directory (its name is not a session id)".to_owned(),
            )),
        }
    }
    ids.sort_unstable_by(|a, b| b.cmp(a));
    Some(ids)
}
