//! The one way the host runs git in a session's workspace.
//!
//! A workspace's files are written by sandboxed commands, so the host reads
//! none of git's own pointers there: the worktree's `.git` file, its git
//! directory's `commondir`, `gitdir` and `HEAD` are all things a command
//! could have rewritten. Every git the host runs for a session names the
//! three directories from its own record ([`GitPaths`]: the common git
//! directory recorded in `workspace.open` when the checkout was made, and
//! a view of the host's own) through `GIT_DIR`, `GIT_COMMON_DIR` and
//! `GIT_WORK_TREE`.
//!
//! The configuration git may read is the person's repository's own (which
//! no sandbox can write: it is never bound in) and nothing else: no system
//! file (`GIT_CONFIG_NOSYSTEM`), no global one (`GIT_CONFIG_GLOBAL` is
//! `/dev/null`), and on the command line every key that runs a program or
//! reaches another host is forced off, so a key that slipped into a file
//! git reads still does nothing: hooks, fsmonitor, external diff and
//! textconv, pagers, editors, credential helpers, ssh commands, every
//! transport, submodules. `safe.directory` is left as git has it: the host
//! runs as the owner of every directory it names.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::WorkspaceError;

/// The directories of one session's checkout, as the host recorded them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitPaths {
    /// The person's repository's common git directory (objects, refs, config).
    pub common: PathBuf,
    /// The host's own view of the checkout (`<session dir>/host-git`): a
    /// worktree git directory no sandbox ever sees, with its HEAD on the
    /// session branch, its index, and a `commondir` the host wrote. git's
    /// ref store reads `commondir` from the directory `GIT_DIR` names
    /// whatever `GIT_COMMON_DIR` says, so the host never names the
    /// worktree's own directory in the person's repository, which an older
    /// sandbox could write.
    pub git_dir: PathBuf,
    /// The worktree.
    pub work_tree: PathBuf,
}

/// Keys forced on every host git in a workspace, whatever any file says.
const FORCED: &[(&str, &str)] = &[
    ("core.hooksPath", "/dev/null"),
    ("core.fsmonitor", "false"),
    ("core.untrackedCache", "false"),
    ("core.pager", "cat"),
    ("core.editor", "true"),
    ("sequence.editor", "true"),
    ("core.sshCommand", "false"),
    ("core.askPass", "false"),
    ("core.gitProxy", "false"),
    ("credential.helper", ""),
    ("protocol.allow", "never"),
    ("submodule.recurse", "false"),
    ("diff.ignoreSubmodules", "all"),
    ("status.submoduleSummary", "false"),
    ("diff.external", ""),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
];

/// Environment variables git reads that could point it elsewhere; the host
/// sets its own or none.
const CLEARED: &[&str] = &[
    "GIT_DIR",
    "GIT_COMMON_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG_SYSTEM",
    "GIT_EXTERNAL_DIFF",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_ASKPASS",
    "GIT_PAGER",
    "GIT_EXEC_PATH",
    "GIT_TEMPLATE_DIR",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_REPLACE_REF_BASE",
    "GIT_SHALLOW_FILE",
    "GIT_GRAFT_FILE",
];

impl GitPaths {
    /// A git command for this checkout, hardened as the module says; `args`
    /// follow the forced keys.
    pub fn command<I, S>(&self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = hardened();
        cmd.env("GIT_DIR", &self.git_dir)
            .env("GIT_COMMON_DIR", &self.common)
            .env("GIT_WORK_TREE", &self.work_tree)
            .current_dir(&self.work_tree)
            .args(args);
        cmd
    }

    /// Runs a git for the checkout and hands back its stdout, or the error
    /// naming what failed.
    pub fn run(&self, args: &[&str]) -> Result<String, WorkspaceError> {
        let out = self
            .command(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .map_err(WorkspaceError::NoGit)?;
        super::git_result(&self.work_tree, &args.join(" "), out)
    }

    /// Whether a git for the checkout exits 0 (its output dropped).
    pub fn succeeds(&self, args: &[&str]) -> bool {
        self.command(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    /// The paths of the session whose own directory is `session_dir`.
    pub fn of_session(session_dir: &Path, common: &Path, work_tree: &Path) -> GitPaths {
        GitPaths {
            common: common.to_owned(),
            git_dir: session_dir.join("host-git"),
            work_tree: work_tree.to_owned(),
        }
    }

    /// Makes the host's view when it is missing (HEAD on `branch`,
    /// `commondir`) and reads its index from the branch's tip, so the
    /// host's status compares the files with the branch as it is now (the
    /// person may have committed in the workspace themselves).
    pub fn ensure_view(&self, branch: &str) -> Result<(), WorkspaceError> {
        let io = |source| WorkspaceError::Io {
            what: "make the host's view of",
            path: self.git_dir.clone(),
            error: source,
        };
        if !self.git_dir.join("HEAD").is_file() {
            std::fs::create_dir_all(&self.git_dir).map_err(io)?;
            std::fs::write(
                self.git_dir.join("commondir"),
                format!("{}\n", self.common.display()),
            )
            .map_err(io)?;
            std::fs::write(
                self.git_dir.join("HEAD"),
                format!("ref: refs/heads/{branch}\n"),
            )
            .map_err(io)?;
        }
        self.run(&["read-tree", &format!("refs/heads/{branch}")])
            .map(drop)
    }

    /// The common git directory of the person's repository `project`, asked
    /// there (for a session whose log did not record it).
    pub fn common_of(project: &Path) -> Option<PathBuf> {
        let out = hardened()
            .args(["rev-parse", "--path-format=absolute", "--git-common-dir"])
            .current_dir(project)
            .output()
            .ok()?;
        if !out.status.success() {
            return None;
        }
        PathBuf::from(String::from_utf8(out.stdout).ok()?.trim_end())
            .canonicalize()
            .ok()
    }
}

/// A git command with no repository of its own named yet, hardened: for
/// the person's repository (whose configuration is theirs) and for the
/// checks above.
pub(crate) fn hardened() -> Command {
    let mut cmd = Command::new("git");
    for key in CLEARED {
        cmd.env_remove(key);
    }
    cmd.env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_ATTR_NOSYSTEM", "1")
        .env("GIT_NO_REPLACE_OBJECTS", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_EDITOR", "true")
        .env("GIT_PAGER", "cat")
        .stdin(Stdio::null());
    for (key, value) in FORCED {
        cmd.arg("-c").arg(format!("{key}={value}"));
    }
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_forced_key_reaches_git_on_its_command_line() {
        let paths = GitPaths {
            common: "/r/.git".into(),
            git_dir: "/r/.git/worktrees/s".into(),
            work_tree: "/ws".into(),
        };
        let cmd = paths.command(["status"]);
        let args: Vec<String> = cmd
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        for (key, _) in FORCED {
            assert!(
                args.iter().any(|a| a.starts_with(&format!("{key}="))),
                "{key}"
            );
        }
        assert_eq!(args.last().map(String::as_str), Some("status"));
        let env: Vec<(String, Option<String>)> = cmd
            .get_envs()
            .map(|(k, v)| {
                (
                    k.to_string_lossy().into_owned(),
                    v.map(|v| v.to_string_lossy().into_owned()),
                )
            })
            .collect();
        assert!(env.contains(&("GIT_DIR".into(), Some("/r/.git/worktrees/s".into()))));
        assert!(env.contains(&("GIT_COMMON_DIR".into(), Some("/r/.git".into()))));
        assert!(env.contains(&("GIT_CONFIG_GLOBAL".into(), Some("/dev/null".into()))));
        assert!(env.contains(&("GIT_SSH_COMMAND".into(), None)));
    }
}
