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
use std::fs;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::event::EndReason;
use crate::fold::Workspace;
use crate::id::SessionId;
use crate::list::Summary;
use crate::paths::{StateDir, write_private};
use crate::row::{RowStatus, SessionRow};
use crate::time::Timestamp;

/// The first line of an index this version writes.
const HEADER: &str = r#"{"chock_index":3}"#;

/// What identifies one state of a log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Key([i64; 6]);

impl Key {
    /// The inode it was taken of.
    pub(crate) fn ino(&self) -> u64 {
        self.0[0] as u64
    }

    pub(crate) fn of(stat: &rustix::fs::Stat) -> Key {
        // An inode past i64::MAX cannot occur on Linux.
        Key([
            stat.st_ino as i64,
            stat.st_size,
            stat.st_mtime,
            stat.st_mtime_nsec as i64,
            stat.st_ctime,
            stat.st_ctime_nsec as i64,
        ])
    }
}

/// One session as a listing found it, for [`Index::save`].
pub(crate) struct Found {
    pub(crate) id: SessionId,
    pub(crate) key: Key,
    pub(crate) summary: Result<Summary, String>,
}

/// One line of the index: a session's id, the key of its log and either
/// what a listing needs of it, in short fields with the defaults left out
/// (the index is read whole by every listing), or why it could not be read.
#[derive(Serialize, Deserialize)]
struct Line {
    id: String,
    key: Key,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    s: Option<Compact>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A [`Summary`] as the index keeps it.
#[derive(Default, Serialize, Deserialize)]
#[serde(default)]
struct Compact {
    #[serde(skip_serializing_if = "Option::is_none")]
    project: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parent: Option<String>,
    /// Unix milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    started: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    updated: Option<i64>,
    status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    detail: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    preview: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    question: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<String>,
    #[serde(skip_serializing_if = "is_zero")]
    events: u64,
    #[serde(skip_serializing_if = "is_zero")]
    input: u64,
    #[serde(skip_serializing_if = "is_zero")]
    output: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pending: u64,
    #[serde(skip_serializing_if = "is_zero")]
    background: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pid: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    workspace: Option<Workspace>,
}

impl Compact {
    fn of(summary: &Summary) -> Compact {
        let row = &summary.row;
        Compact {
            project: Some(row.project.clone()).filter(|p| !p.as_os_str().is_empty()),
            parent: row.parent.clone(),
            started: row.started_at.map(Timestamp::unix_millis),
            updated: row.updated_at.map(Timestamp::unix_millis),
            status: row.status.as_str().to_owned(),
            reason: row.reason.as_ref().map(|r| r.as_str().to_owned()),
            detail: row.detail.clone(),
            title: row.title.clone(),
            preview: row.preview.clone(),
            question: row.question.clone(),
            model: row.model.clone(),
            events: row.events,
            input: row.input_tokens,
            output: row.output_tokens,
            pending: row.pending_approvals,
            background: row.background,
            pid: summary.owner_pid,
            workspace: summary.workspace.clone(),
        }
    }

    fn into_summary(self, id: String) -> Summary {
        Summary {
            row: SessionRow {
                id,
                project: self.project.unwrap_or_default(),
                parent: self.parent,
                started_at: self.started.map(Timestamp::from_unix_millis),
                updated_at: self.updated.map(Timestamp::from_unix_millis),
                status: RowStatus::from_word(&self.status),
                reason: self.reason.as_deref().map(EndReason::from_word),
                detail: self.detail,
                title: self.title,
                preview: self.preview,
                question: self.question,
                model: self.model,
                events: self.events,
                input_tokens: self.input,
                output_tokens: self.output,
                pending_approvals: self.pending,
                background: self.background,
                workspace: self.workspace.as_ref().map(|w| w.dir.clone()),
                owned: None,
            },
            owner_pid: self.pid,
            workspace: self.workspace,
        }
    }
}

struct Entry {
    key: Key,
    summary: Result<Summary, String>,
}

/// The index as one listing reads and updates it.
pub(crate) struct Index {
    entries: HashMap<String, Box<Entry>>,
    changed: bool,
}

impl Index {
    fn path(state: &StateDir) -> PathBuf {
        state.root().join("index").join("sessions.jsonl")
    }

    /// An index that knows nothing, written anew by the listing.
    pub(crate) fn empty() -> Index {
        Index {
            entries: HashMap::new(),
            changed: true,
        }
    }

    /// The index of `state`, or an empty one when it is missing or not one
    /// this version wrote; a line that does not parse is left out.
    pub(crate) fn load(state: &StateDir) -> Index {
        let text = fs::read_to_string(Self::path(state)).unwrap_or_default();
        let mut entries =
            HashMap::with_capacity(memchr::memchr_iter(b'\n', text.as_bytes()).count());
        let mut lines = text.lines();
        let ours = lines.next() == Some(HEADER);
        for line in lines.filter(|_| ours) {
            let Ok(line) = serde_json::from_str::<Line>(line) else {
                continue;
            };
            let summary = match (line.s, line.error) {
                (Some(compact), None) => Ok(compact.into_summary(line.id.clone())),
                (None, Some(error)) => Err(error),
                _ => continue,
            };
            entries.insert(
                line.id,
                Box::new(Entry {
                    key: line.key,
                    summary,
                }),
            );
        }
        Index {
            entries,
            changed: !ours && !text.is_empty(),
        }
    }

    /// What the index knows of `id` while its log still has `key`, taken
    /// out of the index; `None` (and the index to be written anew) when it
    /// knows nothing or something older.
    pub(crate) fn take(&mut self, id: &SessionId, key: Key) -> Option<Result<Summary, String>> {
        let known = self.entries.remove(id.as_str()).filter(|e| e.key == key);
        if known.is_none() {
            self.changed = true;
        }
        known.map(|e| e.summary)
    }

    /// Write the index back as `found` when this listing learnt something
    /// or found a session gone; best effort (see the module docs).
    pub(crate) fn save(self, state: &StateDir, found: &[Found]) {
        if !self.changed && self.entries.is_empty() {
            return;
        }
        let mut text = String::with_capacity(64 + 768 * found.len());
        text.push_str(HEADER);
        text.push('\n');
        for f in found {
            let (s, error) = match &f.summary {
                Ok(summary) => (Some(Compact::of(summary)), None),
                Err(error) => (None, Some(error.clone())),
            };
            let line = Line {
                id: f.id.as_str().to_owned(),
                key: f.key,
                s,
                error,
            };
            if let Ok(json) = serde_json::to_string(&line) {
                text.push_str(&json);
                text.push('\n');
            }
        }
        let _ = write_private(&Self::path(state), text.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fold::Status;

    #[test]
    fn a_summary_survives_the_index_whatever_its_status() {
        let id = SessionId::new();
        let statuses = [
            Status::Running,
            Status::WaitingForApproval,
            Status::WaitingForProvider("rate limited by x, retrying in 2 s (1 of 6)".into()),
            Status::Ended {
                reason: EndReason::Stopped,
                detail: "stopped by a person".into(),
            },
            Status::Ended {
                reason: EndReason::Unknown("later".into()),
                detail: String::new(),
            },
        ];
        for status in statuses {
            let mut state = crate::fold::SessionState {
                project: Some("/p".into()),
                model: Some("m".into()),
                owner_pid: Some(7),
                started_at: Some(Timestamp::from_unix_millis(1_000)),
                updated_at: Some(Timestamp::from_unix_millis(2_000)),
                title: Some("t".into()),
                status: status.clone(),
                ..Default::default()
            };
            state.workspace = Some(Workspace {
                dir: "/w".into(),
                commit: "c".repeat(40),
                branch: Some("chock/x".into()),
                common_dir: Some("/p/.git".into()),
                event_id: crate::id::EventId(2),
                applied: true,
            });
            let summary = Summary::of(&id, &state);
            let json = serde_json::to_string(&Compact::of(&summary)).unwrap();
            let back = serde_json::from_str::<Compact>(&json)
                .unwrap()
                .into_summary(id.as_str().to_owned());
            assert_eq!(back, summary, "{json}");
            assert_eq!(back.status(), status);
        }
    }
}
