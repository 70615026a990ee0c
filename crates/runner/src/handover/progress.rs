//! What `chock detach` shows while it waits: what the session is doing, read
//! from the tail of its log (the log is the truth, and reading it asks the
//! session nothing), what it still holds, and the time left of this wait.

use std::path::PathBuf;
use std::time::Duration;

use chock_control::handover::Holdings;
use chock_log::fold::Status;
use chock_log::{EventBody, EventId, SessionState, read_after};

/// Which wait of the exchange `chock detach` is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Asked; waiting for the session's next turn boundary.
    Boundary,
    /// The session named background work; waiting for it to be recorded ended.
    Background,
    /// The session is ready; proving the daemon and confirming.
    Confirming,
    /// The session let go; the daemon is adopting it.
    Adopting,
}

/// One progress report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    pub stage: Stage,
    /// What the session is doing, from its log.
    pub doing: String,
    /// Background work it said it holds.
    pub holding: Holdings,
    /// Time left of the current wait.
    pub left: Duration,
}

impl Progress {
    /// The report without the time left: what changes only when something
    /// happened.
    pub fn summary(&self) -> String {
        let stage = match self.stage {
            Stage::Boundary => "waiting for its next turn boundary",
            Stage::Background => "waiting for its background work to end",
            Stage::Confirming => "ready; confirming with the daemon",
            Stage::Adopting => "handed over; the daemon is taking it",
        };
        let holds = if self.holding.is_empty() {
            String::new()
        } else {
            format!("; holds {}", self.holding)
        };
        format!("{stage}: {}{holds}", self.doing)
    }

    /// The whole line, with the time left.
    pub fn line(&self) -> String {
        format!("{} ({} s left)", self.summary(), self.left.as_secs())
    }
}

/// The session's log, followed from where the last look stopped.
#[derive(Debug)]
pub(crate) struct LogTail {
    log: PathBuf,
    last: EventId,
    state: SessionState,
    newest: Option<EventBody>,
}

impl LogTail {
    pub(crate) fn new(log: PathBuf) -> LogTail {
        LogTail {
            log,
            last: EventId::NONE,
            state: SessionState::default(),
            newest: None,
        }
    }

    /// Reads what was appended since the last look; a log that cannot be
    /// read now keeps the last answer (the next look tries again).
    pub(crate) fn refresh(&mut self) {
        let Ok(batch) = read_after(&self.log, self.last) else {
            return;
        };
        for raw in batch.events {
            if let Ok(event) = raw.parse() {
                self.last = event.id;
                self.newest = Some(event.body.clone());
                self.state.apply_owned(event);
            }
        }
    }

    pub(crate) fn state(&self) -> &SessionState {
        &self.state
    }

    /// What the session is doing, in a few words.
    pub(crate) fn doing(&self) -> String {
        if let Status::WaitingForApproval = self.state.status {
            let ids: Vec<&str> = self
                .state
                .pending_approvals
                .iter()
                .map(|p| p.request_id.as_str())
                .collect();
            return format!(
                "it waits for a person to answer approval request {} (`chock approve`)",
                ids.join(", ")
            );
        }
        let at = self.last.0;
        match &self.newest {
            None => "its log is empty".to_owned(),
            Some(EventBody::ToolCall(call)) => {
                format!("it is running the tool {} (event {at})", call.tool)
            }
            Some(EventBody::AssistantMessage(m)) if !m.tool_calls.is_empty() => {
                format!("it is deciding its tool calls (event {at})")
            }
            Some(EventBody::Decision(_)) => format!("it is deciding a tool call (event {at})"),
            Some(EventBody::SessionEnd(end)) => {
                format!("it has ended ({}) (event {at})", end.reason.as_str())
            }
            Some(_) => format!("it is waiting for the model (event {at})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_leaves_out_the_clock_and_names_holdings() {
        let p = Progress {
            stage: Stage::Background,
            doing: "it is waiting for the model (event 9)".into(),
            holding: Holdings {
                commands: 1,
                subagents: 0,
            },
            left: Duration::from_secs(42),
        };
        assert_eq!(
            p.summary(),
            "waiting for its background work to end: it is waiting for the model (event 9); holds 1 background command"
        );
        assert!(p.line().ends_with("(42 s left)"));
    }
}
