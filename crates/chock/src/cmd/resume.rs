//! `chock resume`: a person at a terminal lifts a stop.

use super::output::{out, outln};
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use chock_gate::ops;
use chock_gate::{Stop, StopState};
use clap::Args;

use crate::exit;

/// Lift a stop. For a person only: it refuses an agent's shell, needs stdin and stdout
/// to be a terminal, and asks for the repository's name to be typed.
///
/// Removes REPO/.chock/stop.json and the repository's entry in ~/.chock/stops/.
/// With --everywhere it asks for the word `everywhere` and lifts only the machine-wide
/// stop (~/.chock/stops/_everywhere.json); repository stops stay.
#[derive(Debug, Args)]
pub(crate) struct ResumeArgs {
    /// Lift only the machine-wide stop.
    #[arg(long)]
    everywhere: bool,
    /// The repository to resume (default: the current directory).
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
}

pub(crate) fn run(args: ResumeArgs) -> anyhow::Result<ExitCode> {
    let env = super::gate::gate_env()?;
    let actor = chock_gate::detect_from_env();
    if let Err(message) = ops::refuse_agent(&env, "chock resume", &actor) {
        eprintln!("chock: {message}");
        return Ok(ExitCode::from(exit::FAILURE));
    }
    let pending = if args.everywhere {
        ops::pending_everywhere(&env)
    } else {
        let dir = super::gate::project_dir(args.project)?;
        ops::pending_repo(&env, &dir).context("could not find the stop to lift")?
    };
    let place = match &pending.repo {
        Some(repo) => repo.main_checkout.display().to_string(),
        None => "this machine (everywhere)".to_owned(),
    };
    // The machine-wide stop reaches this repository too, and only
    // `--everywhere` lifts it.
    let everywhere = (!args.everywhere)
        .then(|| ops::pending_everywhere(&env))
        .and_then(|machine| machine.stops.into_iter().next());
    if pending.stops.is_empty() {
        if let Some(machine) = everywhere {
            eprintln!(
                "chock: no stop of {place}'s own is in force, but the machine-wide stop is, so agents here are still refused: {}; lift it with `chock resume --everywhere`",
                describe(&machine)
            );
            return Ok(ExitCode::from(exit::FAILURE));
        }
        outln!("no stop is in force for {place}; nothing to resume");
        return Ok(ExitCode::SUCCESS);
    }
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        eprintln!(
            "chock: chock resume needs a person at a terminal: stdin and stdout must both be a TTY; run it yourself in a terminal"
        );
        return Ok(ExitCode::from(exit::FAILURE));
    }
    outln!("agents are stopped for {place}:");
    for stop in &pending.stops {
        outln!("  {}: {}", stop.source.display(), describe(stop));
    }
    out!("type {:?} to resume agents: ", pending.word);
    std::io::stdout()
        .flush()
        .context("could not write the prompt")?;
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .context("could not read the answer")?;
    if answer.trim() != pending.word {
        eprintln!(
            "chock: not resumed: the answer did not match {:?}; the stop stays in force",
            pending.word
        );
        return Ok(ExitCode::from(exit::FAILURE));
    }
    let (removed, warning) = ops::lift(&env, &pending).context("could not lift the stop")?;
    outln!("resumed agents for {place}");
    for file in removed {
        outln!("  removed {}", file.display());
    }
    if let Some(warning) = warning {
        eprintln!("chock: {warning}");
    }
    if let Some(machine) = everywhere {
        eprintln!(
            "chock: the machine-wide stop is still in force, so agents here are still refused: {}; lift it with `chock resume --everywhere`",
            describe(&machine)
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// One stop in a line: its reason, who and when, or what is wrong with it
/// and what a person does about that.
fn describe(stop: &Stop) -> String {
    match &stop.state {
        StopState::InForce(file) => format!("{} (by {} at {})", file.reason, file.who, file.when),
        StopState::Broken(detail) => format!("{detail}; {}", stop.remedy()),
    }
}
