//! What a command in the sandbox needs to use git in its workspace.
//!
//! A session's checkout is a linked worktree of the person's repository,
//! but no part of that repository's git directory is writable inside: a
//! command's git works in the session's private git directory
//! ([`crate::workspace::SandboxGit`]), whose commits the host brings back
//! after the command. This module adds the environment that git needs:
//! reflogs, automatic gc and maintenance off, and the identity commits are
//! made with.
//!
//! The person's global git config is not in the sandbox (`HOME` is `/tmp`
//! there), so the identity is read here, outside, from the person's own
//! repository and configuration (never from the checkout, whose files a
//! command wrote), once per session, and handed in as `GIT_AUTHOR_*` and
//! `GIT_COMMITTER_*`; with none configured, commits are made as the same
//! neutral identity Chock's own merges use (`Chock <chock@localhost>`).

use std::path::Path;
use std::process::Command;

use chock_tools::{CommandGit, GitMounts};

use super::identity;
use super::sandbox_git::BringBack;

/// A session's commands reach its private git directory through the tools'
/// [`CommandGit`]: the directory's binds and git's environment before each
/// command, the commits brought back after it.
impl CommandGit for BringBack {
    fn prepare(&self, workspace: &Path, inside: &Path) -> Result<GitMounts, String> {
        let git = self.git();
        git.ensure().map_err(|err| err.to_string())?;
        Ok(GitMounts {
            binds: git.binds(workspace, inside),
            env: git_env(&git.paths.common),
        })
    }

    fn bring_back(&self) -> Vec<String> {
        self.run().1
    }

    fn host_command(&self, args: &[&str]) -> Command {
        self.git().paths.command(args)
    }

    fn common_dir(&self) -> &Path {
        &self.git().paths.common
    }
}

/// The environment for git inside, for a checkout of the repository whose
/// common git directory is `common`.
fn git_env(common: &Path) -> Vec<(String, String)> {
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
    let (name, email) = identity(common);
    for role in ["AUTHOR", "COMMITTER"] {
        env.push((format!("GIT_{role}_NAME"), name.clone()));
        env.push((format!("GIT_{role}_EMAIL"), email.clone()));
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_identity_comes_from_the_repository_and_the_rest_turns_reflogs_and_gc_off() {
        let tmp = tempfile::tempdir().unwrap();
        chock_testkit::git(tmp.path(), &["init", "-q"]);
        chock_testkit::git(tmp.path(), &["config", "user.name", "Ada"]);
        chock_testkit::git(tmp.path(), &["config", "user.email", "ada@example.org"]);
        let env = git_env(&tmp.path().join(".git"));
        assert!(env.contains(&("GIT_AUTHOR_NAME".to_owned(), "Ada".to_owned())));
        assert!(env.contains(&(
            "GIT_COMMITTER_EMAIL".to_owned(),
            "ada@example.org".to_owned()
        )));
        assert!(env.contains(&(
            "GIT_CONFIG_KEY_0".to_owned(),
            "core.logAllRefUpdates".to_owned()
        )));
    }
}
