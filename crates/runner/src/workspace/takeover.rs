//! Whether a new owner may step into a session's existing workspace.
//!
//! A workspace is taken over only when the log proves nobody is in it: the
//! `workspace.open` that names it must be older than the `session.end` that
//! handed it over (seeds 000, "The workspace moves with the session"). A
//! workspace the current owner opened is never older than the last ending,
//! so a `chock run --continue` racing a session the daemon has just
//! adopted is refused here even in the instant the lock might look free.
//!
//! The caller holds the log's lock before it asks. A log whose last owner
//! died without an ending (kill -9, a power cut) gets its `session.end`
//! with reason `crashed` from the caller first, because holding the lock
//! proves that owner is gone; only then is this rule applied.

use std::path::PathBuf;

use chock_log::event::{EndReason, Event, EventBody, WorkspaceOpen};
use chock_log::{EventId, SessionId};

/// A workspace the log proves nobody is in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Takeover {
    pub dir: PathBuf,
    pub commit: String,
    pub branch: Option<String>,
    /// The repository's common git directory, when the log recorded it.
    pub common_dir: Option<PathBuf>,
    /// How the previous owner ended.
    pub ended: EndReason,
}

/// Why a workspace may not be taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TakeoverError {
    #[error(
        "session {session} has no workspace in its log: it was started before sessions had workspaces; start a new session with `chock run`"
    )]
    NoWorkspace { session: String },
    #[error(
        "the workspace of session {session} was opened (event {opened}) after the session's last ending{}: somebody is working in it; wait for that owner to end or hand it over",
        ended.map(|e| format!(" (event {e})")).unwrap_or_default()
    )]
    InUse {
        session: String,
        opened: EventId,
        ended: Option<EventId>,
    },
}

/// The facts the rule reads: the newest `workspace.open` and the newest
/// `session.end`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facts {
    pub workspace: Option<(EventId, WorkspaceOpen)>,
    pub ending: Option<(EventId, EndReason)>,
}

impl Facts {
    /// Reads the facts from events in log order.
    pub fn from_events<'a>(events: impl IntoIterator<Item = &'a Event>) -> Facts {
        let mut facts = Facts::default();
        for event in events {
            match &event.body {
                EventBody::WorkspaceOpen(w) => {
                    facts.workspace = Some((event.id, w.clone()));
                }
                EventBody::SessionEnd(end) => facts.ending = Some((event.id, end.reason.clone())),
                _ => {}
            }
        }
        facts
    }
}

/// Applies the rule to a log's events.
pub fn check_takeover(session: &SessionId, events: &[Event]) -> Result<Takeover, TakeoverError> {
    let facts = Facts::from_events(events);
    let Some((opened, open)) = facts.workspace else {
        return Err(TakeoverError::NoWorkspace {
            session: session.as_str().to_owned(),
        });
    };
    match facts.ending {
        Some((ended, reason)) if opened < ended => Ok(Takeover {
            dir: open.dir,
            commit: open.commit,
            branch: open.branch,
            common_dir: open.common_dir,
            ended: reason,
        }),
        other => Err(TakeoverError::InUse {
            session: session.as_str().to_owned(),
            opened,
            ended: other.map(|(id, _)| id),
        }),
    }
}

#[cfg(test)]
mod tests {
    use chock_log::Timestamp;
    use chock_log::event::{SessionEnd, SessionOpen, UserMessage};

    use super::*;

    fn events(bodies: Vec<EventBody>) -> Vec<Event> {
        bodies
            .into_iter()
            .enumerate()
            .map(|(i, body)| Event {
                id: EventId(i as u64 + 1),
                at: Timestamp::now(),
                body,
            })
            .collect()
    }

    fn open(id: &SessionId) -> EventBody {
        SessionOpen {
            session_id: id.clone(),
            project: "/p".into(),
            model: "m".into(),
            pid: 1,
            chock_version: String::new(),
            parent: None,
        }
        .into()
    }

    fn ws(dir: &str) -> EventBody {
        WorkspaceOpen {
            dir: dir.into(),
            commit: "c".repeat(40),
            branch: Some("chock/x".into()),
            ..Default::default()
        }
        .into()
    }

    fn end(reason: EndReason) -> EventBody {
        SessionEnd {
            reason,
            detail: String::new(),
        }
        .into()
    }

    #[test]
    fn a_workspace_older_than_the_ending_is_taken() {
        let id = SessionId::new();
        let log = events(vec![open(&id), ws("/w"), end(EndReason::Handover)]);
        let taken = check_takeover(&id, &log).unwrap();
        assert_eq!(taken.dir, PathBuf::from("/w"));
        assert_eq!(taken.ended, EndReason::Handover);
    }

    #[test]
    fn a_workspace_the_current_owner_opened_is_refused() {
        let id = SessionId::new();
        // Handed over, adopted: the new owner opened the workspace again.
        let log = events(vec![
            open(&id),
            ws("/w"),
            end(EndReason::Handover),
            open(&id),
            ws("/w"),
            UserMessage { text: "x".into() }.into(),
        ]);
        let err = check_takeover(&id, &log).unwrap_err();
        assert_eq!(
            err,
            TakeoverError::InUse {
                session: id.as_str().to_owned(),
                opened: EventId(5),
                ended: Some(EventId(3)),
            }
        );
        assert!(err.to_string().contains("somebody is working in it"));
    }

    #[test]
    fn a_log_with_no_ending_or_no_workspace_is_refused() {
        let id = SessionId::new();
        assert!(matches!(
            check_takeover(&id, &events(vec![open(&id), ws("/w")])),
            Err(TakeoverError::InUse { ended: None, .. })
        ));
        assert!(matches!(
            check_takeover(&id, &events(vec![open(&id), end(EndReason::Done)])),
            Err(TakeoverError::NoWorkspace { .. })
        ));
    }
}
