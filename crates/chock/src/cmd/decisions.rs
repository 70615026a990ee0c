//! `chock decisions`: print the decision log.

use super::output::outln;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use chock_gate::decisions::{self, Tail};
use clap::Args;

/// Print the decision log (STATE_DIR/decisions.jsonl): every refused call (`block`) and
/// every stop and resume (`chock-stop`), oldest first.
#[derive(Debug, Args)]
pub(crate) struct DecisionsArgs {
    /// Keep printing lines as they are appended, until interrupted.
    #[arg(long, short)]
    follow: bool,
    /// Print the JSON lines as stored instead of one readable row each.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: DecisionsArgs) -> anyhow::Result<ExitCode> {
    let path = decisions::default_path().context("cannot locate the state directory")?;
    let mut tail = Tail::new(path);
    loop {
        for line in tail.poll().context("cannot read the decision log")? {
            if args.json {
                outln!("{line}");
            } else {
                outln!("{}", decisions::render(&line));
            }
        }
        if !args.follow {
            return Ok(ExitCode::SUCCESS);
        }
        // Polling keeps this portable and cheap; a quarter second is below
        // what a person watching notices.
        std::thread::sleep(Duration::from_millis(250));
    }
}
