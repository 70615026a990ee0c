//! A session's workspace: a git worktree of the project under
//! `StateDir::workspace_dir(id)`, on a branch of its own (`chock/<id>`),
//! started at the project's HEAD. The checkout outlives the process that
//! made it, so everything here is keyed on the session id and on facts the
//! log records (`workspace.open`: directory, starting commit, branch).
//!
//! The module is split by what a person does with a workspace:
//! [`create`](mod@create) makes one (and refuses the inputs that would lose work),
//! [`apply`] carries its commits back in one of four modes or parks them,
//! [`takeover`] decides from the log whether a new owner may step into an
//! existing one, [`manage`] lists, shows, diffs and discards them, and
//! [`prune`](mod@prune) removes the ones nobody needs any more.
//!
//! Git is run as a program, never linked: the person's own git, config and
//! hooks behave as they always do in their repository.

pub mod apply;
mod beneath;
pub mod bind_apply;
pub mod binds;
pub mod carry;
pub mod create;
mod git_binds;
pub mod host_git;
pub mod manage;
pub mod prune;
pub mod remake;
pub mod sandbox_git;
pub mod session;
pub mod takeover;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

pub use apply::{ApplyMode, ApplyPlan, Landing};
pub use carry::{Carried, Carry, CarryError, prepare};
pub use create::{Checked, CreateOptions, Opened, Pending, check, create};
pub use host_git::GitPaths;
pub use manage::{
    DiffStat, Discarded, Entry, catch_up, diff, diff_files, discard, find, kept_notes, list,
    repo_of, require_exists, show,
};
pub use prune::{PruneOptions, PruneReport, Pruned, prune};
pub use sandbox_git::{BringBack, SandboxGit};
pub use session::recorded_integrate;
pub use takeover::{Takeover, TakeoverError, check_takeover};

/// The branch a session's workspace is on.
pub fn branch_name(session: &str) -> String {
    format!("chock/{session}")
}

/// The ref an apply that may not move your branches parks the work at.
pub fn parked_ref(session: &str) -> String {
    format!("refs/chock/parked/{session}")
}

/// Everything that can go wrong with a workspace, each naming what to do.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    #[error(
        "{} is not in a git repository: a session works in a git worktree of its project; run `git init && git add -A && git commit -m initial` there first",
        path.display()
    )]
    NotARepo { path: PathBuf },
    #[error(
        "{} has no commit yet: a session starts from the project's HEAD; make a first commit (`git add -A && git commit -m initial`)",
        repo.display()
    )]
    NoCommit { repo: PathBuf },
    #[error(
        "the project's HEAD is detached at {commit} in {}: a session starts from a branch so its work can be carried back to it; check out a branch (`git switch <branch>`) and run again",
        repo.display()
    )]
    DetachedHead { repo: PathBuf, commit: String },
    #[error(
        "{} has uncommitted changes ({files}): a session starts from the last commit and would not see them; commit or stash them, or pass --allow-dirty to copy them into the session's workspace",
        repo.display()
    )]
    Dirty { repo: PathBuf, files: String },
    #[error(
        "the branch {branch} already exists in {}: each session's workspace gets a branch of its own; if it is a session's, carry it on with `chock run --continue {session}`, otherwise rename it (`git branch -m {branch} <new name>`)",
        repo.display()
    )]
    BranchTaken {
        repo: PathBuf,
        branch: String,
        session: String,
    },
    #[error(
        "{} already exists: a session's workspace directory is made fresh; look at it with `chock workspace show {session}` and remove it with `chock workspace discard {session}` if it is not needed",
        dir.display()
    )]
    DirTaken { dir: PathBuf, session: String },
    #[error(
        "the workspace of session {session} at {} is gone (deleted by hand?); its commits are still on branch {branch}: run `git worktree prune` in {} and check that branch out, or start a new session",
        dir.display(),
        repo.display()
    )]
    Missing {
        session: String,
        dir: PathBuf,
        branch: String,
        repo: PathBuf,
    },
    #[error(
        "the workspace {} has uncommitted changes ({files}): only commits are carried back; commit them in the workspace (`git -C {} add -A && git -C {} commit`) and apply again",
        dir.display(), dir.display(), dir.display()
    )]
    Uncommitted { dir: PathBuf, files: String },
    #[error("{}", .0)]
    Refused(String),
    #[error("`git {args}` failed in {}: {stderr}", dir.display())]
    Git {
        args: String,
        dir: PathBuf,
        stderr: String,
    },
    #[error("cannot run git: {0}; install git and make sure it is on PATH")]
    NoGit(std::io::Error),
    #[error("cannot {what} {}: {error}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        error: std::io::Error,
    },
    #[error(transparent)]
    State(#[from] chock_log::PathError),
}

/// Runs git in `dir` with `args`; stdout on success.
pub(crate) fn git(dir: &Path, args: &[&str]) -> Result<String, WorkspaceError> {
    git_result(dir, &args.join(" "), git_output(dir, args)?)
}

/// Runs git and hands back whatever happened, success or not.
pub(crate) fn git_output(
    dir: &Path,
    args: &[&str],
) -> Result<std::process::Output, WorkspaceError> {
    spawn_git(dir, args)?
        .wait_with_output()
        .map_err(WorkspaceError::NoGit)
}

/// Starts git in `dir` with its output piped, without waiting (so several
/// can run side by side).
pub(crate) fn spawn_git(dir: &Path, args: &[&str]) -> Result<Child, WorkspaceError> {
    if !dir.is_dir() {
        return Err(WorkspaceError::Io {
            what: "run git in",
            path: dir.to_owned(),
            error: std::io::Error::from(std::io::ErrorKind::NotFound),
        });
    }
    let mut command = Command::new("git");
    // A session killed while git makes its checkout takes git with it,
    // rather than leaving a checkout and a branch no log names.
    chock_sandbox::dies_with_parent(&mut command)
        .args(args)
        .current_dir(dir)
        // A prompt would hang a session that has nobody at the terminal.
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_EDITOR", "true")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(WorkspaceError::NoGit)
}

/// Whether git answered yes (exit 0) to a question.
pub(crate) fn git_ok(dir: &Path, args: &[&str]) -> Result<bool, WorkspaceError> {
    Ok(git_output(dir, args)?.status.success())
}

/// The identity Chock commits under where git has none configured.
pub(crate) const FALLBACK_NAME: &str = "Chock";
pub(crate) const FALLBACK_EMAIL: &str = "chock@localhost";

/// The person's identity as their git reads it in `dir` (their
/// repository, or its git directory), in one call: `user.name` and
/// `user.email`, else what the committer environment names, else Chock's
/// neutral one. Never read in a session's checkout, whose files a command
/// wrote.
pub(crate) fn identity(dir: &Path) -> (String, String) {
    let text = git_output(dir, &["config", "--get-regexp", r"^user\.(name|email)$"])
        .map(|out| String::from_utf8_lossy(&out.stdout).into_owned())
        .unwrap_or_default();
    let value = |key: &str, env: &str, fallback: &str| {
        text.lines()
            .filter_map(|l| l.split_once(' '))
            .filter(|(k, v)| k.eq_ignore_ascii_case(key) && !v.trim().is_empty())
            .map(|(_, v)| v.trim().to_owned())
            .next_back()
            .or_else(|| std::env::var(env).ok())
            .unwrap_or_else(|| fallback.to_owned())
    };
    (
        value("user.name", "GIT_COMMITTER_NAME", FALLBACK_NAME),
        value("user.email", "GIT_COMMITTER_EMAIL", FALLBACK_EMAIL),
    )
}

/// The commits Chock itself makes (a merge, a rebase) need an identity:
/// the person's own ([`identity`]), always given on the command line,
/// because a git pointed at a session's checkout reads no global config
/// (`host_git`).
pub(crate) fn identity_args(repo: &Path) -> Vec<String> {
    let (name, email) = identity(repo);
    vec![
        "-c".to_owned(),
        format!("user.name={name}"),
        "-c".to_owned(),
        format!("user.email={email}"),
    ]
}

/// `git status --porcelain` entries of tracked changes and untracked files
/// that are not ignored in a session's checkout, asked through the git
/// directories the host recorded (`host_git`).
pub(crate) fn changed_files_in(paths: &GitPaths) -> Result<Vec<String>, WorkspaceError> {
    let out = paths.run(&[
        "status",
        "--porcelain=v1",
        "--untracked-files=all",
        "--ignore-submodules=all",
    ])?;
    Ok(porcelain_lines(&out))
}

/// Stdout of a finished git, or the error naming what failed.
pub(crate) fn git_result(
    dir: &Path,
    args: &str,
    out: std::process::Output,
) -> Result<String, WorkspaceError> {
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(WorkspaceError::Git {
            args: args.to_owned(),
            dir: dir.to_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        })
    }
}

/// The entries of `git status --porcelain` output.
pub(crate) fn porcelain_lines(out: &str) -> Vec<String> {
    out.lines()
        .filter(|l| !l.is_empty())
        .map(|l| l.trim().to_owned())
        .collect()
}

/// A short list of changed files for a message: the first five, then a count.
pub(crate) fn summarize(files: &[String]) -> String {
    let mut shown: Vec<String> = files.iter().take(5).cloned().collect();
    if files.len() > 5 {
        shown.push(format!("and {} more", files.len() - 5));
    }
    shown.join(", ")
}

/// The top of the repository `path` is in.
pub(crate) fn toplevel(path: &Path) -> Result<PathBuf, WorkspaceError> {
    match git_output(path, &["rev-parse", "--show-toplevel"])? {
        out if out.status.success() => Ok(PathBuf::from(
            String::from_utf8_lossy(&out.stdout).trim_end_matches('\n'),
        )),
        _ => Err(WorkspaceError::NotARepo {
            path: path.to_owned(),
        }),
    }
}

/// The commit a rev names, in full.
pub(crate) fn rev(dir: &Path, name: &str) -> Result<String, WorkspaceError> {
    Ok(git(
        dir,
        &["rev-parse", "--verify", &format!("{name}^{{commit}}")],
    )?
    .trim()
    .to_owned())
}

/// Seven characters of a commit, for sentences.
pub(crate) fn short(commit: &str) -> &str {
    commit.get(..7).unwrap_or(commit)
}
