//! `chock sessions`: every session in the state directory, folded.

use std::collections::{HashMap, HashSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use chock_control::{Address, Client};
use chock_log::{LazyLocks, RowStatus, SessionRow, StateDir, list_sessions};

use crate::exit;

/// List sessions, newest first.
///
/// The table shows each session's id, when it started (UTC), its status
/// (running, waiting for an approval, or ended with a reason; a session
/// whose log has no ending and that no process holds ended crashed: its
/// process died without writing an ending),
/// title, model and number of events; a subagent is listed under the
/// session that spawned it. Sessions whose log cannot be read are reported
/// on stderr and left out. With --from-daemon or --daemon the rows are the
/// daemon's answer to `list` for one project, asked through its socket, as
/// a client on another machine would.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Only sessions of this project directory [from the daemon: the
    /// current directory when not given].
    project: Option<PathBuf>,

    /// One JSON object per line (the daemon's list row), stable for scripts.
    #[arg(long)]
    json: bool,

    /// Ask the daemon instead of reading the state directory: the one at
    /// $CHOCK_DAEMON, else daemon.sock in the state directory.
    #[arg(long)]
    from_daemon: bool,

    /// Ask the daemon at this address (unix:/path or host:port) instead of
    /// reading the state directory.
    #[arg(long, value_name = "ADDRESS", value_parser = Address::parse)]
    daemon: Option<Address>,
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let state = StateDir::resolve().context("cannot list sessions")?;
    let asked = args.from_daemon || args.daemon.is_some();
    let rows = if asked {
        from_daemon(&state, args.daemon.clone(), args.project.as_deref())?
    } else {
        from_state(&state, args.project.as_deref())
    };
    let mut out = std::io::stdout().lock();
    let written = if args.json {
        rows.iter().try_for_each(|row| {
            let line = serde_json::to_string(row).map_err(std::io::Error::other)?;
            writeln!(out, "{line}")
        })
    } else if rows.is_empty() && asked {
        writeln!(
            out,
            "the daemon lists no session of this project: start one with 'chock run'"
        )
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
    // The process exits next: handing ten thousand rows back to the
    // allocator one by one would cost more than everything after the
    // listing.
    std::mem::forget(rows);
    Ok(ExitCode::from(exit::SUCCESS))
}

/// The rows the state directory holds, each log folded (or its index
/// entry, where the log has not changed).
fn from_state(state: &StateDir, project: Option<&Path>) -> Vec<SessionRow> {
    // Every row's owner is looked up: read /proc/locks while listing.
    let mut locks = LazyLocks::ahead();
    let listed = list_sessions(state, project);
    for (path, why) in &listed.skipped {
        eprintln!("chock: warning: skipped {}: {why}", path.display());
    }
    listed
        .sessions
        .into_iter()
        .map(|l| l.into_row(&mut locks))
        .collect()
}

/// The rows the daemon at `address` lists for `project`.
fn from_daemon(
    state: &StateDir,
    address: Option<Address>,
    project: Option<&Path>,
) -> anyhow::Result<Vec<SessionRow>> {
    let address = match address {
        Some(address) => address,
        None => Address::from_env_or_default(state.root())
            .with_context(|| format!("${}", chock_control::DAEMON_ENV))?,
    };
    let project = match project {
        Some(p) => p.to_owned(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let project = project
        .canonicalize()
        .with_context(|| format!("cannot use the project directory {}", project.display()))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the client's runtime")?;
    let lines = runtime
        .block_on(Client::new(address).list(&project))
        .map_err(|err| anyhow::anyhow!("{err}"))?;
    lines
        .iter()
        .map(|line| {
            line.session_row().map_err(|err| {
                anyhow::anyhow!("the daemon sent a row this chock cannot read: {err}")
            })
        })
        .collect()
}

fn status(row: &SessionRow) -> String {
    let text = match (&row.status, &row.reason) {
        (RowStatus::Ended, Some(reason)) => return format!("ended: {}", reason.as_str()),
        (RowStatus::Waiting, _) => "waiting for approval",
        (RowStatus::Retrying, _) => "waiting for the provider",
        (other, _) => other.as_str(),
    };
    // Not ended, nobody holds the log, and no event yet: a session being
    // born, or one whose process died before its first event.
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
/// Linear in the rows: each row's children are found once, by id.
fn nested(rows: &[SessionRow]) -> Vec<(usize, &SessionRow)> {
    let listed: HashSet<&str> = rows.iter().map(|r| r.id.as_str()).collect();
    let mut children: HashMap<&str, Vec<&SessionRow>> = HashMap::new();
    let mut roots = Vec::new();
    for row in rows {
        match row.parent.as_deref().filter(|p| listed.contains(p)) {
            Some(parent) => children.entry(parent).or_default().push(row),
            None => roots.push(row),
        }
    }
    let mut out = Vec::with_capacity(rows.len());
    let mut stack: Vec<(usize, &SessionRow)> = roots.into_iter().rev().map(|r| (0, r)).collect();
    while let Some((depth, row)) = stack.pop() {
        out.push((depth, row));
        // Taken out once: a session listed as its own ancestor (a log
        // that says so) cannot make the walk go round.
        if let Some(mut kids) = children.remove(row.id.as_str()) {
            kids.sort_by_key(|r| std::cmp::Reverse(r.started_at));
            stack.extend(kids.into_iter().map(|c| (depth + 1, c)));
        }
    }
    // Rows whose parents only lead round to each other stand alone.
    if out.len() < rows.len() {
        let shown: HashSet<&str> = out.iter().map(|(_, r)| r.id.as_str()).collect();
        out.extend(
            rows.iter()
                .filter(|r| !shown.contains(r.id.as_str()))
                .map(|r| (0, r)),
        );
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

#[cfg(test)]
mod tests {
    use super::*;
    use chock_log::Timestamp;

    fn row(id: &str, parent: Option<&str>, started: i64) -> SessionRow {
        SessionRow {
            id: id.to_owned(),
            parent: parent.map(str::to_owned),
            started_at: Some(Timestamp::from_unix_millis(started)),
            ..SessionRow::default()
        }
    }

    #[test]
    fn subagents_nest_under_their_parents_and_a_loop_of_parents_still_shows() {
        // Newest first, as a listing gives them.
        let rows = [
            row("loop-b", Some("loop-a"), 9),
            row("loop-a", Some("loop-b"), 8),
            row("orphan", Some("gone"), 7),
            row("grandchild", Some("child-2"), 6),
            row("child-2", Some("parent"), 5),
            row("child-1", Some("parent"), 4),
            row("other", None, 3),
            row("parent", None, 2),
        ];
        let shown: Vec<(usize, &str)> = nested(&rows)
            .into_iter()
            .map(|(depth, r)| (depth, r.id.as_str()))
            .collect();
        assert_eq!(
            shown,
            [
                (0, "orphan"),
                (0, "other"),
                (0, "parent"),
                (1, "child-1"),
                (1, "child-2"),
                (2, "grandchild"),
                (0, "loop-b"),
                (0, "loop-a"),
            ]
        );
    }
}
