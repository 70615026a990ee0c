//! `chock workspace`: the sessions' git worktrees, found by session id.

use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;
use chock_log::event::EndReason;
use chock_log::{StateDir, Status};
use chock_runner::workspace::{self, Entry};

use crate::exit;

/// List, inspect, carry back or remove the sessions' workspaces.
///
/// Each session works in a git worktree of its project under the state
/// directory (workspaces/<session id>), on branch chock/<session id>.
/// See docs/workspaces.md.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    verb: Verb,
}

#[derive(Debug, clap::Subcommand)]
enum Verb {
    /// Every session's workspace: id, status, directory, branch.
    List {
        /// One JSON object per line, one per workspace, stable for scripts.
        #[arg(long)]
        json: bool,
    },
    /// One workspace: directory, branch, starting commit, the session's
    /// commits and uncommitted files.
    Show {
        /// The session id (see `chock sessions`).
        session: String,
    },
    /// Everything the session changed since its workspace started, as one
    /// diff (its commits and what it has not committed).
    Diff {
        /// The session id.
        session: String,
    },
    /// Carry the session's commits into your repository, in the mode
    /// chock.zon's `.apply = .{ .mode = ... }` names (fast_forward unless
    /// set; branch, rebase, merge). Shows exactly what it will do and asks
    /// (the workspace.apply approval) unless the policy allows it outright.
    /// When workspace.integrate is deny, the work is parked at
    /// refs/chock/parked/<id> instead and no branch of yours moves.
    Apply {
        /// The session id.
        session: String,
        /// Answer yes to the workspace.apply question (for scripts).
        #[arg(long)]
        yes: bool,
    },
    /// Remove the workspace's directory, and its branch when git agrees
    /// the branch is merged (otherwise the branch is kept and named).
    Discard {
        /// The session id.
        session: String,
    },
    /// Remove the workspaces nobody needs any more: those whose work was
    /// applied, and those of sessions that ended more than --older-than
    /// days ago leaving no work (no commit your HEAD lacks, no uncommitted
    /// file). A running session's workspace is never removed; the daemon
    /// runs this with the defaults once a day. See docs/workspaces.md.
    Prune {
        /// Age in days after which an ended session's workspace may go.
        #[arg(long, value_name = "DAYS", default_value_t = 7)]
        older_than: u64,
        /// Also remove the checkouts of old sessions with work left: what
        /// they left uncommitted is committed on their branch first, and a
        /// branch with commits merged nowhere else is kept.
        #[arg(long)]
        unapplied: bool,
        /// Say what would be removed, remove nothing.
        #[arg(long)]
        dry_run: bool,
    },
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let state = StateDir::resolve().context("cannot find the state directory")?;
    match args.verb {
        Verb::List { json } => list(&state, json),
        Verb::Show { session } => {
            let entry = workspace::find(&state, &session)?;
            caught_up(&state, &entry);
            print(&workspace::show(&state, &entry)?)
        }
        Verb::Diff { session } => {
            let entry = workspace::find(&state, &session)?;
            caught_up(&state, &entry);
            print(&workspace::diff(&state, &entry)?)
        }
        Verb::Apply { session, yes } => apply(&state, &session, yes),
        Verb::Prune {
            older_than,
            unapplied,
            dry_run,
        } => prune(
            &state,
            workspace::PruneOptions {
                older_than: std::time::Duration::from_secs(older_than.saturating_mul(86_400)),
                unapplied,
                dry_run,
            },
        ),
        Verb::Discard { session } => {
            let entry = workspace::find(&state, &session)?;
            let done = workspace::discard(&state, &entry)?;
            let text = done.sentence() + "\n";
            print(&text)
        }
    }
}

fn prune(state: &StateDir, options: workspace::PruneOptions) -> anyhow::Result<ExitCode> {
    let report = workspace::prune(state, options);
    let verb = if options.dry_run {
        "would remove"
    } else {
        "removed"
    };
    let mut text = String::new();
    for p in &report.pruned {
        text.push_str(&format!(
            "{verb} {} ({}): {}\n",
            p.dir.display(),
            p.session.as_str(),
            p.why
        ));
        if let Some(branch) = &p.kept_branch {
            text.push_str(&format!(
                "  kept branch {branch}: it has commits not merged anywhere else\n"
            ));
        }
    }
    if report.pruned.is_empty() {
        text.push_str("no workspace to remove\n");
    }
    for (session, err) in &report.failed {
        eprintln!(
            "chock: cannot prune the workspace of {}: {err}",
            session.as_str()
        );
    }
    print(&text)?;
    Ok(ExitCode::from(if report.failed.is_empty() {
        exit::SUCCESS
    } else {
        exit::FAILURE
    }))
}

fn print(text: &str) -> anyhow::Result<ExitCode> {
    super::output::print_result(write!(std::io::stdout().lock(), "{text}"))?;
    Ok(ExitCode::from(exit::SUCCESS))
}

/// A workspace as `chock workspace list --json` prints it.
#[derive(serde::Serialize)]
struct Row<'a> {
    session: &'a str,
    project: Option<&'a Path>,
    status: &'static str,
    reason: Option<&'a EndReason>,
    owned: bool,
    applied: bool,
    branch: &'a str,
    dir: &'a Path,
    commit: &'a str,
    exists: bool,
}

impl<'a> Row<'a> {
    fn of(e: &'a Entry) -> Row<'a> {
        Row {
            session: e.session.as_str(),
            project: e.project.as_deref(),
            status: e.session_status.as_str(),
            reason: match &e.session_status {
                Status::Ended { reason, .. } => Some(reason),
                _ => None,
            },
            owned: e.owned,
            applied: e.applied,
            branch: &e.branch,
            dir: &e.dir,
            commit: &e.commit,
            exists: e.exists,
        }
    }
}

fn list(state: &StateDir, json: bool) -> anyhow::Result<ExitCode> {
    let entries = workspace::list(state);
    let mut text = String::new();
    if json {
        for e in &entries {
            text.push_str(&serde_json::to_string(&Row::of(e))?);
            text.push('\n');
        }
        return print(&text);
    }
    if entries.is_empty() {
        text.push_str("no session has a workspace\n");
    }
    for e in entries {
        text.push_str(&format!(
            "{}  {}{}  {}  {}{}\n",
            e.session.as_str(),
            e.status,
            if e.applied { ", applied" } else { "" },
            e.branch,
            e.dir.display(),
            if e.exists { "" } else { " (missing)" }
        ));
    }
    print(&text)
}

/// Brings back what a session that is not running left in its private
/// git directory, saying so; a refusal is said and nothing moves.
fn caught_up(state: &StateDir, entry: &Entry) {
    match workspace::catch_up(state, entry) {
        Ok((moved, said)) => {
            if let Some(tip) = moved {
                eprintln!(
                    "chock: brought back the session's commits up to {} from its sandbox's git directory",
                    tip.get(..7).unwrap_or(&tip)
                );
            }
            for sentence in said {
                eprintln!("chock: {sentence}");
            }
        }
        Err(err) => eprintln!("chock: {err}"),
    }
}

fn apply(state: &StateDir, session: &str, yes: bool) -> anyhow::Result<ExitCode> {
    let entry: Entry = workspace::find(state, session)?;
    workspace::require_exists(&entry)?;
    caught_up(state, &entry);
    let carry = workspace::prepare(state, &entry)?;
    for note in &carry.notes {
        eprintln!("chock: {note}");
    }
    if let Some(refusal) = carry.denied() {
        return Err(refusal.into());
    }
    eprintln!("{}", carry.description);
    if carry.asks() && !yes {
        if !std::io::stdin().is_terminal() {
            anyhow::bail!(
                "workspace.apply asks, and nobody is at a terminal to answer: pass --yes to answer yes; nothing was applied"
            );
        }
        eprint!("Apply? [y/N] ");
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line)?;
        if !matches!(line.trim(), "y" | "Y" | "yes") {
            eprintln!("chock: not applied");
            return Ok(ExitCode::from(exit::FAILURE));
        }
    }
    let carried = carry.carry_out()?;
    for sentence in &carried.said {
        eprintln!("chock: {sentence}");
    }
    eprintln!("chock: {}", carried.sentence);
    Ok(ExitCode::from(exit::SUCCESS))
}
