//! What `chock workspace` does with the workspaces already on disk: list
//! them, show one, diff one against where it started, and discard one.
//!
//! Every fact comes from the session's log (its `workspace.open`), so a
//! workspace is found by session id whichever process made it. Discarding
//! refuses while a process holds the session's log, and never deletes
//! commits that exist nowhere else: the branch is removed only when git
//! agrees it is merged (`git branch -d`), otherwise it is kept and named.

use std::path::{Path, PathBuf};

use chock_log::event::EndReason;
use chock_log::fold::Status;
use chock_log::{
    LazyLocks, ReadError, SessionId, StateDir, Summary, fold_log, list_sessions, locks, unsettled,
};

use super::host_git::GitPaths;
use super::sandbox_git::{BringBack, SandboxGit};
use super::{WorkspaceError, branch_name, changed_files_in, git, git_output, toplevel};

/// One session's workspace as the log names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub session: SessionId,
    pub project: Option<PathBuf>,
    pub dir: PathBuf,
    pub commit: String,
    pub branch: String,
    /// Whether the directory is still on disk.
    pub exists: bool,
    pub applied: bool,
    /// `running`, `waiting`, `ended: <reason>` or `crashed` (not ended, no owner).
    pub status: String,
    /// Where the session stands, as its log says.
    pub session_status: Status,
    /// Whether a process holds the session's log.
    pub owned: bool,
    /// The repository's common git directory, as the log recorded it.
    pub common_dir: Option<PathBuf>,
    /// When the session's newest event was written.
    pub updated_at: Option<chock_log::Timestamp>,
    /// Left by a session that stopped while its checkout was being made:
    /// no log names it and nothing ran in it.
    pub half_made: bool,
}

impl Entry {
    /// The checkout's git directories: the common one as the log recorded
    /// it, or, for a session from before it was recorded, as the person's
    /// repository answers (never from the checkout's own `.git`), and the
    /// host's own view of the checkout ([`GitPaths::ensure_view`] makes it
    /// and reads its index before a status).
    pub fn paths(&self, state: &StateDir) -> Result<GitPaths, WorkspaceError> {
        let common = match &self.common_dir {
            Some(common) => common.clone(),
            None => self
                .project
                .as_deref()
                .and_then(GitPaths::common_of)
                .ok_or_else(|| {
                    WorkspaceError::Refused(format!(
                        "the repository of session {} cannot be found from its log",
                        self.session.as_str()
                    ))
                })?,
        };
        Ok(GitPaths::of_session(
            &state.session_dir(&self.session),
            &common,
            &self.dir,
        ))
    }
}

fn entry(id: SessionId, summary: &Summary, owned: bool) -> Option<Entry> {
    let ws = summary.workspace.as_ref()?;
    let session_status = summary.status();
    let status = match &session_status {
        Status::Ended { reason, .. } => format!("ended: {}", reason.as_str()),
        _ if !owned => "crashed (no process holds it)".to_owned(),
        other => other.as_str().to_owned(),
    };
    Some(Entry {
        project: summary.project().map(Path::to_owned),
        dir: ws.dir.clone(),
        commit: ws.commit.clone(),
        branch: ws
            .branch
            .clone()
            .unwrap_or_else(|| branch_name(id.as_str())),
        exists: ws.dir.is_dir(),
        applied: ws.applied,
        status,
        session_status,
        owned,
        common_dir: ws.common_dir.clone(),
        updated_at: summary.row.updated_at,
        half_made: false,
        session: id,
    })
}

/// A checkout no log names, left by a session killed while it was being
/// made (`remake.rs`): found by the session's id, so it can be shown and
/// discarded like any other.
fn half_made_entry(
    state_dir: &StateDir,
    id: SessionId,
    summary: &Summary,
    owned: bool,
) -> Option<Entry> {
    if summary.workspace.is_some() {
        return None;
    }
    let project = summary.project()?.to_owned();
    let left = super::remake::half_made(state_dir, &id, &project)?;
    Some(Entry {
        project: Some(project),
        dir: left.dir,
        commit: left.commit.unwrap_or_default(),
        branch: left.branch,
        exists: left.exists,
        applied: false,
        status: if owned {
            "its checkout is being made".to_owned()
        } else {
            "half made (the session stopped while its checkout was being made)".to_owned()
        },
        session_status: summary.status(),
        owned,
        common_dir: None,
        updated_at: summary.row.updated_at,
        half_made: true,
        session: id,
    })
}

fn any_entry(state_dir: &StateDir, id: SessionId, summary: &Summary, owned: bool) -> Option<Entry> {
    entry(id.clone(), summary, owned).or_else(|| half_made_entry(state_dir, id, summary, owned))
}

/// Every session's workspace, newest first.
pub fn list(state: &StateDir) -> Vec<Entry> {
    let mut locks = LazyLocks::default();
    list_sessions(state, None)
        .sessions
        .into_iter()
        .filter_map(|listed| {
            let owned = locks.get().is_some_and(|locks| listed.owned(locks));
            any_entry(state, listed.id, &listed.summary, owned)
        })
        .collect()
}

/// One session's workspace.
pub fn find(state: &StateDir, session: &str) -> Result<Entry, WorkspaceError> {
    let (id, log) = state
        .find_session(session)
        .map_err(|err| WorkspaceError::Refused(err.to_string()))?;
    let folded = fold_log(&log).map_err(|err| WorkspaceError::Refused(err.to_string()))?;
    let owned = locks::is_owned(&log).unwrap_or(false);
    any_entry(state, id.clone(), &Summary::of(&id, &folded.state), owned).ok_or_else(|| {
        WorkspaceError::Refused(format!(
            "session {} has no workspace in its log",
            id.as_str()
        ))
    })
}

/// The person's repository a workspace belongs to.
pub fn repo_of(entry: &Entry) -> Result<PathBuf, WorkspaceError> {
    match &entry.project {
        Some(project) => toplevel(project),
        None => Err(WorkspaceError::Refused(format!(
            "session {} names no project in its log",
            entry.session.as_str()
        ))),
    }
}

/// Refuses a workspace whose directory is gone, naming its branch.
pub fn require_exists(entry: &Entry) -> Result<(), WorkspaceError> {
    if entry.exists {
        Ok(())
    } else {
        Err(missing(entry))
    }
}

fn missing(entry: &Entry) -> WorkspaceError {
    WorkspaceError::Missing {
        session: entry.session.as_str().to_owned(),
        dir: entry.dir.clone(),
        branch: entry.branch.clone(),
        repo: entry.project.clone().unwrap_or_default(),
    }
}

/// A few lines about one workspace: where, which branch, the commits made
/// since it started, uncommitted files.
pub fn show(state: &StateDir, entry: &Entry) -> Result<String, WorkspaceError> {
    let mut out = format!(
        "session:  {}\ndirectory: {}{}\nbranch:   {}\nstarted at: {}\nstatus:   {}{}\n",
        entry.session.as_str(),
        entry.dir.display(),
        if entry.exists { "" } else { " (missing)" },
        entry.branch,
        entry.commit,
        entry.status,
        if entry.applied { ", applied" } else { "" },
    );
    if entry.half_made {
        let id = entry.session.as_str();
        out.push_str(&format!(
            "the session stopped while this checkout was being made, so no log names it and nothing ran in it: `chock run --continue {id}` makes it again, `chock workspace discard {id}` removes it\n"
        ));
        return Ok(out);
    }
    if !entry.exists {
        out.push_str(&format!("{}\n", missing(entry)));
        return Ok(out);
    }
    let paths = entry.paths(state)?;
    paths.ensure_view(&entry.branch)?;
    let range = format!("{}..refs/heads/{}", entry.commit, entry.branch);
    let log = paths.run(&["log", "--no-ext-diff", "--format=  %h %s", &range])?;
    if log.is_empty() {
        out.push_str("commits:  none yet\n");
    } else {
        out.push_str("commits:\n");
        out.push_str(&log);
    }
    let changed = changed_files_in(&paths)?;
    if !changed.is_empty() {
        out.push_str("uncommitted:\n");
        for file in changed {
            out.push_str(&format!("  {file}\n"));
        }
    }
    Ok(out)
}

/// Everything the session changed since its start: its commits and what
/// it has not committed, as one diff against the starting commit.
pub fn diff(state: &StateDir, entry: &Entry) -> Result<String, WorkspaceError> {
    if !entry.exists {
        return Err(missing(entry));
    }
    let paths = entry.paths(state)?;
    paths.ensure_view(&entry.branch)?;
    paths.run(&[
        "diff",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--ignore-submodules=all",
        &entry.commit,
    ])
}

/// One file of [`diff`]: its path and how many lines it gained and lost
/// (0 and 0 for a binary file, which has no lines).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffStat {
    pub path: String,
    pub added: u64,
    pub removed: u64,
}

/// The files of [`diff`], each with its counts, in git's order.
pub fn diff_files(state: &StateDir, entry: &Entry) -> Result<Vec<DiffStat>, WorkspaceError> {
    if !entry.exists {
        return Err(missing(entry));
    }
    let paths = entry.paths(state)?;
    paths.ensure_view(&entry.branch)?;
    let out = paths.run(&[
        "diff",
        "--numstat",
        "-z",
        "--no-renames",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--ignore-submodules=all",
        &entry.commit,
    ])?;
    Ok(out
        .split('\0')
        .filter_map(|record| {
            let mut fields = record.splitn(3, '\t');
            let (added, removed, path) = (fields.next()?, fields.next()?, fields.next()?);
            Some(DiffStat {
                path: path.to_owned(),
                added: added.parse().unwrap_or(0),
                removed: removed.parse().unwrap_or(0),
            })
        })
        .collect())
}

/// Brings back commits a session's commands made in its private git
/// directory that its process did not (it crashed, or is from before
/// imports), only while no process holds the session: the tip now on the
/// person's side when it moved, and what was refused or ignored.
pub fn catch_up(
    state: &StateDir,
    entry: &Entry,
) -> Result<(Option<String>, Vec<String>), WorkspaceError> {
    if !entry.exists || locks::is_owned(&state.log_path(&entry.session)).unwrap_or(true) {
        return Ok((None, Vec::new()));
    }
    let paths = entry.paths(state)?;
    paths.ensure_view(&entry.branch)?;
    let git = SandboxGit::new(
        &state.session_dir(&entry.session),
        paths,
        &entry.branch,
        &entry.commit,
    );
    let (moved, mut said) = BringBack::new(git.clone()).run();
    match git.commit_leftovers(entry.session.as_str()) {
        Ok(None) => Ok((moved, said)),
        Ok(Some(tip)) => {
            said.push(format!(
                "committed what the session left uncommitted on {} as {}",
                git.branch,
                tip.get(..7).unwrap_or(&tip)
            ));
            Ok((Some(tip), said))
        }
        Err(err) => {
            said.push(err.to_string());
            Ok((moved, said))
        }
    }
}

/// What a discard did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discarded {
    pub dir: PathBuf,
    /// The branch, when it was kept because its commits are merged nowhere.
    pub kept_branch: Option<String>,
}

impl Discarded {
    /// What was removed and what was kept, as `chock workspace discard` says it.
    pub fn sentence(&self) -> String {
        let mut text = format!("removed the workspace {}", self.dir.display());
        if let Some(branch) = &self.kept_branch {
            text.push_str(&format!(
                "\nkept branch {branch}: it has commits not merged anywhere else; delete it with `git branch -D {branch}` if you do not want them"
            ));
        }
        text
    }
}

/// Removes a workspace's directory and, when merged, its branch.
pub fn discard(state: &StateDir, entry: &Entry) -> Result<Discarded, WorkspaceError> {
    let log = state.log_path(&entry.session);
    if locks::is_owned(&log).unwrap_or(false) {
        return Err(WorkspaceError::Refused(format!(
            "session {} is running and works in {}: end it first (or wait for it to end), then discard",
            entry.session.as_str(),
            entry.dir.display()
        )));
    }
    if entry.half_made {
        let project = entry.project.clone().unwrap_or_default();
        super::remake::clear(state, &entry.session, &project)?;
        return Ok(Discarded {
            dir: entry.dir.clone(),
            kept_branch: None,
        });
    }
    let repo = repo_of(entry)?;
    let dir = entry.dir.to_string_lossy().into_owned();
    // git refuses to remove a worktree whose `.git` no longer points back,
    // which a command could arrange: then the directory is removed here,
    // without following a link in it, and git prunes its record.
    if !entry.exists || git(&repo, &["worktree", "remove", "--force", &dir]).is_err() {
        if entry.exists {
            std::fs::remove_dir_all(&entry.dir).map_err(|source| WorkspaceError::Io {
                what: "remove",
                path: entry.dir.clone(),
                error: source,
            })?;
        }
        git(&repo, &["worktree", "prune"])?;
    }
    // The session's private git directory goes with the checkout.
    let session_dir = state.session_dir(&entry.session);
    for name in super::remake::CHECKOUT_FILES {
        let path = session_dir.join(name);
        let _ = std::fs::remove_dir_all(&path).or_else(|_| std::fs::remove_file(&path));
    }
    let out = git_output(&repo, &["branch", "-d", &entry.branch])?;
    let exists = git_output(
        &repo,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("refs/heads/{}", entry.branch),
        ],
    )?
    .status
    .success();
    Ok(Discarded {
        dir: entry.dir.clone(),
        kept_branch: (!out.status.success() && exists).then(|| entry.branch.clone()),
    })
}

/// Sentences about the project's sessions that ended abnormally and kept a
/// workspace with work in it, for a new run to show.
///
/// It reads only the sessions the state directory's unsettled marks name
/// ([`unsettled`]): those still running (their owner alive, passed over
/// without reading their log) and those that ended otherwise than `done` or
/// died. A thousand sessions that ended well cost nothing here.
pub fn kept_notes(state: &StateDir, project: &Path) -> Vec<String> {
    let (mut marks, seeded) = unsettled::read(state);
    if !seeded {
        let listed = list_sessions(state, None);
        let open = listed
            .sessions
            .iter()
            .filter(|l| !settled(&l.summary))
            .filter_map(|l| Some((&l.id, l.summary.project()?)));
        unsettled::seed(state, open);
        marks = unsettled::read(state).0;
    }
    let project = project
        .canonicalize()
        .unwrap_or_else(|_| project.to_owned());
    let mut notes = Vec::new();
    for mark in marks {
        if mark.project != project || mark.owner_alive() {
            continue;
        }
        let log = state.log_path(&mark.id);
        let folded = match fold_log(&log) {
            Ok(folded) => folded,
            Err(ReadError::Missing { .. }) => {
                unsettled::settle(state, &mark.id);
                continue;
            }
            Err(err) => {
                notes.push(format!(
                    "session {} cannot be read ({err}); its files are in {}",
                    mark.id.as_str(),
                    state.session_dir(&mark.id).display()
                ));
                continue;
            }
        };
        let summary = Summary::of(&mark.id, &folded.state);
        if settled(&summary) {
            unsettled::settle(state, &mark.id);
            continue;
        }
        let Some(e) = entry(mark.id, &summary, false) else {
            continue;
        };
        let sid = e.session.as_str();
        notes.push(format!(
            "session {sid} ({}) kept its workspace at {} on branch {}: carry it on with `chock run --continue {sid}`, look with `chock workspace show {sid}`, or remove it with `chock workspace discard {sid}`",
            e.status,
            e.dir.display(),
            e.branch
        ));
    }
    notes
}

/// Whether a session needs nobody any more: it ended `done` or was handed
/// over, or it has no workspace with unapplied work on disk.
fn settled(summary: &Summary) -> bool {
    matches!(
        summary.status(),
        Status::Ended {
            reason: EndReason::Done | EndReason::Handover,
            ..
        }
    ) || summary
        .workspace
        .as_ref()
        .is_none_or(|w| w.applied || !w.dir.is_dir())
}
