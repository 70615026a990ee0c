//! The state directory's index: what the last listing learnt of each
//! session, so the next one folds only the logs that changed.
//!
//! `index/sessions.jsonl` holds a header line and then one line per session:
//! its id, the key of its log when it was folded (inode, length, and the
//! modification and change times to the nanosecond) and either its
//! [`Summary`] or why it could not be read. An entry is used only while its
//! key still matches the log; appending, truncating, replacing or changing
//! the permissions of a log all change the key. The index is never trusted
//! over a log and never needed: a missing, truncated or garbled index (or a
//! line of one) is folded again from the logs and written anew.
//!
//! Whoever lists writes the index back when it learnt something, to a
//! temporary file renamed over the old one, so two listings at once leave
//! one whole index or the other. A state directory the lister cannot write
//! keeps its old index and costs only the folds.

use std::collections::HashMap;
use std::fs::{self, Metadata};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::id::SessionId;
use crate::list::Summary;
use crate::paths::{StateDir, create_private_dir};

/// The first line of an index this version writes.
const HEADER: &str = r#"{"chock_index":1}"#;

/// What identifies one state of a log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Key([i64; 6]);

impl Key {
    pub(crate) fn of(meta: &Metadata) -> Key {
        // An inode or a length past i64::MAX cannot occur on Linux.
        Key([
            meta.ino() as i64,
            meta.len() as i64,
            meta.mtime(),
            meta.mtime_nsec(),
            meta.ctime(),
            meta.ctime_nsec(),
        ])
    }
}

/// One line of the index, as read.
#[derive(Deserialize)]
struct Line {
    id: String,
    key: Key,
    #[serde(default)]
    summary: Option<Summary>,
    #[serde(default)]
    error: Option<String>,
}

/// One line of the index, as written.
#[derive(Serialize)]
struct LineOut<'a> {
    id: &'a str,
    key: Key,
    #[serde(skip_serializing_if = "Option::is_none")]
    summary: Option<&'a Summary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a str>,
}

struct Entry {
    key: Key,
    summary: Result<Summary, String>,
    seen: bool,
}

/// The index as one listing reads and updates it.
pub(crate) struct Index {
    entries: HashMap<String, Entry>,
    changed: bool,
}

impl Index {
    fn path(state: &StateDir) -> PathBuf {
        state.root().join("index").join("sessions.jsonl")
    }

    /// The index of `state`, or an empty one when it is missing or not one
    /// this version wrote; a line that does not parse is left out.
    pub(crate) fn load(state: &StateDir) -> Index {
        let mut entries = HashMap::new();
        let text = fs::read_to_string(Self::path(state)).unwrap_or_default();
        let mut lines = text.lines();
        let ours = lines.next() == Some(HEADER);
        for line in lines.filter(|_| ours) {
            let Ok(line) = serde_json::from_str::<Line>(line) else {
                continue;
            };
            let summary = match (line.summary, line.error) {
                (Some(summary), None) => Ok(summary),
                (None, Some(error)) => Err(error),
                _ => continue,
            };
            entries.insert(
                line.id,
                Entry {
                    key: line.key,
                    summary,
                    seen: false,
                },
            );
        }
        Index {
            entries,
            changed: !ours && !text.is_empty(),
        }
    }

    /// What the index knows of `id` while its log still has `key`.
    pub(crate) fn get(&mut self, id: &SessionId, key: Key) -> Option<Result<Summary, String>> {
        let entry = self.entries.get_mut(id.as_str())?;
        entry.seen = true;
        (entry.key == key).then(|| entry.summary.clone())
    }

    /// Record what a fold of `id`'s log with `key` found.
    pub(crate) fn put(&mut self, id: SessionId, key: Key, summary: Result<Summary, String>) {
        self.entries.insert(
            id.as_str().to_owned(),
            Entry {
                key,
                summary,
                seen: true,
            },
        );
        self.changed = true;
    }

    /// Write the index back when this listing learnt something or found a
    /// session gone; best effort (see the module docs).
    pub(crate) fn save(mut self, state: &StateDir) {
        let before = self.entries.len();
        self.entries.retain(|_, e| e.seen);
        if !self.changed && self.entries.len() == before {
            return;
        }
        let path = Self::path(state);
        let Some(dir) = path.parent() else { return };
        if create_private_dir(dir).is_err() {
            return;
        }
        let mut ids: Vec<&String> = self.entries.keys().collect();
        ids.sort_unstable_by(|a, b| b.cmp(a));
        let mut text = String::with_capacity(64 + 512 * ids.len());
        text.push_str(HEADER);
        text.push('\n');
        for id in ids {
            let entry = &self.entries[id];
            let (summary, error) = match &entry.summary {
                Ok(summary) => (Some(summary), None),
                Err(error) => (None, Some(error.as_str())),
            };
            let line = LineOut {
                id,
                key: entry.key,
                summary,
                error,
            };
            if let Ok(json) = serde_json::to_string(&line) {
                text.push_str(&json);
                text.push('\n');
            }
        }
        let tmp = dir.join(format!(
            ".sessions.jsonl.{}.{}",
            std::process::id(),
            SessionId::new().as_str()
        ));
        let written = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)
            .and_then(|mut f| f.write_all(text.as_bytes()));
        if written.is_err() || fs::rename(&tmp, &path).is_err() {
            let _ = fs::remove_file(&tmp);
        }
    }
}
