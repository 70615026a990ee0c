//! `chock stop`: a person stops agents in this repository, or everywhere.

use super::output::outln;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use chock_gate::ops;
use clap::Args;

use crate::exit;

/// Stop agents: every agent's next tool call, commit, push and MCP tool call is refused.
///
/// Writes REPO/.chock/stop.json and ~/.chock/stops/SHA256-OF-REPO-PATH.json
/// (mode 0600), or ~/.chock/stops/_everywhere.json with --everywhere. A linked worktree
/// has no stop of its own: the main checkout's reaches it. Only a person at a terminal
/// lifts a stop, with `chock resume`. Run from an agent's shell, this is refused.
#[derive(Debug, Args)]
pub(crate) struct StopArgs {
    /// Why: every refusal shows it to the agent.
    #[arg(long, default_value = "a person stopped agents here")]
    reason: String,
    /// Stop only this agent (chock, claude-code, codex, gemini, cursor, goose, cline, windsurf, opencode).
    #[arg(long, value_name = "NAME", conflicts_with = "everywhere")]
    agent: Option<String>,
    /// Stop every agent in every repository on this machine.
    #[arg(long)]
    everywhere: bool,
    /// The repository to stop (default: the current directory).
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
}

pub(crate) fn run(args: StopArgs) -> anyhow::Result<ExitCode> {
    let env = super::gate::gate_env()?;
    let dir = super::gate::project_dir(args.project)?;
    let actor = chock_gate::detect_from_env();
    if let Err(message) = ops::refuse_agent(&env, "chock stop", &actor) {
        eprintln!("chock: {message}");
        return Ok(ExitCode::from(exit::FAILURE));
    }
    let report = if args.everywhere {
        ops::stop_everywhere(&env, &dir, &args.reason)
            .context("could not write the machine-wide stop")?
    } else {
        ops::stop_repo(&env, &dir, &args.reason, args.agent.as_deref())
            .context("could not stop agents")?
    };
    let scope = match (&report.stop.repo, &report.stop.agent) {
        (Some(repo), Some(agent)) => format!("{agent} in {repo}"),
        (Some(repo), None) => format!("every agent in {repo}"),
        (None, _) => "every agent on this machine".to_owned(),
    };
    outln!("stopped {scope}: {}", report.stop.reason);
    for file in &report.files {
        outln!("  wrote {}", file.display());
    }
    let resume = if args.everywhere {
        "chock resume --everywhere"
    } else {
        "chock resume"
    };
    outln!("a person lifts it at a terminal with '{resume}'");
    if let Some(warning) = report.warning {
        eprintln!("chock: {warning}");
    }
    Ok(ExitCode::SUCCESS)
}
