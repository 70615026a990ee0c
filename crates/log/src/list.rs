//! Every session in a state directory, folded, newest first.
//!
//! A session that cannot be read (a missing or unreadable log, a directory
//! whose name is not a session id) is skipped and reported, never allowed to
//! hide the others.

use std::fs;
use std::path::{Path, PathBuf};

use crate::fold::{FoldedLog, SessionState, fold_log};
use crate::id::SessionId;
use crate::paths::StateDir;
use crate::reader::ReadError;

/// The result of [`list_sessions`].
#[derive(Debug, Default)]
pub struct ListedSessions {
    /// Sessions, newest first.
    pub sessions: Vec<(SessionId, SessionState)>,
    /// Entries that were skipped: the path and why.
    pub skipped: Vec<(PathBuf, String)>,
}

/// Fold every session under `state`, newest first; with `project`, only the
/// sessions of that project directory.
pub fn list_sessions(state: &StateDir, project: Option<&Path>) -> ListedSessions {
    list_sessions_with(state, project, fold_log)
}

/// [`list_sessions`] with each log folded by `fold`: the daemon passes the
/// row fold ([`crate::fold::fold_row`]) through a cache of its own.
pub fn list_sessions_with(
    state: &StateDir,
    project: Option<&Path>,
    mut fold: impl FnMut(&Path) -> Result<FoldedLog, ReadError>,
) -> ListedSessions {
    let mut listed = ListedSessions::default();
    let dir = state.sessions();
    let entries = match fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return listed,
        Err(e) => {
            listed
                .skipped
                .push((dir, format!("cannot list sessions: {e}")));
            return listed;
        }
    };
    let project = project.map(canonical);
    let mut ids = Vec::new();
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                listed
                    .skipped
                    .push((dir.clone(), format!("cannot list sessions: {e}")));
                continue;
            }
        };
        let name = entry.file_name();
        match name.to_str().map(SessionId::parse) {
            Some(Ok(id)) => ids.push(id),
            _ => listed.skipped.push((
                entry.path(),
                "not a session directory (its name is not a session id)".to_owned(),
            )),
        }
    }
    ids.sort_unstable_by(|a, b| b.cmp(a));
    for id in ids {
        let path = state.log_path(&id);
        match fold(&path) {
            Ok(folded) => {
                if let Some(want) = &project {
                    let theirs = folded.state.project.as_deref().map(canonical);
                    if theirs.as_ref() != Some(want) {
                        continue;
                    }
                }
                listed.sessions.push((id, folded.state));
            }
            Err(e) => listed.skipped.push((path, e.to_string())),
        }
    }
    listed
}

fn canonical(path: &Path) -> PathBuf {
    fs::canonicalize(path).unwrap_or_else(|_| path.to_owned())
}
