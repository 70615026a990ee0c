//! The `chock` command line, built as two programs from this one library:
//!
//! - `chock` (`src/main.rs`), the small front: it runs `chock sandbox`
//!   without `--net` and `chock gate` (the hooks' checks) itself and hands
//!   every other command line, unchanged, to the full program with
//!   `execve` (same process, same pid, same open descriptors). See
//!   [`front_main`].
//! - `chock-full` (`src/full.rs`), every subcommand: parse the command
//!   line, install tracing, hand each subcommand to the library crate that
//!   owns it, and turn the outcome into a documented exit code. See
//!   [`full_main`].
//!
//! Why two: starting a program costs in proportion to the pointers in its
//! static data, which the dynamic linker relocates before `main` (about
//! 120 copy-on-write page faults for the full program, which carries the
//! daemon, serve, the gateway and the runner). A sandboxed command started
//! from a shell, and an agent client's hook before every tool call, pay
//! that start every time; the front carries only the sandbox and the gate,
//! so it starts like a small C program. docs/architecture.md has the
//! figures.
//!
//! No behaviour lives here; see `cmd/` for the one file per subcommand that
//! adapts clap arguments to a library call.

#![deny(clippy::print_stdout)]

mod cmd;
mod exit;
mod front;
mod logging;
mod report;

use std::process::ExitCode;

use clap::Parser;

pub use front::main as front_main;
pub use report::error_line;

/// The full program's `main`: every subcommand.
#[must_use]
pub fn full_main() -> ExitCode {
    let cli = cmd::Cli::parse();
    logging::install(cli.verbose);
    finish(cmd::dispatch(cli.command))
}

/// Turns a subcommand's outcome into the exit code, printing an error the
/// way every error a person sees is printed.
fn finish(outcome: anyhow::Result<ExitCode>) -> ExitCode {
    match outcome {
        Ok(code) => code,
        Err(err) => {
            eprintln!("{}", error_line(&err));
            if err.downcast_ref::<exit::Usage>().is_some() {
                ExitCode::from(exit::USAGE)
            } else {
                ExitCode::from(exit::FAILURE)
            }
        }
    }
}
