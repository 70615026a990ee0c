//! `chock sessions`: every session in the state directory, folded.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use chock_log::{LazyLocks, RowStatus, SessionRow, StateDir, list_sessions};

use crate::exit;

/// List sessions, newest first.
///
/// The table shows each session's id, when it started (UTC), its status
/// (running, waiting for an approval, or ended with a reason; "(no process)"
/// when it has not ended but no process holds its log, as after a crash),
/// title, model and number of events; a subagent is listed under the
/// session that spawned it. Sessions whose log cannot be read are reported
/// on stderr and left out.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Only sessions of this project directory.
    project: Option<PathBuf>,

    /// One JSON object per line (the daemon's list row), stable for scripts.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let state = StateDir::resolve().context("cannot list sessions")?;
    let listed = list_sessions(&state, args.project.as_deref());
    for (path, why) in &listed.skipped {
        eprintln!("chock: warning: skipped {}: {why}", path.display());
    }
    let mut locks = LazyLocks::default();
    let rows: Vec<SessionRow> = listed
        .sessions
        .into_iter()
        .map(|l| l.into_row(&mut locks))
        .collect();
    let mut out = std::io::stdout().lock();
    let written = if args.json {
        rows.iter().try_for_each(|row| {
            let line = serde_json::to_string(row).map_err(std::io::Error::other)?;
            writeln!(out, "{line}")
        })
    } else if rows.is_empty() {
        writeln!(
            out,
            "no sessions in {}: start one with 'chock run'",
            state.root().display()
        )
    } else {
        write!(out, "{}", table(&rows))
    };
    super::output::print_result(written)?;
    Ok(ExitCode::from(exit::SUCCESS))
}

fn status(row: &SessionRow) -> String {
    let text = match (&row.status, &row.reason) {
        (RowStatus::Ended, Some(reason)) => return format!("ended: {}", reason.as_str()),
        (RowStatus::Waiting, _) => "waiting for approval",
        (RowStatus::Retrying, _) => "waiting for the provider",
        (other, _) => other.as_str(),
    };
    // Not ended, yet nobody holds the log: its process died.
    if row.owned == Some(false) {
        format!("{text} (no process)")
    } else {
        text.to_owned()
    }
}

fn started(row: &SessionRow) -> String {
    row.started_at.map_or_else(String::new, |t| {
        let (y, mo, d, h, mi, _) = t.civil();
        format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}")
    })
}

fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let mut s: String = text.chars().take(max - 1).collect();
        s.push('…');
        s
    }
}

/// The rows with each subagent right under its parent, oldest first, and
/// how deep each is; a subagent whose parent is not listed stands alone.
fn nested(rows: &[SessionRow]) -> Vec<(usize, &SessionRow)> {
    let listed = |id: &str| rows.iter().any(|r| r.id == id);
    let mut out = Vec::with_capacity(rows.len());
    let mut stack: Vec<(usize, &SessionRow)> = rows
        .iter()
        .filter(|r| r.parent.as_deref().is_none_or(|p| !listed(p)))
        .rev()
        .map(|r| (0, r))
        .collect();
    while let Some((depth, row)) = stack.pop() {
        out.push((depth, row));
        let mut children: Vec<&SessionRow> = rows
            .iter()
            .filter(|r| r.parent.as_deref() == Some(row.id.as_str()))
            .collect();
        children.sort_by_key(|r| std::cmp::Reverse(r.started_at));
        if out.len() + stack.len() <= rows.len() {
            stack.extend(children.into_iter().map(|c| (depth + 1, c)));
        }
    }
    out
}

fn table(rows: &[SessionRow]) -> String {
    let cells: Vec<[String; 6]> = nested(rows)
        .into_iter()
        .map(|(depth, r)| {
            let id = if depth == 0 {
                r.id.clone()
            } else {
                format!("{}└ {}", "  ".repeat(depth - 1), r.id)
            };
            [
                id,
                started(r),
                status(r),
                clip(r.title.as_deref().unwrap_or("-"), 40),
                r.model.clone().unwrap_or_else(|| "-".to_owned()),
                r.events.to_string(),
            ]
        })
        .collect();
    let header = ["ID", "STARTED (UTC)", "STATUS", "TITLE", "MODEL", "EVENTS"];
    super::output::render_table(&header, &cells, &[5])
}
