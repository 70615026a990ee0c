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
    /// The subagents below the session, each with its tokens.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    subagents: Vec<Subagent>,
    /// The session's and its subagents' tokens together.
    #[serde(skip_serializing_if = "Option::is_none")]
    tree: Option<TreeTotal>,
}

#[derive(serde::Serialize)]
struct Subagent {
    session: String,
    parent: String,
    input_tokens: u64,
    output_tokens: u64,
    total_tokens: u64,
}

#[derive(serde::Serialize)]
struct TreeTotal {
    sessions: usize,
    input_tokens: u64,
    output_tokens: u64,
    total_tokens: u64,
}

/// The subagents below `id` and the tree's total, when it has any.
fn tree(id: &chock_log::SessionId) -> (Vec<Subagent>, Option<TreeTotal>, Vec<(usize, String)>) {
    let Ok(state) = chock_log::StateDir::resolve() else {
        return (Vec::new(), None, Vec::new());
    };
    let tree = chock_runner::subagent::tree_usage(&state, id);
    if tree.rows.len() < 2 {
        return (Vec::new(), None, Vec::new());
    }
    let (input, output) = tree.total();
    let below = &tree.rows[1..];
    let subagents = below
        .iter()
        .map(|r| Subagent {
            session: r.id.clone(),
            parent: r.row.parent.clone().unwrap_or_default(),
            input_tokens: r.row.input_tokens,
            output_tokens: r.row.output_tokens,
            total_tokens: r.row.input_tokens + r.row.output_tokens,
        })
        .collect();
    let depths = below.iter().map(|r| (r.depth, r.id.clone())).collect();
    let total = TreeTotal {
        sessions: tree.rows.len(),
        input_tokens: input,
        output_tokens: output,
        total_tokens: input + output,
    };
    (subagents, Some(total), depths)
}

/// The subagents' table: each one's tokens, then the tree's.
fn tree_table(subagents: &[Subagent], depths: &[(usize, String)], total: &TreeTotal) -> String {
    let mut rows: Vec<[String; 4]> = subagents
        .iter()
        .zip(depths)
        .map(|(s, (depth, _))| {
            [
                format!("{}└ {}", "  ".repeat(depth - 1), s.session),
                s.input_tokens.to_string(),
                s.output_tokens.to_string(),
                s.total_tokens.to_string(),
            ]
        })
        .collect();
    rows.push([
        format!("tree ({} sessions)", total.sessions),
        total.input_tokens.to_string(),
        total.output_tokens.to_string(),
        total.total_tokens.to_string(),
    ]);
    let header = ["SUBAGENT", "INPUT", "OUTPUT", "TOTAL"];
    super::output::render_table(&header, &rows, &[1, 2, 3])
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
    let (subagents, tree_total, depths) = tree(&id);
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
            subagents,
            tree: tree_total,
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
    if let Some(total) = &tree_total {
        text.push('\n');
        text.push_str(&tree_table(&subagents, &depths, total));
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
