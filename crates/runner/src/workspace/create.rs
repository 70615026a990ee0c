//! Making a new workspace. Every check runs before anything is created, so
//! a refusal leaves the person's repository exactly as it was: not a
//! repository, no commit, a detached HEAD, uncommitted changes without
//! `--allow-dirty`, a branch or directory already taken.
//!
//! Making one is three steps so a session can overlap the slow one with its
//! first model request: [`check`] (every refusal but one), [`Checked::start`]
//! (spawns `git worktree add`) and [`Pending::finish`] (waits for it; the
//! one refusal left, a taken branch, is git's own). [`create`] runs the
//! three in a row.
//!
//! `--allow-dirty` copies the person's uncommitted work into the new
//! checkout: tracked files that differ from HEAD (staged or not), untracked
//! files git does not ignore, and deletions. The copies stay uncommitted in
//! the workspace, where the agent sees them exactly as the person left them;
//! the person's own files are only read.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Child;

use chock_log::event::WorkspaceOpen;
use chock_log::{SessionId, StateDir};

use super::host_git::GitPaths;
use super::{
    WorkspaceError, branch_name, git, git_ok, git_output, porcelain_lines, rev, spawn_git,
    summarize, toplevel,
};

/// What a new workspace starts from.
#[derive(Debug, Clone, Copy)]
pub struct CreateOptions<'a> {
    pub state: &'a StateDir,
    pub session: &'a SessionId,
    /// The project directory the person named (may be inside the repo).
    pub project: &'a Path,
    pub allow_dirty: bool,
}

/// A workspace a session works in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opened {
    /// The person's repository (its top level).
    pub repo: PathBuf,
    /// The worktree's top level.
    pub dir: PathBuf,
    /// Where the tools work: the worktree, or the same subdirectory of it
    /// that the person named inside their repository.
    pub root: PathBuf,
    /// The commit the checkout started at.
    pub commit: String,
    /// The workspace's branch.
    pub branch: String,
    /// Files `--allow-dirty` copied in.
    pub copied: Vec<String>,
    /// The checkout's git directories, as the host made them.
    pub paths: GitPaths,
}

impl Opened {
    /// The `workspace.open` event naming this checkout.
    pub fn event(&self) -> WorkspaceOpen {
        self.event_with(Vec::new())
    }

    /// [`Opened::event`] recording the session's workspace binds.
    pub fn event_with(&self, binds: Vec<chock_log::event::BoundPath>) -> WorkspaceOpen {
        WorkspaceOpen {
            dir: self.dir.clone(),
            commit: self.commit.clone(),
            branch: Some(self.branch.clone()),
            common_dir: Some(self.paths.common.clone()),
            binds,
        }
    }
}

/// The facts of the person's repository a new workspace starts from,
/// asked with one `git rev-parse` (its top level, the commit `HEAD` names,
/// whether `HEAD` is a branch, its common git directory); `None` when git
/// could not answer all four.
fn head_facts(out: &std::process::Output) -> Option<(PathBuf, String, bool, PathBuf)> {
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    match (lines.next(), lines.next(), lines.next(), lines.next()) {
        (Some(repo), Some(commit), Some(head), Some(common)) => Some((
            PathBuf::from(repo),
            commit.to_owned(),
            head.starts_with("refs/heads/"),
            PathBuf::from(common),
        )),
        _ => None,
    }
}

/// What `--allow-dirty` will copy in: the person's uncommitted files from
/// `status`; without it, any such file refuses the start.
fn dirty_files(
    project: &Path,
    repo: &Path,
    status: &std::process::Output,
    allow_dirty: bool,
) -> Result<Vec<String>, WorkspaceError> {
    if !status.status.success() {
        return Err(WorkspaceError::Git {
            args: "status --porcelain=v1 --untracked-files=all".to_owned(),
            dir: project.to_owned(),
            stderr: String::from_utf8_lossy(&status.stderr).trim().to_owned(),
        });
    }
    let dirty = porcelain_lines(&String::from_utf8_lossy(&status.stdout));
    if !dirty.is_empty() && !allow_dirty {
        return Err(WorkspaceError::Dirty {
            repo: repo.to_owned(),
            files: summarize(&dirty),
        });
    }
    Ok(if allow_dirty { dirty } else { Vec::new() })
}

/// [`head_facts`] asked one by one, only when the one call failed, so the
/// error says which.
fn facts_one_by_one(project: &Path) -> Result<(PathBuf, String, bool, PathBuf), WorkspaceError> {
    let repo = toplevel(project)?;
    if !git_ok(
        &repo,
        &["rev-parse", "--verify", "--quiet", "HEAD^{commit}"],
    )? {
        return Err(WorkspaceError::NoCommit { repo });
    }
    let commit = rev(&repo, "HEAD")?;
    let on_branch = git_ok(&repo, &["symbolic-ref", "--quiet", "HEAD"])?;
    let common = git(
        &repo,
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
    )?;
    Ok((repo, commit, on_branch, PathBuf::from(common.trim_end())))
}

/// A workspace that passed every check and is not made yet.
#[derive(Debug)]
pub struct Checked {
    repo: PathBuf,
    commit: String,
    prefix: PathBuf,
    dir: PathBuf,
    branch: String,
    session: String,
    /// The git directories the checkout will have.
    paths: GitPaths,
    /// What `--allow-dirty` will copy in (empty without it).
    dirty: Vec<String>,
}

/// A workspace whose `git worktree add` is running; [`Pending::finish`]
/// waits for it.
#[derive(Debug)]
pub struct Pending {
    checked: Checked,
    child: Child,
}

/// Creates the workspace of a new session: [`check`], [`Checked::start`]
/// and [`Pending::finish`] in a row.
pub fn create(options: &CreateOptions<'_>) -> Result<Opened, WorkspaceError> {
    check(options)?.start()?.finish()
}

/// Every check a new workspace needs, before anything is made: the
/// repository, its commit, a branch checked out, a clean tree (or
/// `--allow-dirty`), a free directory. The branch name is checked by
/// `git worktree add` itself, which refuses a taken one before it writes
/// anything ([`Pending::finish`] says so).
///
/// The two questions for git (`rev-parse` and `status`) run side by side:
/// a session's first model request waits for both, and each is mostly the
/// cost of starting git.
pub fn check(options: &CreateOptions<'_>) -> Result<Checked, WorkspaceError> {
    let project = options
        .project
        .canonicalize()
        .map_err(|source| WorkspaceError::Io {
            what: "use the project directory",
            path: options.project.to_owned(),
            error: source,
        })?;
    let facts = spawn_git(
        &project,
        &[
            "rev-parse",
            "--path-format=absolute",
            "--show-toplevel",
            "HEAD^{commit}",
            "--symbolic-full-name",
            "HEAD",
            "--git-common-dir",
        ],
    )?;
    // Porcelain paths are relative to the top level from any directory in
    // the repository, so the status need not wait for rev-parse's answer.
    let status = spawn_git(
        &project,
        &["status", "--porcelain=v1", "--untracked-files=all"],
    )?;
    let facts = facts.wait_with_output().map_err(WorkspaceError::NoGit)?;
    let status = status.wait_with_output().map_err(WorkspaceError::NoGit)?;
    let (repo, commit, on_branch, common) = match head_facts(&facts) {
        Some(facts) => facts,
        None => facts_one_by_one(&project)?,
    };
    let prefix = project
        .strip_prefix(&repo)
        .map(Path::to_path_buf)
        .unwrap_or_default();
    if !on_branch {
        return Err(WorkspaceError::DetachedHead { repo, commit });
    }
    let dirty = dirty_files(&project, &repo, &status, options.allow_dirty)?;
    let session = options.session.as_str().to_owned();
    let dir = options.state.workspace_dir(options.session);
    if fs::symlink_metadata(&dir).is_ok() {
        return Err(WorkspaceError::DirTaken { dir, session });
    }
    options.state.ensure_workspaces()?;
    let common = common.canonicalize().map_err(|source| WorkspaceError::Io {
        what: "use the git directory",
        path: common.clone(),
        error: source,
    })?;
    let paths = GitPaths::of_session(&options.state.session_dir(options.session), &common, &dir);
    Ok(Checked {
        paths,
        repo,
        commit,
        prefix,
        branch: branch_name(&session),
        dir,
        session,
        dirty,
    })
}

impl Checked {
    /// The checkout's directory, known before it is made.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The commit the checkout starts at.
    pub fn commit(&self) -> &str {
        &self.commit
    }

    /// The git directories the checkout will have.
    pub fn paths(&self) -> &GitPaths {
        &self.paths
    }

    /// Where the tools will work, before it exists: the checkout's same
    /// subdirectory, under the canonical workspaces directory (so it is the
    /// path `Workspace::new` would give once the checkout is there).
    pub fn root(&self) -> PathBuf {
        let dir = match (self.dir.parent(), self.dir.file_name()) {
            (Some(parent), Some(name)) => parent
                .canonicalize()
                .map_or_else(|_| self.dir.clone(), |parent| parent.join(name)),
            _ => self.dir.clone(),
        };
        dir.join(&self.prefix)
    }

    /// Starts `git worktree add` and returns without waiting for it.
    pub fn start(self) -> Result<Pending, WorkspaceError> {
        let dir_text = self.dir.to_string_lossy().into_owned();
        let child = spawn_git(
            &self.repo,
            &[
                "worktree",
                "add",
                "--quiet",
                "-b",
                &self.branch,
                &dir_text,
                &self.commit,
            ],
        )?;
        Ok(Pending {
            checked: self,
            child,
        })
    }
}

impl Pending {
    /// The checkout being made, as checked.
    pub fn checked(&self) -> &Checked {
        &self.checked
    }

    /// Waits for the checkout and copies the person's uncommitted work in
    /// (`--allow-dirty`). A branch that already exists is told apart from
    /// other failures by asking git once more, only when the checkout
    /// failed, so a start that succeeds pays for no separate check.
    pub fn finish(self) -> Result<Opened, WorkspaceError> {
        let Self { checked, child } = self;
        let out = child.wait_with_output().map_err(WorkspaceError::NoGit)?;
        let dir_text = checked.dir.to_string_lossy().into_owned();
        if !out.status.success() {
            let taken = git_ok(
                &checked.repo,
                &[
                    "rev-parse",
                    "--verify",
                    "--quiet",
                    &format!("refs/heads/{}", checked.branch),
                ],
            )?;
            if taken {
                return Err(WorkspaceError::BranchTaken {
                    repo: checked.repo,
                    branch: checked.branch,
                    session: checked.session,
                });
            }
            return Err(WorkspaceError::Git {
                args: format!(
                    "worktree add --quiet -b {} {dir_text} {}",
                    checked.branch, checked.commit
                ),
                dir: checked.repo,
                stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
            });
        }
        let copied = if checked.dirty.is_empty() {
            Vec::new()
        } else {
            match copy_dirty(&checked.repo, &checked.dir) {
                Ok(copied) => copied,
                Err(err) => {
                    // Leave nothing half made: the person's files were only read.
                    remove(&checked.repo, &checked.dir, &checked.branch);
                    return Err(err);
                }
            }
        };
        checked.paths.ensure_view(&checked.branch)?;
        Ok(Opened {
            paths: checked.paths,
            root: checked.dir.join(&checked.prefix),
            repo: checked.repo,
            dir: checked.dir,
            commit: checked.commit,
            branch: checked.branch,
            copied,
        })
    }
}

/// Removes a checkout that holds nothing of anyone's yet, with its branch.
pub(crate) fn remove(repo: &Path, dir: &Path, branch: &str) {
    let dir = dir.to_string_lossy();
    let _ = git_output(repo, &["worktree", "remove", "--force", &dir]);
    let _ = git_output(repo, &["branch", "-D", branch]);
}

fn nul_list(text: &str) -> Vec<String> {
    text.split('\0')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

fn io<'a>(
    what: &'static str,
    path: &'a Path,
) -> impl FnOnce(std::io::Error) -> WorkspaceError + 'a {
    move |source| WorkspaceError::Io {
        what,
        path: path.to_owned(),
        error: source,
    }
}

/// Copies the person's uncommitted work from `repo` into the worktree `dir`.
fn copy_dirty(repo: &Path, dir: &Path) -> Result<Vec<String>, WorkspaceError> {
    let changed = nul_list(&git(
        repo,
        &["diff", "--name-only", "-z", "--no-renames", "HEAD"],
    )?);
    let untracked = nul_list(&git(
        repo,
        &["ls-files", "-z", "--others", "--exclude-standard"],
    )?);
    let mut copied = Vec::new();
    for rel in changed.iter().chain(&untracked) {
        let from = repo.join(rel);
        let to = dir.join(rel);
        match fs::symlink_metadata(&from) {
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                // Deleted in the person's tree: deleted in the copy too.
                if fs::symlink_metadata(&to).is_ok() {
                    fs::remove_file(&to).map_err(io("remove", &to))?;
                }
            }
            Err(source) => {
                return Err(WorkspaceError::Io {
                    what: "read",
                    path: from,
                    error: source,
                });
            }
            Ok(meta) => {
                if let Some(parent) = to.parent() {
                    fs::create_dir_all(parent).map_err(io("create", parent))?;
                }
                if fs::symlink_metadata(&to).is_ok() {
                    fs::remove_file(&to).map_err(io("replace", &to))?;
                }
                if meta.file_type().is_symlink() {
                    let target = fs::read_link(&from).map_err(io("read", &from))?;
                    std::os::unix::fs::symlink(target, &to).map_err(io("copy to", &to))?;
                } else {
                    fs::copy(&from, &to).map_err(io("copy to", &to))?;
                }
            }
        }
        copied.push(rel.clone());
    }
    Ok(copied)
}
