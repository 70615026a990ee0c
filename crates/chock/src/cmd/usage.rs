//! `chock usage`: the tokens a session used.

use std::io::Write as _;
use std::process::ExitCode;

use anyhow::Context as _;
use chock_log::{StateDir, Timestamp, fold_log};

use crate::exit;

/// Show the tokens a session used: one row per model call, then the total.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The session id (see `chock sessions`).
    session: String,

    /// One JSON object (the calls and the total) on one line, stable for scripts.
    #[arg(long)]
    json: bool,
}

/// `chock usage --json`.
#[derive(serde::Serialize)]
struct Report<'a> {
    session: &'a str,
    calls: Vec<Call<'a>>,
    total: Total,
}

#[derive(serde::Serialize)]
struct Call<'a> {
    event: u64,
    at: Timestamp,
    model: &'a str,
    input_tokens: u64,
    output_tokens: u64,
    total_tokens: u64,
}

#[derive(serde::Serialize)]
struct Total {
    calls: usize,
    input_tokens: u64,
    output_tokens: u64,
    total_tokens: u64,
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let state = StateDir::resolve().context("cannot read the session log")?;
    let (id, path) = state.find_session(&args.session)?;
    let folded = fold_log(&path)?;
    for problem in &folded.problems {
        eprintln!("chock: warning: {}: {problem}", path.display());
    }
    let s = folded.state;
    if args.json {
        let report = Report {
            session: id.as_str(),
            calls: s
                .model_calls
                .iter()
                .map(|c| Call {
                    event: c.event_id.0,
                    at: c.at,
                    model: &c.model,
                    input_tokens: c.usage.input_tokens,
                    output_tokens: c.usage.output_tokens,
                    total_tokens: c.usage.total(),
                })
                .collect(),
            total: Total {
                calls: s.model_calls.len(),
                input_tokens: s.usage.input_tokens,
                output_tokens: s.usage.output_tokens,
                total_tokens: s.usage.total(),
            },
        };
        let line = serde_json::to_string(&report)?;
        super::output::print_result(writeln!(std::io::stdout().lock(), "{line}"))?;
        return Ok(ExitCode::from(exit::SUCCESS));
    }
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
