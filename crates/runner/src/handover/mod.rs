//! Handing a session over (seeds 000, "Handing a session over"): the
//! session's end of `handover.sock` ([`socket`]), and `chock detach`'s side
//! of the exchange ([`detach`], with what it shows while it waits in
//! [`progress`]). The wire lines live in `chock_control::handover`, beside
//! the approval socket's, so both ends read one contract.
//!
//! Ownership is the log's lock: a session that agreed writes its own
//! `session.end` with reason `handover`, lets go of the lock and exits; the
//! daemon's `chock run --adopt` takes the lock and folds the log. Nothing
//! here transfers state.

pub mod detach;
pub mod progress;
pub mod socket;

use std::path::{Path, PathBuf};

pub use chock_control::handover::Holdings;
pub use socket::{Boundary, HandoverSocket, HandoverSocketError};

/// The background work the log shows still open, and the session's
/// workspace: what a session asked to hand over still holds. Background work
/// lives in the process that started it and only that process records its
/// end, so the fold's open jobs are what a handover waits for. `None` when
/// the log cannot be read now (the session then carries on, unasked).
pub fn held(log: &Path) -> Option<(Holdings, Option<PathBuf>)> {
    let folded = chock_log::fold_log(log).ok()?;
    let holdings = count(&folded.state.background);
    Some((holdings, folded.state.workspace.map(|w| w.dir)))
}

/// Open jobs by kind; a kind this version does not know counts as a command.
pub(crate) fn count(jobs: &[chock_log::fold::BackgroundJob]) -> Holdings {
    let subagents = jobs.iter().filter(|j| j.kind == "subagent").count() as u64;
    Holdings {
        commands: jobs.len() as u64 - subagents,
        subagents,
    }
}
