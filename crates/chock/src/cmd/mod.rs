//! The subcommands, one file each. `dispatch` is a single exhaustive match:
//! adding a variant to [`Command`] is a compile error until it is handled.

mod decisions;
mod gate;
mod gateway;
mod resume;
mod stop;
mod sync;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "chock",
    version,
    about = "Run AI coding agents on Linux with a person in control",
    propagate_version = true
)]
pub(crate) struct Cli {
    /// More diagnostics on stderr (-v info, -vv debug, -vvv trace); CHOCK_LOG overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub(crate) verbose: u8,

    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Stop agents in this repository, or on the whole machine.
    Stop(stop::StopArgs),
    /// Lift a stop (a person at a terminal only).
    Resume(resume::ResumeArgs),
    /// Wire the stop check into every agent client's hooks and git.
    Sync(sync::SyncArgs),
    /// Checks run by hooks (pre-tool stop check, git dispatcher).
    #[command(hide = true)]
    Gate(gate::GateArgs),
    /// Run an MCP server behind the stop- and policy-aware gateway.
    Gateway(gateway::GatewayArgs),
    /// Print the decision log: refusals, stops and resumes.
    Decisions(decisions::DecisionsArgs),
}

pub(crate) fn dispatch(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Stop(args) => stop::run(args),
        Command::Resume(args) => resume::run(args),
        Command::Sync(args) => sync::run(args),
        Command::Gate(args) => gate::run(args),
        Command::Gateway(args) => gateway::run(args),
        Command::Decisions(args) => decisions::run(args),
    }
}
