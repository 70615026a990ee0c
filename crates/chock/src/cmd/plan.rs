//! `chock plan`: the session's latest plan.

use std::io::Write as _;
use std::process::ExitCode;

use anyhow::Context as _;
use chock_log::event::{PlanItem, PlanStatus};
use chock_log::{StateDir, fold_log};

use crate::exit;

/// Show a session's plan and where each item stands.
///
/// Marks: `[x]` done, `[~]` in progress, `[ ]` pending, `[?]` a status this
/// version does not know.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The session id (see `chock sessions`).
    session: String,

    /// One JSON object (the items and their statuses) on one line, stable for scripts.
    #[arg(long)]
    json: bool,
}

/// `chock plan --json`.
#[derive(serde::Serialize)]
struct Report<'a> {
    session: &'a str,
    items: &'a [PlanItem],
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let state = StateDir::resolve().context("cannot read the session log")?;
    let (id, path) = state.find_session(&args.session)?;
    let folded = fold_log(&path)?;
    for problem in &folded.problems {
        eprintln!("chock: warning: {}: {problem}", path.display());
    }
    if args.json {
        let report = Report {
            session: id.as_str(),
            items: &folded.state.plan,
        };
        let line = serde_json::to_string(&report)?;
        super::output::print_result(writeln!(std::io::stdout().lock(), "{line}"))?;
        return Ok(ExitCode::from(exit::SUCCESS));
    }
    let mut text = String::new();
    if folded.state.plan.is_empty() {
        text.push_str(&format!("session {id} has no plan yet\n"));
    }
    for item in &folded.state.plan {
        let mark = match item.status {
            PlanStatus::Done => "[x]",
            PlanStatus::InProgress => "[~]",
            PlanStatus::Pending => "[ ]",
            PlanStatus::Unknown => "[?]",
        };
        text.push_str(&format!("{mark} {}\n", item.text));
    }
    super::output::print_result(write!(std::io::stdout().lock(), "{text}"))?;
    Ok(ExitCode::from(exit::SUCCESS))
}
