//! `chock approve`: answer the question a running session is waiting on.

use std::io::{BufRead as _, Write as _};
use std::process::ExitCode;

use anyhow::Context as _;
use chock_log::StateDir;
use chock_log::event::RequestKind;
use chock_runner::approve::{Answer, deliver, deliver_text, pending};

use crate::exit;

/// Answer a session's approval request: show the question it waits on and
/// send your yes or no, or your typed answer when the agent asked you a
/// question (ask_user).
///
/// The session must be running on this machine: the answer goes over its
/// approve.sock, beside its log in the state directory. The question is
/// printed on stderr, then one line is read from stdin: y or yes allows the
/// action, n or no refuses it (anything else asks again; end of input
/// refuses nothing and exits 1). For a question, the line is the answer. Exit code 0 when the session took the
/// answer, 1 otherwise (no such session, nothing pending, nobody listening).
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The session's id, as `chock sessions` lists it.
    session: String,
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let state = StateDir::resolve().context("cannot find the state directory")?;
    let pending = pending(&state, &args.session)?;
    eprintln!(
        "session {} asks (request {}):\n  {}",
        pending.session.as_str(),
        pending.request.request_id,
        pending.request.question
    );
    if pending.request.kind == RequestKind::Question {
        let Some(text) = read_text()? else {
            eprintln!("chock: no answer given; the session is still waiting");
            return Ok(ExitCode::from(exit::FAILURE));
        };
        deliver_text(&pending, &text)?;
        eprintln!(
            "chock: answered the question of session {}",
            pending.session.as_str()
        );
        return Ok(ExitCode::from(exit::SUCCESS));
    }
    let Some(answer) = read_answer()? else {
        eprintln!("chock: no answer given; the session is still waiting");
        return Ok(ExitCode::from(exit::FAILURE));
    };
    deliver(&pending, answer)?;
    let what = match answer {
        Answer::Yes => "allowed",
        Answer::No => "refused",
    };
    eprintln!(
        "chock: {what} {} for session {}",
        pending.request.action,
        pending.session.as_str()
    );
    Ok(ExitCode::from(exit::SUCCESS))
}

/// Reads a non-empty line from stdin; `None` at end of input.
fn read_text() -> anyhow::Result<Option<String>> {
    prompt("your answer: ", |text| {
        (!text.is_empty()).then(|| text.to_owned())
    })
}

/// Reads y/n from stdin until one is given; `None` at end of input.
fn read_answer() -> anyhow::Result<Option<Answer>> {
    prompt("allow it? [y/n] ", |text| {
        match text.to_ascii_lowercase().as_str() {
            "y" | "yes" => Some(Answer::Yes),
            "n" | "no" => Some(Answer::No),
            _ => {
                eprintln!("please answer y or n");
                None
            }
        }
    })
}

/// Shows `question` on stderr and reads lines until `accept` takes one
/// (trimmed); `None` at end of input.
fn prompt<T>(question: &str, accept: impl Fn(&str) -> Option<T>) -> anyhow::Result<Option<T>> {
    let stdin = std::io::stdin();
    let mut line = String::new();
    loop {
        eprint!("{question}");
        let _ = std::io::stderr().flush();
        line.clear();
        if stdin
            .lock()
            .read_line(&mut line)
            .context("cannot read stdin")?
            == 0
        {
            return Ok(None);
        }
        if let Some(value) = accept(line.trim()) {
            return Ok(Some(value));
        }
    }
}
