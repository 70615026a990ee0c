//! One apply of a session's workspace, start to end, as `chock workspace
//! apply` and the daemon's `apply` verb both make it: what it would do (the
//! sentences shown before it asks), the `workspace.apply` verdict, and the
//! carrying out, which takes the session's log first so a running session
//! is never written behind its back.
//!
//! It is split in two, [`prepare`] and [`Carry::carry_out`], because the
//! terminal asks between them and the daemon does not: whoever calls
//! `carry_out` has the person's yes.

use std::path::PathBuf;

use chock_log::event::{SessionEnd, WorkspaceApply};
use chock_log::{LogWriter, StateDir, Status, fold_log};
use chock_policy::{Action, Decision, Policy, Verdict};

use super::bind_apply::{self, CopyBack};
use super::{ApplyMode, ApplyPlan, Entry, Landing, WorkspaceError, recorded_integrate, repo_of};

/// Why an apply could not be prepared or carried out.
#[derive(Debug, thiserror::Error)]
pub enum CarryError {
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
    #[error(transparent)]
    Policy(#[from] chock_policy::LoadError),
    #[error("the session's log names no project")]
    NoProject,
    #[error("workspace.apply is refused by the policy: {rule}\nnothing was applied")]
    Denied { rule: String },
    #[error(transparent)]
    Write(#[from] chock_log::WriteError),
    #[error(transparent)]
    Read(#[from] chock_log::ReadError),
    #[error(
        "the copy bind {name} was not carried back whole: {error}; what was written so far stays in {}, and the copy is kept in {}",
        original.display(),
        copy.display()
    )]
    CopyBind {
        name: String,
        error: String,
        original: PathBuf,
        copy: PathBuf,
    },
}

/// An apply made ready: what it would do and what the policy says of it.
#[derive(Debug)]
pub struct Carry {
    entry: Entry,
    log: PathBuf,
    plan: Option<ApplyPlan>,
    copies: Vec<CopyBack>,
    /// The sentences shown before the question, trimmed.
    pub description: String,
    /// Said along the way (the commits cannot land, so only the copy binds
    /// will): shown, not asked about.
    pub notes: Vec<String>,
    /// The `workspace.apply` verdict.
    pub verdict: Verdict,
    outside_links: bool,
}

/// What an apply did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Carried {
    /// What was written where, said as it happened (the copy binds).
    pub said: Vec<String>,
    /// `applied session <id> to <target>`.
    pub sentence: String,
}

/// Makes the plan of an apply of `entry` (whose workspace exists; bring
/// back what its sandbox holds first with [`super::catch_up`]).
pub fn prepare(state: &StateDir, entry: &Entry) -> Result<Carry, CarryError> {
    let log = state.log_path(&entry.session);
    let project = entry.project.clone().ok_or(CarryError::NoProject)?;
    let policy = Policy::load(&project)?;
    // Read once at session start and recorded in the log; a log from
    // before that was recorded is answered by the policy as it is now.
    let permitted = recorded_integrate(&log)
        .unwrap_or_else(|| policy.decision(&Action::workspace_integrate()) != Decision::Deny);
    let mode = ApplyMode::for_project(&project)?;
    let repo = repo_of(entry)?;
    // The copy binds' changes are named by the same prompt, and carried
    // back only when it is permitted (docs/workspaces.md, "Binds").
    let copies = bind_apply::pending(&policy, &project, &state.session_dir(&entry.session));
    let mut notes = Vec::new();
    let plan = match ApplyPlan::new(
        entry.session.as_str(),
        &repo,
        &entry.paths(state)?,
        &entry.branch,
        &entry.commit,
        Landing::new(mode, permitted),
    ) {
        Ok(plan) => Some(plan),
        Err(err) if !copies.is_empty() => {
            notes.push(format!("{err}; the copy binds' changes are applied alone"));
            None
        }
        Err(err) => return Err(err.into()),
    };
    let description = format!(
        "{}{}",
        plan.as_ref().map_or_else(String::new, ApplyPlan::describe),
        bind_apply::describe(&copies)
    )
    .trim_end()
    .to_owned();
    let outside_links = plan.as_ref().is_some_and(|p| !p.outside_links.is_empty());
    Ok(Carry {
        entry: entry.clone(),
        log,
        plan,
        copies,
        description,
        notes,
        verdict: policy.decide(&Action::workspace_apply()),
        outside_links,
    })
}

impl Carry {
    /// The refusal when the policy denies `workspace.apply`.
    pub fn denied(&self) -> Option<CarryError> {
        (self.verdict.decision == Decision::Deny).then(|| CarryError::Denied {
            rule: self.verdict.render(),
        })
    }

    /// Whether a person must say yes first: the policy asks, or a link
    /// points out of the repository (asked about whatever the rule).
    pub fn asks(&self) -> bool {
        self.verdict.decision != Decision::Allow || self.outside_links
    }

    /// Carries the work back, writing what was applied to the session's
    /// log; refused while another process holds the log.
    pub fn carry_out(self) -> Result<Carried, CarryError> {
        let mut writer = LogWriter::open(&self.log)?;
        let before = fold_log(&self.log)?.state.status;
        let mut targets = Vec::new();
        let mut said = Vec::new();
        if let Some(plan) = self.plan {
            let applied = plan.carry_out()?;
            targets.push(applied.target.clone());
            writer.append(applied)?;
        }
        for back in &self.copies {
            let n = bind_apply::carry_back(back).map_err(|error| CarryError::CopyBind {
                name: back.name.clone(),
                error,
                original: back.original.clone(),
                copy: back.copy.clone(),
            })?;
            writer.append(WorkspaceApply {
                commit: None,
                target: back.original.display().to_string(),
            })?;
            said.push(format!(
                "carried {n} change{} of the copy bind {} back to {}",
                if n == 1 { "" } else { "s" },
                back.name,
                back.original.display()
            ));
            targets.push(back.original.display().to_string());
        }
        let target = targets.join(" and ");
        // An apply is not a new owner carrying the session on: the ending
        // is written again so readers still see the session as ended.
        if let Status::Ended { reason, .. } = before {
            writer.append(SessionEnd {
                // A reason a newer writer wrote is kept as it was written.
                reason,
                detail: format!("the workspace was applied to {target} by `chock workspace apply`"),
            })?;
        }
        Ok(Carried {
            said,
            sentence: format!(
                "applied session {} to {target}",
                self.entry.session.as_str()
            ),
        })
    }
}
