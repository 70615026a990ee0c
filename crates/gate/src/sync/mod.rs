//! `chock sync`: wire the pre-tool stop check into every agent client's own
//! configuration, and report which are wired.
//!
//! Each client keeps hooks somewhere else and in its own shape; the
//! per-client tables live in [`clients`]. Every edit is surgical (see
//! `jsonedit.rs`) and idempotent: a second run changes no byte. A
//! config that is not valid JSON or TOML is reported with the line and column
//! where it broke and left untouched. Codex and Gemini read a project's hooks
//! only in a project the person trusts, so a project-only install there is
//! reported as pending that trust; `--user-level` also installs in the user's
//! own config, which those clients always read.

pub mod clients;
pub mod files;
mod trust;

use std::fmt;
use std::path::{Path, PathBuf};

pub use clients::{Target, targets};

use crate::agent::Agent;

/// Where a hook is installed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Project,
    User,
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Level::Project => "project",
            Level::User => "user",
        })
    }
}

/// What `--check` found for one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    /// The stop check is in place and the client will run it.
    Wired,
    /// The stop check is not there.
    Missing,
    /// In place, but the client skips it until the person grants trust.
    PendingTrust(String),
    /// The file could not be used; nothing was written.
    Invalid(String),
}

impl State {
    pub fn is_wired(&self) -> bool {
        matches!(self, State::Wired)
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            State::Wired => f.write_str("wired"),
            State::Missing => f.write_str("missing"),
            State::PendingTrust(what) => write!(f, "pending trust: {what}"),
            State::Invalid(what) => write!(f, "not touched: {what}"),
        }
    }
}

/// One row of the report.
#[derive(Debug, Clone)]
pub struct Row {
    /// A client name, or `git` for the dispatcher.
    pub client: &'static str,
    pub level: Level,
    pub path: PathBuf,
    pub state: State,
    /// This run changed the file.
    pub changed: bool,
}

/// What to sync.
#[derive(Debug, Clone)]
pub struct SyncRequest<'a> {
    pub project: &'a Path,
    pub home: &'a Path,
    /// Empty means every client.
    pub clients: Vec<Agent>,
    pub user_level: bool,
    /// Only report; write nothing.
    pub check: bool,
    /// Also install the git dispatcher.
    pub git: bool,
}

/// The clients `chock sync` knows, in report order: every agent but Chock
/// itself, which needs no hooks.
pub const CLIENTS: &[Agent] = Agent::ALL.split_at(1).1;
const _: () = assert!(matches!(Agent::ALL[0], Agent::Chock));

/// The command line the hooks run.
pub fn stop_check_command(client: Agent) -> String {
    format!("chock gate stop-check --client {}", client.name())
}

/// Sync (or check) every requested client; one row per file.
pub fn run(request: &SyncRequest<'_>) -> Vec<Row> {
    let clients: Vec<Agent> = if request.clients.is_empty() {
        CLIENTS.to_vec()
    } else {
        request.clients.clone()
    };
    let mut rows = Vec::new();
    for client in clients {
        for target in targets(client, request.project, request.home) {
            if target.level == Level::User && !request.user_level && !request.check {
                continue;
            }
            if target.level == Level::User
                && request.check
                && !request.user_level
                && !target.exists()
            {
                // --check reports user-level files only when asked or present.
                continue;
            }
            rows.push(target.apply(request.check));
        }
    }
    if request.git {
        rows.extend(crate::git::sync_rows(request.project, request.check));
    }
    trust::annotate(&mut rows, request.project, request.home);
    rows
}
