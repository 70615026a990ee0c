//! `chock workspace prune`: the retention policy that keeps the sessions'
//! worktrees from piling up in the person's repository.
//!
//! A worktree of a session nobody runs is removed (its directory, its
//! private git directory, git's record of it, and its branch where git
//! agrees the branch is merged) when either
//!
//! - its work was applied (`chock workspace apply` recorded it), or
//! - the session ended more than `older_than` ago and left no work: no
//!   commit on its branch that your `HEAD` does not already contain, and no
//!   uncommitted file.
//!
//! With `unapplied`, a session that ended more than `older_than` ago is
//! pruned even with work left, and nothing is lost: what it left
//! uncommitted is committed on its branch first, and a branch with commits
//! merged nowhere else is kept (and named), only its checkout goes. A
//! running session (its log's lock held) is never pruned. The daemon runs
//! the default policy by itself (see docs/workspaces.md).

use std::time::Duration;

use chock_log::{SessionId, StateDir, Timestamp};

use super::manage::{Entry, catch_up, discard, list, repo_of};
use super::{WorkspaceError, changed_files_in, git_ok};

/// What a prune removes.
#[derive(Debug, Clone, Copy)]
pub struct PruneOptions {
    /// A session that ended longer ago than this, with no work left, goes.
    pub older_than: Duration,
    /// Also prune sessions with work left (committed on their branches).
    pub unapplied: bool,
    /// Say what would go, remove nothing.
    pub dry_run: bool,
}

/// The default age: a week.
pub const DEFAULT_AGE: Duration = Duration::from_secs(7 * 24 * 3600);

/// One workspace a prune removed (or, dry, would remove).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pruned {
    pub session: SessionId,
    pub dir: std::path::PathBuf,
    /// `applied`, `no work left` or `work kept on its branch`.
    pub why: &'static str,
    /// The branch, when it was kept because its commits are merged nowhere.
    pub kept_branch: Option<String>,
}

/// The outcome of a prune: what went, and what could not be looked at.
#[derive(Debug, Default)]
pub struct PruneReport {
    pub pruned: Vec<Pruned>,
    pub failed: Vec<(SessionId, WorkspaceError)>,
}

/// Apply the retention policy to every workspace of `state`.
pub fn prune(state: &StateDir, options: PruneOptions) -> PruneReport {
    let mut report = PruneReport::default();
    let now = Timestamp::now().unix_millis();
    for entry in list(state) {
        // A half-made checkout is the person's to look at and discard.
        if !entry.exists || entry.owned || entry.half_made {
            continue;
        }
        let old = entry
            .updated_at
            .is_some_and(|t| now - t.unix_millis() > options.older_than.as_millis() as i64);
        let why = if entry.applied {
            "applied"
        } else if !old || !matches!(entry.session_status, chock_log::Status::Ended { .. }) {
            // Not ended (a crashed session) or not old enough: kept.
            continue;
        } else {
            match has_work(state, &entry) {
                Ok(false) => "no work left",
                Ok(true) if options.unapplied => "work kept on its branch",
                Ok(true) => continue,
                Err(err) => {
                    report.failed.push((entry.session.clone(), err));
                    continue;
                }
            }
        };
        if options.dry_run {
            report.pruned.push(Pruned {
                session: entry.session.clone(),
                dir: entry.dir.clone(),
                why,
                kept_branch: None,
            });
            continue;
        }
        match remove(state, &entry) {
            Ok(kept_branch) => report.pruned.push(Pruned {
                session: entry.session.clone(),
                dir: entry.dir.clone(),
                why,
                kept_branch,
            }),
            Err(err) => report.failed.push((entry.session.clone(), err)),
        }
    }
    report
}

/// Whether the workspace holds work the person's repository lacks: a
/// commit its `HEAD` does not contain, or an uncommitted file.
fn has_work(state: &StateDir, entry: &Entry) -> Result<bool, WorkspaceError> {
    let paths = entry.paths(state)?;
    paths.ensure_view(&entry.branch)?;
    if !changed_files_in(&paths)?.is_empty() {
        return Ok(true);
    }
    let repo = repo_of(entry)?;
    let branch = format!("refs/heads/{}", entry.branch);
    if !git_ok(&repo, &["rev-parse", "--verify", "--quiet", &branch])? {
        return Ok(false);
    }
    Ok(!git_ok(
        &repo,
        &["merge-base", "--is-ancestor", &branch, "HEAD"],
    )?)
}

/// Commit what the session left, then discard its checkout.
fn remove(state: &StateDir, entry: &Entry) -> Result<Option<String>, WorkspaceError> {
    let (_, said) = catch_up(state, entry)?;
    for line in said {
        tracing::info!(session = entry.session.as_str(), "{line}");
    }
    Ok(discard(state, entry)?.kept_branch)
}
