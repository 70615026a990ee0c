//! `chock gate`: the checks other programs run (agent clients' pre-tool hooks,
//! the git dispatcher). Hidden from the top-level help; `docs/stop.md` and
//! `docs/cli.md` document them.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use chock_gate::git::GitVerdict;
use chock_gate::{Agent, StopPaths, decisions, hookcheck, ops};
use clap::{Args, Subcommand};

use crate::exit;

/// Checks run by hooks: the pre-tool stop check and the git dispatcher's check.
#[derive(Debug, Args)]
pub(crate) struct GateArgs {
    #[command(subcommand)]
    command: GateCommand,
}

#[derive(Debug, Subcommand)]
enum GateCommand {
    /// Read one agent client's pre-tool hook input on stdin and refuse the call while a stop
    /// is in force. Exit 0 lets the call run; a refusal exits 2 (Cline: 0 with {"cancel":true})
    /// with `stopped: <reason>` on stderr and the client's JSON deny form on stdout.
    /// Input that is not JSON or lacks the client's documented fields is refused too.
    StopCheck {
        /// The client whose hook input and answer format to use.
        #[arg(long, value_name = "NAME")]
        client: String,
    },
    /// Run by the git dispatcher: refuse an agent's commit or push while a stop is in force
    /// (exit 1); a person's passes. Agents are told apart by their environment (see docs/stop.md).
    GitCheck {
        /// The git hook being run (pre-commit or pre-push).
        hook: String,
    },
}

/// The stop registry and decision log of this user.
pub(crate) fn gate_env() -> anyhow::Result<ops::Env> {
    let paths = StopPaths::from_env().context("cannot locate the stop registry")?;
    Ok(ops::Env {
        paths,
        log: decisions::default_path().ok(),
    })
}

/// `--project`, else the current directory.
pub(crate) fn project_dir(project: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    match project {
        Some(dir) => Ok(dir),
        None => std::env::current_dir().context("cannot read the current directory"),
    }
}

pub(crate) fn run(args: GateArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        GateCommand::StopCheck { client } => stop_check(&client),
        GateCommand::GitCheck { hook } => git_check(&hook),
    }
}

/// Hook inputs are small; a runaway writer must not exhaust memory.
const MAX_HOOK_INPUT: u64 = 16 * 1024 * 1024;

fn stop_check(client: &str) -> anyhow::Result<ExitCode> {
    let Some(client) = Agent::from_name(client).filter(|a| *a != Agent::Chock) else {
        // An unknown client cannot be answered in its own terms; refuse in
        // the most common form (exit 2, reason on stderr).
        eprintln!(
            "stopped: unknown client {client:?} for the stop check; known clients: {}",
            known_clients()
        );
        return Ok(ExitCode::from(exit::HOOK_REFUSED));
    };
    let mut input = Vec::new();
    let read = std::io::stdin()
        .lock()
        .take(MAX_HOOK_INPUT)
        .read_to_end(&mut input);
    let outcome = match (read, StopPaths::from_env()) {
        (Ok(_), Ok(paths)) => hookcheck::run(
            client,
            &input,
            &paths,
            decisions::default_path().ok().as_deref(),
        ),
        (Err(err), _) => hookcheck::deny(
            client,
            &format!("refused: cannot read the hook input ({err})"),
        ),
        (_, Err(err)) => hookcheck::deny(
            client,
            &format!("stopped: the stop registry cannot be located ({err})"),
        ),
    };
    // Write errors are ignored on purpose: the exit code carries the answer.
    let _ = std::io::stdout().write_all(outcome.stdout.as_bytes());
    let _ = std::io::stderr().write_all(outcome.stderr.as_bytes());
    Ok(ExitCode::from(outcome.exit))
}

fn known_clients() -> String {
    chock_gate::sync::CLIENTS
        .iter()
        .map(|a| a.name())
        .collect::<Vec<_>>()
        .join(", ")
}

fn git_check(hook: &str) -> anyhow::Result<ExitCode> {
    let repo = std::env::current_dir().context("cannot read the current directory")?;
    let paths = match StopPaths::from_env() {
        Ok(paths) => paths,
        Err(err) => {
            eprintln!("stopped: the stop registry cannot be located ({err})");
            return Ok(ExitCode::from(exit::FAILURE));
        }
    };
    match chock_gate::git::check_from_env(
        hook,
        &repo,
        &paths,
        decisions::default_path().ok().as_deref(),
    ) {
        GitVerdict::Pass => Ok(ExitCode::SUCCESS),
        GitVerdict::Refuse(message) => {
            eprintln!("{message}");
            Ok(ExitCode::from(exit::FAILURE))
        }
    }
}
