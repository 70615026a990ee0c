//! The row the daemon's `list` verb sends for each session, built from a
//! [`SessionState`] so it says what every other view says.
//!
//! It crosses machines and versions, so every field has a default and
//! unknown fields are ignored: a newer daemon may add fields without a
//! protocol bump. `status` and `reason` are words on the wire, read into
//! enums that keep a word this version does not know
//! ([`RowStatus::Unknown`], [`EndReason::Unknown`]), so an older client
//! shows a status it does not know rather than failing the row.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::event::EndReason;
use crate::fold::{SessionState, Status};
use crate::id::SessionId;
use crate::time::Timestamp;

/// One session, as `list` and `chock sessions --json` show it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionRow {
    /// The session id.
    pub id: String,
    /// The project directory.
    pub project: PathBuf,
    /// The session that spawned this one, when it is a subagent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// When the session began.
    pub started_at: Option<Timestamp>,
    /// When its newest event was written.
    pub updated_at: Option<Timestamp>,
    /// `running`, `waiting` (for a person), `retrying` (waiting for the
    /// provider) or `ended`.
    pub status: RowStatus,
    /// Why it ended (`done`, `error`, `interrupted`, `handover`, `stopped`,
    /// `crashed`), when it has.
    pub reason: Option<EndReason>,
    /// The ending's sentence, when it has ended; the wait, when it is
    /// retrying.
    pub detail: Option<String>,
    /// Its title.
    pub title: Option<String>,
    /// The start of the person's first message, on one line (at most 120
    /// characters), while the session has no title: what a listing shows
    /// for an untitled session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preview: Option<String>,
    /// The question of the oldest approval request waiting for a person,
    /// on one line (at most 120 characters).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub question: Option<String>,
    /// Its model.
    pub model: Option<String>,
    /// The id of its newest event (the number of events in a sound log).
    pub events: u64,
    /// Tokens sent to models.
    pub input_tokens: u64,
    /// Tokens models produced.
    pub output_tokens: u64,
    /// Approval requests waiting for a person.
    pub pending_approvals: u64,
    /// Background jobs still running.
    pub background: u64,
    /// Its workspace directory, when it has one.
    pub workspace: Option<PathBuf>,
    /// Whether a process holds the log's lock, when the producer checked
    /// ([`SessionRow::with_owner`]). A session with events whose log
    /// nobody holds and that has no ending is shown ended, reason
    /// `crashed` ([`SessionRow::settled`]), with `owned: false`.
    pub owned: Option<bool>,
}

/// A session's status in a row, as its word.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum RowStatus {
    #[default]
    Running,
    /// Waiting for a person.
    Waiting,
    /// Waiting to retry a model call (rate limited, overloaded, down).
    Retrying,
    Ended,
    /// A word this version does not know (a newer producer's), as written.
    Unknown(String),
}

impl RowStatus {
    /// The status as the row spells it.
    pub fn as_str(&self) -> &str {
        match self {
            RowStatus::Running => "running",
            RowStatus::Waiting => "waiting",
            RowStatus::Retrying => "retrying",
            RowStatus::Ended => "ended",
            RowStatus::Unknown(word) => word,
        }
    }

    /// The status a word names.
    pub fn from_word(word: &str) -> RowStatus {
        match word {
            "running" => RowStatus::Running,
            "waiting" => RowStatus::Waiting,
            "retrying" => RowStatus::Retrying,
            "ended" => RowStatus::Ended,
            other => RowStatus::Unknown(other.to_owned()),
        }
    }

    /// The status of a folded session.
    pub fn of(status: &Status) -> RowStatus {
        match status {
            Status::Running => RowStatus::Running,
            Status::WaitingForApproval => RowStatus::Waiting,
            Status::WaitingForProvider(_) => RowStatus::Retrying,
            Status::Ended { .. } => RowStatus::Ended,
        }
    }
}

impl std::fmt::Display for RowStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for RowStatus {
    fn eq(&self, word: &&str) -> bool {
        self.as_str() == *word
    }
}

impl Serialize for RowStatus {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for RowStatus {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let word = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        Ok(RowStatus::from_word(&word))
    }
}

impl SessionRow {
    /// The row for a folded session.
    pub fn from_state(id: &SessionId, state: &SessionState) -> SessionRow {
        let (reason, detail) = match &state.status {
            Status::Ended { reason, detail } => (Some(reason.clone()), Some(detail.clone())),
            // The wait, as the person was told it.
            Status::WaitingForProvider(text) => (None, Some(text.clone())),
            Status::Running | Status::WaitingForApproval => (None, None),
        };
        SessionRow {
            id: id.to_string(),
            project: state.project.clone().unwrap_or_default(),
            parent: state.parent.as_ref().map(ToString::to_string),
            started_at: state.started_at,
            updated_at: state.updated_at,
            status: RowStatus::of(&state.status),
            reason,
            detail,
            title: state.title.clone(),
            // A titled session is listed by its title: the preview would
            // only make every listing read more.
            preview: state.preview.clone().filter(|_| state.title.is_none()),
            question: state
                .pending_approvals
                .first()
                .map(|p| crate::fold::preview(&p.question)),
            model: state.model.clone(),
            events: state.last_event_id.0,
            input_tokens: state.usage.input_tokens,
            output_tokens: state.usage.output_tokens,
            pending_approvals: state.pending_approvals.len() as u64,
            background: state.background.len() as u64,
            workspace: state.workspace.as_ref().map(|w| w.dir.clone()),
            owned: None,
        }
    }

    /// The row with `owned` filled in from `/proc/locks` for the log at
    /// `log` (left unknown when that cannot be read).
    pub fn with_owner(mut self, log: &std::path::Path) -> SessionRow {
        self.owned = crate::locks::is_owned(log).ok();
        self.settled()
    }

    /// The row as it stands once `owned` is known: a log with events and no
    /// ending that nobody holds belongs to a process that died without
    /// writing its ending, so the session has ended, crashed. A log with no
    /// events is left as it is: a session being started holds its lock
    /// before its first event, and a log with none has nobody to have
    /// crashed.
    pub fn settled(mut self) -> SessionRow {
        if self.owned == Some(false) && self.events > 0 && self.status != RowStatus::Ended {
            self.status = RowStatus::Ended;
            self.reason = Some(EndReason::Crashed);
            self.detail = Some(CRASHED_DETAIL.to_owned());
            self.pending_approvals = 0;
        }
        self
    }
}

/// The detail of a row [`SessionRow::settled`] found crashed.
pub const CRASHED_DETAIL: &str = "its process ended without writing an ending";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unheld_log_with_events_and_no_ending_is_a_crash() {
        let running = SessionRow {
            events: 3,
            pending_approvals: 1,
            status: RowStatus::Waiting,
            owned: Some(false),
            ..SessionRow::default()
        };
        let row = running.clone().settled();
        assert_eq!(row.status, RowStatus::Ended);
        assert_eq!(row.reason, Some(EndReason::Crashed));
        assert_eq!(row.detail.as_deref(), Some(CRASHED_DETAIL));
        assert_eq!((row.pending_approvals, row.owned), (0, Some(false)));
        for kept in [
            SessionRow {
                owned: Some(true),
                ..running.clone()
            },
            SessionRow {
                owned: None,
                ..running.clone()
            },
            SessionRow {
                events: 0,
                ..running.clone()
            },
        ] {
            assert_eq!(kept.clone().settled(), kept);
        }
    }

    #[test]
    fn unknown_fields_are_ignored_and_missing_ones_default() {
        let row: SessionRow =
            serde_json::from_str(r#"{"id":"x","status":"idle","future":{"a":1}}"#).unwrap();
        assert_eq!(row.id, "x");
        assert_eq!(row.status, "idle");
        assert_eq!(row.events, 0);
        assert_eq!(row.title, None);
    }

    #[test]
    fn a_row_survives_json() {
        let row = SessionRow {
            id: "20261129-192736-123-7f3a9c1e".into(),
            started_at: Some(Timestamp::from_unix_millis(1)),
            status: RowStatus::Ended,
            reason: Some(EndReason::Done),
            events: 9,
            ..SessionRow::default()
        };
        let text = serde_json::to_string(&row).unwrap();
        assert_eq!(serde_json::from_str::<SessionRow>(&text).unwrap(), row);
    }

    #[test]
    fn a_row_previews_the_first_message_and_the_waiting_question_on_one_line() {
        let long = "word ".repeat(60);
        let log = format!(
            "{}\n{}\n{}\n{}\n",
            r#"{"id":1,"at":"2026-11-29T19:27:36.123Z","type":"user.message","text":"Tidy\n  the\tgreeting\u001b[2J"}"#,
            format_args!(
                r#"{{"id":2,"at":"2026-11-29T19:27:37.000Z","type":"user.message","text":"{long}"}}"#
            ),
            r#"{"id":3,"at":"2026-11-29T19:27:38.000Z","type":"approval.request","request_id":"3","action":"call.ask_user","question":"Which\ngreeting?","kind":"question"}"#,
            r#"{"id":4,"at":"2026-11-29T19:27:39.000Z","type":"approval.request","request_id":"4","action":"call.edit_file","question":"Edit?"}"#,
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        std::fs::write(&path, log).unwrap();
        let id = SessionId::parse("20261129-192736-123-7f3a9c1e").unwrap();
        // The row fold (what a listing uses) and the whole fold agree.
        for state in [
            crate::fold::fold_row(&path).unwrap().state,
            crate::fold::fold_log(&path).unwrap().state,
        ] {
            let row = SessionRow::from_state(&id, &state);
            assert_eq!(row.preview.as_deref(), Some("Tidy the greeting [2J"));
            assert_eq!(row.question.as_deref(), Some("Which greeting?"));
        }
        assert_eq!(
            crate::fold::preview(&long).chars().count(),
            crate::fold::PREVIEW_CHARS + 1
        );
        assert!(crate::fold::preview(&long).ends_with('…'));
    }
}
