//! `chock usage`: the tokens a session used.

use std::io::Write as _;
use std::process::ExitCode;

use chock_log::Timestamp;

use super::output::OfSession;
use crate::exit;

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

pub(crate) fn run(of: OfSession) -> anyhow::Result<ExitCode> {
    let (id, s) = of.fold()?;
    if of.json {
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
