//! `chock usage`: the tokens a session used.

use std::io::Write as _;
use std::process::ExitCode;

use anyhow::Context as _;
use chock_log::{StateDir, fold_log};

use crate::exit;

/// Show the tokens a session used: one row per model call, then the total.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The session id (see `chock sessions`).
    session: String,
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let state = StateDir::resolve().context("cannot read the session log")?;
    let (_, path) = state.find_session(&args.session)?;
    let folded = fold_log(&path)?;
    for problem in &folded.problems {
        eprintln!("chock: warning: {}: {problem}", path.display());
    }
    let s = folded.state;
    let mut rows: Vec<[String; 6]> = s
        .model_calls
        .iter()
        .map(|c| {
            [
                c.event_id.to_string(),
                c.at.to_string(),
                c.model.clone(),
                c.usage.input_tokens.to_string(),
                c.usage.output_tokens.to_string(),
                c.usage.total().to_string(),
            ]
        })
        .collect();
    rows.push([
        "total".to_owned(),
        String::new(),
        format!("{} calls", s.model_calls.len()),
        s.usage.input_tokens.to_string(),
        s.usage.output_tokens.to_string(),
        s.usage.total().to_string(),
    ]);
    let header = ["EVENT", "AT", "MODEL", "INPUT", "OUTPUT", "TOTAL"];
    let text = super::output::render_table(&header, &rows, &[3, 4, 5]);
    super::output::print_result(write!(std::io::stdout().lock(), "{text}"))?;
    Ok(ExitCode::from(exit::SUCCESS))
}
