//! Approvals: what a session does when the policy answers `ask`. The
//! session appends `approval.request`, waits for a yes or no on its
//! `approve.sock` ([`socket`]), and appends `approval.answer` itself; the
//! socket only carries the answer, so nothing but the log's owner ever
//! writes the log. The wording a person and the model read lives here too,
//! so the terminal, `chock approve` and the refusal the model gets agree.

pub(crate) mod client;
pub(crate) mod socket;
pub(crate) mod terminal;

use chock_policy::Verdict;

pub use chock_control::Answer;
pub(crate) use socket::{ApproveSocket, Given, SocketError, Wants};
pub(crate) use terminal::{Terminal, TerminalSlot};

/// The question a person is asked for `verdict` about `what` (the call or
/// the connection, in words), with the reviewer's yes when there was one.
pub(crate) fn question(what: &str, verdict: &Verdict, reviewer_said: Option<&str>) -> String {
    let rule = verdict
        .rule
        .as_ref()
        .map(|rule| format!(" (rule {})", rule.text))
        .unwrap_or_default();
    let reviewer = reviewer_said
        .map(|reason| format!("; the reviewer said yes: {reason}"))
        .unwrap_or_default();
    format!(
        "allow {}? {what}; the {} says {}{rule}{reviewer}",
        verdict.action,
        verdict.layer.describe(),
        verdict.decision
    )
}

/// The tool result the model reads when the reviewer said no.
pub(crate) fn reviewer_refusal(verdict: &Verdict, reason: &str) -> String {
    format!(
        "{} was refused: the reviewer the policy asks ({}) said no: {reason}. \
         Do not retry it as it is; take another way or ask the person.{}",
        verdict.action,
        verdict.decision,
        help(verdict)
    )
}

/// The tool result the model reads when a person said no, with the rule
/// that would have allowed it for the person reading the log.
pub(crate) fn refusal(verdict: &Verdict) -> String {
    format!(
        "{} was refused: the person answered no when asked. Do not retry it; \
         ask the person or take another way.{}",
        verdict.action,
        help(verdict)
    )
}

/// The rule that would allow `verdict`'s action, on a line of its own.
fn help(verdict: &Verdict) -> String {
    verdict
        .help
        .as_ref()
        .map(|help| format!("\n{help}"))
        .unwrap_or_default()
}
