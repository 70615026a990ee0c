//! What `chock stop` and `chock resume` do, minus the terminal: the binary
//! asks the questions, this module writes and removes the files and logs.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::agent::{Actor, Agent};
use crate::decisions::{self, BlockReason, BlockSource, Line, StopEvent};
use crate::error::GateError;
use crate::paths::StopPaths;
use crate::reader::{self, Stop};
use crate::repo::{self, Repo};
use crate::stopfile::{self, Scope, StopFile};

/// Where the decision log is and whether writing it failed (never fatal:
/// the stop itself is what matters).
#[derive(Debug, Clone)]
pub struct Env {
    pub paths: StopPaths,
    pub log: Option<PathBuf>,
}

impl Env {
    /// Append a line; a failure is returned as a warning for the person.
    pub fn log(&self, line: &Line) -> Option<String> {
        match &self.log {
            Some(path) => decisions::append(path, line)
                .err()
                .map(|e| format!("the decision log was not written: {e}")),
            None => Some(
                "the decision log was not written: the state directory could not be located".into(),
            ),
        }
    }
}

/// Refuse a person-only command from an agent's shell, and log it.
pub fn refuse_agent(env: &Env, command: &str, actor: &Actor) -> Result<(), String> {
    let Actor::Agent { agent, variable } = actor else {
        return Ok(());
    };
    let message = format!(
        "{command} is for a person at a terminal, and this shell belongs to an agent ({variable} is set); \
         ask the person to run it"
    );
    let warning = env.log(&Line::Block {
        at: decisions::now(),
        reason: BlockReason::PersonOnly,
        source: BlockSource::Cli,
        agent: Some(agent.map_or_else(|| "unknown".to_owned(), |a| a.name().to_owned())),
        action: Some(command.to_owned()),
        project: std::env::current_dir()
            .ok()
            .map(|d| d.display().to_string()),
        detail: message.clone(),
    });
    Err(match warning {
        Some(w) => format!("{message}\n{w}"),
        None => message,
    })
}

/// `git config user.email` as seen from `dir`, or `unknown`.
pub fn git_user_email(dir: &Path) -> String {
    Command::new("git")
        .args(["config", "user.email"])
        .current_dir(dir)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .filter(|email| !email.is_empty())
        .unwrap_or_else(|| "unknown".to_owned())
}

/// The repository a directory belongs to, or a clear error.
pub fn repo_of(dir: &Path) -> Result<Repo, GateError> {
    repo::discover(dir)?.ok_or_else(|| GateError::NotARepo {
        path: dir.to_owned(),
    })
}

/// What a stop wrote.
#[derive(Debug, Clone)]
pub struct StopReport {
    pub stop: StopFile,
    pub files: Vec<PathBuf>,
    pub warning: Option<String>,
}

/// Stop agents in the repository `dir` belongs to.
pub fn stop_repo(
    env: &Env,
    dir: &Path,
    reason: &str,
    agent: Option<&str>,
) -> Result<StopReport, GateError> {
    stop_repo_by(env, dir, reason, agent, None)
}

/// [`stop_repo`], recording `who` as the person who stopped it instead of
/// the repository's git user (the daemon's `stop` verb names the person a
/// browser signed in).
pub fn stop_repo_by(
    env: &Env,
    dir: &Path,
    reason: &str,
    agent: Option<&str>,
    who: Option<&str>,
) -> Result<StopReport, GateError> {
    let agent = validate_agent(agent)?;
    let repo = repo_of(dir)?;
    let stop = StopFile {
        version: stopfile::FORMAT_VERSION,
        scope: Scope::Repo,
        reason: reason.to_owned(),
        who: who.map_or_else(|| git_user_email(&repo.main_checkout), str::to_owned),
        when: stopfile::now_rfc3339(),
        repo: Some(repo.main_checkout.display().to_string()),
        agent,
    };
    let written = stopfile::write_repo_stop(&env.paths, &repo, &stop)?;
    let warning = env.log(&stop_line(StopEvent::RepoStop, &stop));
    Ok(StopReport {
        stop,
        files: vec![written.repo_file, written.registry_file],
        warning,
    })
}

/// Stop every agent on the machine.
pub fn stop_everywhere(env: &Env, dir: &Path, reason: &str) -> Result<StopReport, GateError> {
    let stop = StopFile {
        version: stopfile::FORMAT_VERSION,
        scope: Scope::Everywhere,
        reason: reason.to_owned(),
        who: git_user_email(dir),
        when: stopfile::now_rfc3339(),
        repo: None,
        agent: None,
    };
    let file = stopfile::write_everywhere_stop(&env.paths, &stop)?;
    let warning = env.log(&stop_line(StopEvent::RepoStop, &stop));
    Ok(StopReport {
        stop,
        files: vec![file],
        warning,
    })
}

fn validate_agent(agent: Option<&str>) -> Result<Option<String>, GateError> {
    match agent {
        None => Ok(None),
        Some(name) => match Agent::from_name(name) {
            Some(agent) => Ok(Some(agent.name().to_owned())),
            None => Err(GateError::UnknownAgent {
                name: name.to_owned(),
                known: Agent::names(),
            }),
        },
    }
}

fn stop_line(event: StopEvent, stop: &StopFile) -> Line {
    Line::ChockStop {
        at: decisions::now(),
        event,
        scope: stop.scope.name().to_owned(),
        who: stop.who.clone(),
        when: stop.when.clone(),
        repo: stop.repo.clone(),
        reason: Some(stop.reason.clone()),
        agent: stop.agent.clone(),
    }
}

/// The stops a resume would lift, read before asking the person.
#[derive(Debug, Clone)]
pub struct Pending {
    /// What the person must type.
    pub word: String,
    pub stops: Vec<Stop>,
    pub repo: Option<Repo>,
}

/// The repository stops (`.chock/stop.json` and the registry entry) of `dir`.
pub fn pending_repo(env: &Env, dir: &Path) -> Result<Pending, GateError> {
    let repo = repo_of(dir)?;
    let stops = [repo.stop_file(), env.paths.entry_for(&repo.main_checkout)]
        .iter()
        .filter_map(|path| reader::read_one(path))
        .collect();
    Ok(Pending {
        word: repo.name(),
        stops,
        repo: Some(repo),
    })
}

/// The machine-wide stop.
pub fn pending_everywhere(env: &Env) -> Pending {
    Pending {
        word: "everywhere".to_owned(),
        stops: reader::read_one(&env.paths.everywhere())
            .into_iter()
            .collect(),
        repo: None,
    }
}

/// Lift what [`pending_repo`] or [`pending_everywhere`] found; the caller has
/// already checked the typed word.
pub fn lift(env: &Env, pending: &Pending) -> Result<(Vec<PathBuf>, Option<String>), GateError> {
    let mut removed = Vec::new();
    for stop in &pending.stops {
        if stopfile::remove(&stop.source)? {
            removed.push(stop.source.clone());
        }
    }
    let scope = if pending.repo.is_some() {
        Scope::Repo
    } else {
        Scope::Everywhere
    };
    let who = git_user_email(
        pending
            .repo
            .as_ref()
            .map_or(Path::new("."), |r| r.main_checkout.as_path()),
    );
    let line = Line::ChockStop {
        at: decisions::now(),
        event: StopEvent::RepoResume,
        scope: scope.name().to_owned(),
        who,
        when: stopfile::now_rfc3339(),
        repo: pending
            .repo
            .as_ref()
            .map(|r| r.main_checkout.display().to_string()),
        reason: None,
        agent: None,
    };
    Ok((removed, env.log(&line)))
}
