//! `chock usage`: the tokens a session used, and what the providers'
//! prompt caches saved: input tokens read from a cache are billed at a
//! tenth of the input price and tokens written to one at 1.25 times
//! (Anthropic's prices; OpenAI charges nothing for writes and reports
//! none), so the saving is the input not billed at full price.

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
    cache_read_tokens: u64,
    cache_write_tokens: u64,
}

#[derive(serde::Serialize)]
struct Total {
    calls: usize,
    input_tokens: u64,
    output_tokens: u64,
    total_tokens: u64,
    cache_read_tokens: u64,
    cache_write_tokens: u64,
    /// The share of the input's price the caches saved (0 to 1; negative
    /// when writes cost more than reads saved).
    cache_saving: f64,
}

/// What prompt caching saved of the input's price, as a fraction.
fn saving(usage: chock_log::event::Usage) -> f64 {
    if usage.input_tokens == 0 {
        return 0.0;
    }
    let full = usage.input_tokens as f64;
    let uncached = usage
        .input_tokens
        .saturating_sub(usage.cache_read_tokens + usage.cache_write_tokens)
        as f64;
    let billed =
        uncached + 0.1 * usage.cache_read_tokens as f64 + 1.25 * usage.cache_write_tokens as f64;
    (full - billed) / full
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
                    cache_read_tokens: c.usage.cache_read_tokens,
                    cache_write_tokens: c.usage.cache_write_tokens,
                })
                .collect(),
            total: Total {
                calls: s.model_calls.len(),
                input_tokens: s.usage.input_tokens,
                output_tokens: s.usage.output_tokens,
                total_tokens: s.usage.total(),
                cache_read_tokens: s.usage.cache_read_tokens,
                cache_write_tokens: s.usage.cache_write_tokens,
                cache_saving: (saving(s.usage) * 1000.0).round() / 1000.0,
            },
        };
        let line = serde_json::to_string(&report)?;
        super::output::print_result(writeln!(std::io::stdout().lock(), "{line}"))?;
        return Ok(ExitCode::from(exit::SUCCESS));
    }
    // The cache columns only for a session that used a cache.
    let cached = s.usage.cache_read_tokens + s.usage.cache_write_tokens > 0;
    let row = |first: String, at: String, model: String, u: chock_log::event::Usage| {
        let mut row = vec![first, at, model, u.input_tokens.to_string()];
        if cached {
            row.push(u.cache_read_tokens.to_string());
            row.push(u.cache_write_tokens.to_string());
        }
        row.push(u.output_tokens.to_string());
        row.push(u.total().to_string());
        row
    };
    let mut rows: Vec<Vec<String>> = s
        .model_calls
        .iter()
        .map(|c| {
            row(
                c.event_id.to_string(),
                c.at.to_string(),
                c.model.clone(),
                c.usage,
            )
        })
        .collect();
    rows.push(row(
        "total".to_owned(),
        String::new(),
        format!("{} calls", s.model_calls.len()),
        s.usage,
    ));
    let mut text = if cached {
        let header = [
            "EVENT",
            "AT",
            "MODEL",
            "INPUT",
            "CACHE READ",
            "CACHE WRITE",
            "OUTPUT",
            "TOTAL",
        ];
        super::output::render_table(&header, &fixed(rows), &[3, 4, 5, 6, 7])
    } else {
        let header = ["EVENT", "AT", "MODEL", "INPUT", "OUTPUT", "TOTAL"];
        super::output::render_table(&header, &fixed(rows), &[3, 4, 5])
    };
    if cached {
        let share = s.usage.cache_read_tokens as f64 * 100.0 / s.usage.input_tokens.max(1) as f64;
        text.push_str(&format!(
            "\nprompt cache: {} of {} input tokens read from a cache ({share:.0}%), {} written; the input cost {:.0}% less than uncached (reads at 0.1 and writes at 1.25 times the input price)\n",
            s.usage.cache_read_tokens,
            s.usage.input_tokens,
            s.usage.cache_write_tokens,
            saving(s.usage) * 100.0,
        ));
    }
    super::output::print_result(write!(std::io::stdout().lock(), "{text}"))?;
    Ok(ExitCode::from(exit::SUCCESS))
}

/// Rows of one width as the table takes them.
fn fixed<const N: usize>(rows: Vec<Vec<String>>) -> Vec<[String; N]> {
    rows.into_iter()
        .map(|row| {
            let mut cells = row.into_iter();
            std::array::from_fn(|_| cells.next().unwrap_or_default())
        })
        .collect()
}
