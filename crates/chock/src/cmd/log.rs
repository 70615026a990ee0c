//! `chock log`: a session's events as JSON lines, exactly as stored.

use std::io::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use chock_log::{EventId, Follower, StateDir, locks, read_after};

use crate::exit;

/// Print a session's log as JSON lines, one event a line, exactly as stored.
///
/// `--from N` prints the events after N ("I already have N"), found without
/// reading the log from the start. `--follow` keeps printing events as they
/// are appended and returns when the session ends (an ending by handover is
/// followed into the next owner's events) or when no process owns the log
/// any more. Lines that are not valid events are reported on stderr with
/// their line number and skipped.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The session id (see `chock sessions`).
    session: String,

    /// Print only events with ids above N.
    #[arg(long, value_name = "N", default_value_t = 0)]
    from: u64,

    /// Keep printing events as they are appended, until the session ends.
    #[arg(long, short)]
    follow: bool,
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let state = StateDir::resolve().context("cannot read the session log")?;
    let (_, path) = state.find_session(&args.session)?;
    let from = EventId(args.from);
    let mut out = std::io::stdout().lock();
    if !args.follow {
        let batch = read_after(&path, from)?;
        for problem in &batch.problems {
            eprintln!("chock: warning: {}: {problem}", path.display());
        }
        let written = batch
            .events
            .iter()
            .try_for_each(|e| writeln!(out, "{}", e.line));
        super::output::print_result(written)?;
        return Ok(ExitCode::from(exit::SUCCESS));
    }
    let mut follower = Follower::new(&path, from)?;
    loop {
        let events = follower.next(Duration::from_millis(500))?;
        for problem in follower.take_problems() {
            eprintln!("chock: warning: {}: {problem}", path.display());
        }
        let written = events
            .iter()
            .try_for_each(|e| writeln!(out, "{}", e.line))
            .and_then(|()| out.flush());
        if !super::output::print_result(written)? {
            break;
        }
        if !events.is_empty() {
            continue;
        }
        match follower.ended() {
            Some(ending) if ending.is_over() => break,
            Some(_) => {}
            None => {
                if !locks::is_owned(&path).unwrap_or(true) {
                    eprintln!(
                        "chock: no process owns {} and it has no ending: the session is not running",
                        path.display()
                    );
                    break;
                }
            }
        }
    }
    Ok(ExitCode::from(exit::SUCCESS))
}
