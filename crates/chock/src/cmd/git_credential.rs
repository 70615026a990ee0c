//! `chock git-credential`: the credential helper git runs inside the
//! sandbox of an approved `git push`. Hidden from the top-level help;
//! docs/git-shim.md ("Pushing and credentials") documents it.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args as ClapArgs;

use crate::exit;

/// Git's credential helper for a push Chock runs: asks the push's credential socket.
///
/// Git runs this (as `credential.helper`) inside the sandbox of an approved `git push`; it
/// reads git's request on stdin, sends it to the socket that exists only for that call, and
/// prints the answer for git. The person's own `git credential fill` answers on the host, for
/// the pushed remote only. Not meant to be run by hand.
#[derive(Debug, ClapArgs)]
pub(crate) struct Args {
    /// The push's credential socket.
    #[arg(long, value_name = "PATH")]
    socket: PathBuf,
    /// The operation git asks for: get, store or erase.
    operation: String,
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    chock_runner::push::git_credential(
        &args.socket,
        &args.operation,
        std::io::stdin().lock(),
        std::io::stdout().lock(),
    )
    .context("git-credential")?;
    Ok(ExitCode::from(exit::SUCCESS))
}
