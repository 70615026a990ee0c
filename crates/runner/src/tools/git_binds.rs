//! What a command in the sandbox needs to use git in its workspace.
//!
//! A session's workspace is a linked worktree: its `.git` is a file naming
//! the worktree's own directory inside the project's repository, and that
//! directory names the repository's common directory (objects, refs,
//! config, hooks). Neither is under the workspace, so without these binds
//! every git command in the sandbox fails with "not a git repository".
//!
//! The binds give git what a commit on the session's own branch needs and
//! no more: the common directory read-only (so the person's config, hooks
//! and refs cannot be changed from inside), the worktree's own directory
//! read-write (its HEAD, index and logs), the object store read-write (new
//! objects are content-addressed; nothing existing is rewritten), and the
//! directory holding the session branches (`refs/heads/chock/`) and their
//! reflogs read-write so the branch can move. Reflogs of other refs and
//! automatic gc and maintenance, which would write elsewhere in the common
//! directory, are turned off through git's environment configuration. The person's own
//! working tree is not bound at all.
//!
//! The person's global git config is not in the sandbox (`HOME` is `/tmp`
//! there), so the identity a commit is made with is read here, outside, as
//! git in the workspace sees it, and handed in as `GIT_AUTHOR_*` and
//! `GIT_COMMITTER_*`; with none configured, commits are made as
//! the same neutral identity Chock's own merges use (`Chock
//! <chock@localhost>`).

use std::path::{Path, PathBuf};

use crate::workspace::{FALLBACK_EMAIL, FALLBACK_NAME, config_value};

/// Paths and variables for one workspace's git.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct GitBinds {
    pub read_only: Vec<PathBuf>,
    pub writable: Vec<PathBuf>,
    pub env: Vec<(String, String)>,
}

/// The binds for `workspace`, or `None` when it is not a linked worktree
/// (a plain directory, or a repository of its own, which the workspace
/// bind already covers).
pub(super) fn git_binds(workspace: &Path) -> Option<GitBinds> {
    let pointer = std::fs::read_to_string(workspace.join(".git")).ok()?;
    let own = resolve(workspace, pointer.trim().strip_prefix("gitdir:")?.trim())?;
    let common_text = std::fs::read_to_string(own.join("commondir")).ok()?;
    let common = resolve(&own, common_text.trim())?;
    let mut writable = vec![own.clone(), common.join("objects")];
    let head = std::fs::read_to_string(own.join("HEAD")).unwrap_or_default();
    if let Some(branch) = head.trim().strip_prefix("ref: refs/heads/") {
        // The directory holding the branch, so git can write `<ref>.lock`
        // beside it and rename it over; only session branches (under a
        // directory of their own) get one.
        // Its reflog too: git appends to a reflog that exists whatever
        // core.logAllRefUpdates says, and `git worktree add -b` made one.
        if let Some((dir, _)) = branch.rsplit_once('/') {
            for parent in ["refs/heads", "logs/refs/heads"] {
                let dir = common.join(parent).join(dir);
                if dir.is_dir() {
                    writable.push(dir);
                }
            }
        }
    }
    let config = [
        ("core.logAllRefUpdates", "false"),
        ("gc.auto", "0"),
        ("maintenance.auto", "false"),
    ];
    let mut env = vec![("GIT_CONFIG_COUNT".to_owned(), config.len().to_string())];
    for (n, (key, value)) in config.iter().enumerate() {
        env.push((format!("GIT_CONFIG_KEY_{n}"), (*key).to_owned()));
        env.push((format!("GIT_CONFIG_VALUE_{n}"), (*value).to_owned()));
    }
    let name = config_value(workspace, "user.name").unwrap_or_else(|| FALLBACK_NAME.to_owned());
    let email = config_value(workspace, "user.email").unwrap_or_else(|| FALLBACK_EMAIL.to_owned());
    for role in ["AUTHOR", "COMMITTER"] {
        env.push((format!("GIT_{role}_NAME"), name.clone()));
        env.push((format!("GIT_{role}_EMAIL"), email.clone()));
    }
    Some(GitBinds {
        read_only: vec![common],
        writable,
        env,
    })
}

/// `path` as written in a git pointer file, relative to `base` when not
/// absolute, made canonical (the sandbox binds real paths).
fn resolve(base: &Path, path: &str) -> Option<PathBuf> {
    base.join(path).canonicalize().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        chock_testkit::git(dir, args);
    }

    #[test]
    fn a_linked_worktree_gets_its_common_dir_read_only_and_its_own_parts_writable() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repo");
        std::fs::create_dir(&repo).unwrap();
        git(&repo, &["init", "-q"]);
        git(&repo, &["commit", "-q", "--allow-empty", "-m", "first"]);
        let ws = tmp.path().join("ws");
        git(
            &repo,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                "chock/s1",
                ws.to_str().unwrap(),
            ],
        );
        let binds = git_binds(&ws).unwrap();
        let common = repo.join(".git").canonicalize().unwrap();
        assert_eq!(binds.read_only, vec![common.clone()]);
        assert_eq!(
            binds.writable,
            vec![
                common.join("worktrees/ws"),
                common.join("objects"),
                common.join("refs/heads/chock"),
                common.join("logs/refs/heads/chock"),
            ]
        );
        assert!(binds.env.contains(&(
            "GIT_CONFIG_KEY_0".to_owned(),
            "core.logAllRefUpdates".to_owned()
        )));
    }

    #[test]
    fn a_plain_directory_or_a_repository_of_its_own_needs_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(git_binds(tmp.path()), None);
        git(tmp.path(), &["init", "-q"]);
        assert_eq!(git_binds(tmp.path()), None);
    }
}
