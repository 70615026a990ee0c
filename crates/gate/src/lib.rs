//! Chock's stop: a person's "no further" to every agent on the machine.
//!
//! A stop is a small JSON file a person writes with `chock stop` (or
//! `--everywhere`) and that every hook reads before an agent acts: the
//! pre-tool stop check wired into other agent clients by `chock sync`, the git
//! dispatcher, the MCP gateway, and Chock's own sessions through
//! [`check_stop`]. The reader fails closed: a stop file that exists but cannot
//! be read, parsed, or is not a regular file refuses every agent. Each refusal
//! and each stop or resume leaves a line in the decision log.
//!
//! The crate is synchronous and does no I/O beyond small files and, for the
//! person-facing commands only, `git config`: hooks run it once per tool call.
#![forbid(unsafe_code)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod agent;
pub mod decisions;
mod error;
pub mod git;
pub mod hookcheck;
mod jsonedit;
pub mod ops;
mod paths;
pub mod reader;
pub mod repo;
pub mod stopfile;
pub mod sync;

use std::path::Path;

pub use agent::{Agent, detect_from_env};
pub use error::GateError;
pub use paths::StopPaths;
pub use reader::{Caller, Stop, StopState, StopVerdict, Stopped};

/// The check Chock's own sessions make before every tool call.
///
/// Cheap by design (a handful of `stat`s and at most three small reads, no
/// process): it is on the path of every action. `Err` carries the reason to
/// show the model and to log; it is never returned for "no stop".
pub fn check_stop(project_dir: &Path) -> Result<(), Stopped> {
    let paths = match StopPaths::from_env() {
        Ok(paths) => paths,
        // No home directory means the machine registry cannot be consulted,
        // which is an absent answer: never a permissive one.
        Err(err) => {
            return Err(Stopped::unreadable(
                Path::new("~/.chock/stops"),
                &err.to_string(),
            ));
        }
    };
    check_stop_in(&paths, project_dir)
}

/// [`check_stop`] against a given registry (tests, and callers that resolved
/// the home directory already).
pub fn check_stop_in(paths: &StopPaths, project_dir: &Path) -> Result<(), Stopped> {
    let caller = Caller {
        project: Some(project_dir),
        agent: Some(Agent::Chock),
    };
    match reader::read(paths, &caller) {
        StopVerdict::Clear => Ok(()),
        StopVerdict::Stopped(stopped) => Err(stopped),
    }
}

/// Log a session's refused tool call: a `block` line with reason `stopped`
/// and source `session`. The caller has already refused; a failure here is
/// returned for it to report, never to undo the refusal.
pub fn log_session_block(
    log: &Path,
    project_dir: &Path,
    tool: &str,
    stopped: &Stopped,
) -> Result<(), GateError> {
    decisions::append(
        log,
        &decisions::Line::Block {
            at: decisions::now(),
            reason: decisions::BlockReason::Stopped,
            source: decisions::BlockSource::Session,
            agent: Some(Agent::Chock.name().to_owned()),
            action: Some(tool.to_owned()),
            project: Some(project_dir.display().to_string()),
            detail: stopped.to_string(),
        },
    )
}
