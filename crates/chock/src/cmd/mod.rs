//! The subcommands, one file each. `dispatch` is a single exhaustive match:
//! adding a variant to [`Command`] is a compile error until it is handled.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod daemon;
mod log;
mod output;
mod plan;
mod policy;
mod sandbox;
mod sandbox_net;
mod sessions;
mod usage;

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
    Daemon(daemon::DaemonArgs),
    Sessions(sessions::Args),
    Log(log::Args),
    Usage(usage::Args),
    Plan(plan::Args),
    Sandbox(sandbox::Args),
    /// Explain how the policy answers an action, and check policy files.
    Policy(policy::PolicyArgs),
}

pub(crate) fn dispatch(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Daemon(args) => daemon::run(args),
        Command::Sessions(args) => sessions::run(args),
        Command::Log(args) => log::run(args),
        Command::Usage(args) => usage::run(args),
        Command::Plan(args) => plan::run(args),
        Command::Sandbox(args) => sandbox::run(args),
        Command::Policy(args) => policy::run(args),
    }
}
