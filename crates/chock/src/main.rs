//! The `chock` binary: parse the command line, install tracing, hand each
//! subcommand to the library crate that owns it, and turn the outcome into a
//! documented exit code. No behaviour lives here; see `cmd/` for the one
//! file per subcommand that adapts clap arguments to a library call.

mod cmd;
mod exit;
mod logging;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cmd::Cli::parse();
    logging::install(cli.verbose);
    match cmd::dispatch(cli.command) {
        Ok(code) => code,
        Err(err) => {
            // `{:#}` prints the whole context chain on one line, which is the
            // shape every error a person sees takes: what failed, then why.
            eprintln!("chock: {err:#}");
            ExitCode::from(exit::FAILURE)
        }
    }
}
