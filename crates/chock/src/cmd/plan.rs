//! `chock plan`: the session's latest plan.

use std::io::Write as _;
use std::process::ExitCode;

use chock_log::event::{PlanItem, PlanStatus};

use super::output::OfSession;
use crate::exit;

/// `chock plan --json`.
#[derive(serde::Serialize)]
struct Report<'a> {
    session: &'a str,
    items: &'a [PlanItem],
}

pub(crate) fn run(of: OfSession) -> anyhow::Result<ExitCode> {
    let (id, folded) = of.fold()?;
    if of.json {
        let report = Report {
            session: id.as_str(),
            items: &folded.plan,
        };
        let line = serde_json::to_string(&report)?;
        super::output::print_result(writeln!(std::io::stdout().lock(), "{line}"))?;
        return Ok(ExitCode::from(exit::SUCCESS));
    }
    let mut text = String::new();
    if folded.plan.is_empty() {
        text.push_str(&format!("session {id} has no plan yet\n"));
    }
    for item in &folded.plan {
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
