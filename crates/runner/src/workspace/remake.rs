//! A session killed between its `session.open` and its `workspace.open`:
//! its checkout was being made (`git worktree add`) when it died, so the
//! log names no workspace, and the disk may hold a half-made checkout and
//! its `chock/<id>` branch.
//!
//! Nothing in such a checkout is anyone's work: the tools wait for the
//! `workspace.open` before their first call, so no tool ever ran there, and
//! the person's uncommitted files it may hold were copies. So carrying such
//! a session on removes what was left and makes the checkout again, from
//! the project as it is now (its commit and, as `--allow-dirty` does, its
//! uncommitted work); and `chock workspace` finds what was left by the
//! session's id, to show or discard it.

use std::path::{Path, PathBuf};

use chock_log::SessionId;
use chock_log::StateDir;
use chock_log::event::EndReason;

use super::create::{CreateOptions, create};
use super::takeover::Takeover;
use super::{WorkspaceError, branch_name, git_output, toplevel};

/// The files beside a session's log that belong to its checkout (with
/// `binds`, the copies of its workspace binds).
pub(crate) const CHECKOUT_FILES: [&str; 6] = [
    "git",
    "git-pointer",
    "git-config",
    "git-import",
    "host-git",
    "binds",
];

/// What a half-made checkout left: its directory, when it is on disk, and
/// its branch's commit, when the branch exists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HalfMade {
    pub dir: PathBuf,
    pub exists: bool,
    pub branch: String,
    pub commit: Option<String>,
}

/// What the session `id` of `project` left of a checkout no log names, if
/// anything.
pub fn half_made(state: &StateDir, id: &SessionId, project: &Path) -> Option<HalfMade> {
    let dir = state.workspace_dir(id);
    let branch = branch_name(id.as_str());
    let exists = std::fs::symlink_metadata(&dir).is_ok();
    let commit = toplevel(project).ok().and_then(|repo| {
        let out = git_output(
            &repo,
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("refs/heads/{branch}^{{commit}}"),
            ],
        )
        .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
    });
    (exists || commit.is_some()).then_some(HalfMade {
        dir,
        exists,
        branch,
        commit,
    })
}

/// Removes what a half-made checkout left: the worktree (and git's record
/// of it), its branch, and the session's private git files.
pub fn clear(state: &StateDir, id: &SessionId, project: &Path) -> Result<(), WorkspaceError> {
    let Some(left) = half_made(state, id, project) else {
        return Ok(());
    };
    let repo = toplevel(project)?;
    if left.exists {
        let dir = left.dir.to_string_lossy().into_owned();
        let removed = git_output(&repo, &["worktree", "remove", "--force", &dir])
            .is_ok_and(|out| out.status.success());
        if !removed && std::fs::symlink_metadata(&left.dir).is_ok() {
            std::fs::remove_dir_all(&left.dir).map_err(|source| WorkspaceError::Io {
                what: "remove",
                path: left.dir.clone(),
                error: source,
            })?;
        }
    }
    let _ = git_output(&repo, &["worktree", "prune"]);
    if left.commit.is_some() {
        // The branch points at the commit the checkout started from: it
        // holds no commit of anyone's.
        let _ = git_output(&repo, &["branch", "-D", &left.branch]);
    }
    let session_dir = state.session_dir(id);
    for name in CHECKOUT_FILES {
        let path = session_dir.join(name);
        let _ = std::fs::remove_dir_all(&path).or_else(|_| std::fs::remove_file(&path));
    }
    Ok(())
}

/// Clears what was left and makes the session's checkout again; the
/// workspace the carried-on run then records in its `workspace.open`.
pub(crate) fn remake(
    state: &StateDir,
    id: &SessionId,
    project: &Path,
) -> Result<Takeover, WorkspaceError> {
    clear(state, id, project)?;
    let opened = create(&CreateOptions {
        state,
        session: id,
        project,
        allow_dirty: true,
    })?;
    Ok(Takeover {
        common_dir: Some(opened.paths.common.clone()),
        dir: opened.dir,
        commit: opened.commit,
        branch: Some(opened.branch),
        ended: EndReason::Crashed,
    })
}
