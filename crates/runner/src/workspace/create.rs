//! Making a new workspace. Every check runs before anything is created, so
//! a refusal leaves the person's repository exactly as it was: not a
//! repository, no commit, a detached HEAD, uncommitted changes without
//! `--allow-dirty`, a branch or directory already taken.
//!
//! `--allow-dirty` copies the person's uncommitted work into the new
//! checkout: tracked files that differ from HEAD (staged or not), untracked
//! files git does not ignore, and deletions. The copies stay uncommitted in
//! the workspace, where the agent sees them exactly as the person left them;
//! the person's own files are only read.

use std::fs;
use std::path::{Path, PathBuf};

use chock_log::event::WorkspaceOpen;
use chock_log::{SessionId, StateDir};

use super::{
    WorkspaceError, branch_name, changed_files, git, git_ok, git_output, rev, summarize, toplevel,
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
}

impl Opened {
    /// The `workspace.open` event naming this checkout.
    pub fn event(&self) -> WorkspaceOpen {
        WorkspaceOpen {
            dir: self.dir.clone(),
            commit: self.commit.clone(),
            branch: Some(self.branch.clone()),
        }
    }
}

/// Where the repository of `project` is, the commit `HEAD` names and
/// whether `HEAD` is a branch, in one git call (a session's start waits for
/// every call); `None` when git could not answer all three.
fn head_facts(project: &Path) -> Result<Option<(PathBuf, String, bool)>, WorkspaceError> {
    let out = git_output(
        project,
        &[
            "rev-parse",
            "--show-toplevel",
            "HEAD^{commit}",
            "--symbolic-full-name",
            "HEAD",
        ],
    )?;
    if !out.status.success() {
        return Ok(None);
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    Ok(match (lines.next(), lines.next(), lines.next()) {
        (Some(repo), Some(commit), Some(head)) => Some((
            PathBuf::from(repo),
            commit.to_owned(),
            head.starts_with("refs/heads/"),
        )),
        _ => None,
    })
}

/// Creates the workspace of a new session.
pub fn create(options: &CreateOptions<'_>) -> Result<Opened, WorkspaceError> {
    let project = options
        .project
        .canonicalize()
        .map_err(|source| WorkspaceError::Io {
            what: "use the project directory",
            path: options.project.to_owned(),
            source,
        })?;
    let (repo, commit, on_branch) = match head_facts(&project)? {
        Some(facts) => facts,
        // Asked one by one only when the one call failed, so the error
        // says which.
        None => {
            let repo = toplevel(&project)?;
            if !git_ok(
                &repo,
                &["rev-parse", "--verify", "--quiet", "HEAD^{commit}"],
            )? {
                return Err(WorkspaceError::NoCommit { repo });
            }
            let commit = rev(&repo, "HEAD")?;
            let on_branch = git_ok(&repo, &["symbolic-ref", "--quiet", "HEAD"])?;
            (repo, commit, on_branch)
        }
    };
    let prefix = project
        .strip_prefix(&repo)
        .map(Path::to_path_buf)
        .unwrap_or_default();
    if !on_branch {
        return Err(WorkspaceError::DetachedHead { repo, commit });
    }
    let dirty = changed_files(&repo)?;
    if !dirty.is_empty() && !options.allow_dirty {
        return Err(WorkspaceError::Dirty {
            repo,
            files: summarize(&dirty),
        });
    }
    let session = options.session.as_str();
    let branch = branch_name(session);
    if git_ok(
        &repo,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("refs/heads/{branch}"),
        ],
    )? {
        return Err(WorkspaceError::BranchTaken {
            repo,
            branch,
            session: session.to_owned(),
        });
    }
    let dir = options.state.workspace_dir(options.session);
    if fs::symlink_metadata(&dir).is_ok() {
        return Err(WorkspaceError::DirTaken {
            dir,
            session: session.to_owned(),
        });
    }
    options.state.ensure_workspaces()?;
    let dir_text = dir.to_string_lossy().into_owned();
    git(
        &repo,
        &[
            "worktree", "add", "--quiet", "-b", &branch, &dir_text, &commit,
        ],
    )?;
    let copied = if options.allow_dirty && !dirty.is_empty() {
        match copy_dirty(&repo, &dir) {
            Ok(copied) => copied,
            Err(err) => {
                // Leave nothing half made: the person's files were only read.
                let _ = git_output(&repo, &["worktree", "remove", "--force", &dir_text]);
                let _ = git_output(&repo, &["branch", "-D", &branch]);
                return Err(err);
            }
        }
    } else {
        Vec::new()
    };
    Ok(Opened {
        root: dir.join(prefix),
        repo,
        dir,
        commit,
        branch,
        copied,
    })
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
        source,
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
                    source,
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
