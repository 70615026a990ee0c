//! `chock sync`: wire the pre-tool stop check into every agent client.

use super::output::outln;
use std::path::PathBuf;
use std::process::ExitCode;

use chock_gate::Agent;
use chock_gate::sync::{self, State, SyncRequest};
use clap::Args;

use crate::exit;

/// Wire the stop check (`chock gate stop-check --client NAME`) into each agent client's
/// own hook config, and the git dispatcher into this repository's hooks.
///
/// Clients: claude-code, codex, gemini, cursor, goose, cline, windsurf, opencode. Every
/// hook has no matcher, so it sees every tool call, reads included. Edits are surgical:
/// the rest of each file stays byte for byte, and a second sync changes nothing. A config
/// that is not valid JSON or TOML is left alone and reported with where it broke.
/// Codex and Gemini CLI read a project's hooks only in a project the person trusts:
/// `--check` reports that as pending trust; `--user-level` also installs in the user's
/// own config, which they always read.
#[derive(Debug, Args)]
pub(crate) struct SyncArgs {
    /// Only report which clients are wired, missing or pending trust; write nothing.
    /// Exits 3 when any is not wired.
    #[arg(long)]
    check: bool,
    /// Also install in each client's user-level config (~/.claude, ~/.codex, ~/.gemini, ...).
    #[arg(long)]
    user_level: bool,
    /// Only this client (repeatable); default every client.
    #[arg(long, value_name = "NAME")]
    client: Vec<String>,
    /// Leave git hooks alone.
    #[arg(long)]
    no_git: bool,
    /// The repository (default: the current directory).
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
}

pub(crate) fn run(args: SyncArgs) -> anyhow::Result<ExitCode> {
    let project = super::gate::project_dir(args.project)?;
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| anyhow::anyhow!("HOME is not set: set it and run chock sync again"))?;
    let mut clients = Vec::new();
    for name in &args.client {
        match Agent::from_name(name).filter(|a| sync::CLIENTS.contains(a)) {
            Some(agent) => clients.push(agent),
            None => anyhow::bail!(
                "unknown client {name:?}: known clients are {}",
                sync::CLIENTS
                    .iter()
                    .map(|a| a.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
    let request = SyncRequest {
        project: &project,
        home: &home,
        clients,
        user_level: args.user_level,
        check: args.check,
        git: !args.no_git,
    };
    let rows = sync::run(&request);
    let width = rows
        .iter()
        .map(|r| r.path.display().to_string().len())
        .max()
        .unwrap_or(0);
    for row in &rows {
        let changed = if row.changed { " (written)" } else { "" };
        outln!(
            "{:<12} {:<8} {:<width$}  {}{changed}",
            row.client,
            row.level.to_string(),
            row.path.display().to_string(),
            row.state
        );
    }
    let invalid = rows.iter().any(|r| matches!(r.state, State::Invalid(_)));
    let all_wired = rows.iter().all(|r| r.state.is_wired());
    Ok(if invalid {
        ExitCode::from(exit::FAILURE)
    } else if args.check && !all_wired {
        ExitCode::from(exit::NOT_WIRED)
    } else {
        ExitCode::SUCCESS
    })
}
