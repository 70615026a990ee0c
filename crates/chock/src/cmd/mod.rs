//! The subcommands, one file each. `dispatch` is a single exhaustive match:
//! adding a variant to [`Command`] is a compile error until it is handled.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod sandbox;

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
    Sandbox(sandbox::Args),
}

pub(crate) fn dispatch(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Sandbox(args) => sandbox::run(args),
    }
}
