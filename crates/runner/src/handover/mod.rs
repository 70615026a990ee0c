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

pub(crate) mod detach;
pub(crate) mod progress;
pub(crate) mod socket;

use std::path::{Path, PathBuf};

pub(crate) use chock_control::handover::Holdings;
pub use socket::Boundary;
pub(crate) use socket::{HandoverSocket, HandoverSocketError};

/// The background work the log shows still open, and the session's
/// workspace: what a session asked to hand over still holds. Background work
/// lives in the process that started it and only that process records its
/// end, so the fold's open jobs are what a handover waits for. `None` when
/// the log cannot be read now (the session then carries on, unasked).
pub(crate) fn held(log: &Path) -> Option<(Holdings, Option<PathBuf>)> {
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

#[cfg(test)]
mod tests {
    use chock_log::event::{BackgroundEnd, BackgroundStart, SessionOpen, WorkspaceOpen};
    use chock_log::{LogWriter, SessionId, StateDir};

    use super::*;

    fn start(job: &str, kind: &str) -> BackgroundStart {
        BackgroundStart {
            job_id: job.to_owned(),
            kind: kind.to_owned(),
            command: "sleep 60".to_owned(),
        }
    }

    #[test]
    fn what_a_session_holds_is_the_open_jobs_its_log_shows() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::at(dir.path());
        let id = SessionId::new();
        let mut writer = LogWriter::create(&state, &id).unwrap();
        writer
            .append(SessionOpen {
                session_id: id.clone(),
                project: "/p".into(),
                model: "m".into(),
                pid: 1,
                chock_version: String::new(),
                parent: None,
            })
            .unwrap();
        writer
            .append(WorkspaceOpen {
                dir: "/w".into(),
                commit: "c".repeat(40),
                branch: None,
                ..Default::default()
            })
            .unwrap();
        assert_eq!(
            held(writer.path()),
            Some((Holdings::default(), Some(PathBuf::from("/w"))))
        );
        writer.append(start("1", "command")).unwrap();
        writer.append(start("2", "subagent")).unwrap();
        writer.append(start("3", "command")).unwrap();
        let (holdings, _) = held(writer.path()).unwrap();
        assert_eq!(
            holdings,
            Holdings {
                commands: 2,
                subagents: 1
            }
        );
        for job in ["1", "2", "3"] {
            writer
                .append(BackgroundEnd {
                    job_id: job.to_owned(),
                    status: "done".to_owned(),
                    exit_code: Some(0),
                })
                .unwrap();
        }
        assert!(held(writer.path()).unwrap().0.is_empty());
        assert_eq!(held(&dir.path().join("missing.jsonl")), None);
    }
}
