//! From any directory to the repository whose stop reaches it.
//!
//! `.chock/stop.json` is never committed, so a linked worktree has no copy of
//! its own: its stop is its main checkout's. This module answers the question
//! `git rev-parse --git-common-dir` answers, by reading the same files git
//! reads (`.git`, `gitdir:`, `commondir`) instead of starting a process,
//! because the stop reader runs before every tool call. The end-to-end tests
//! check that both answers agree on plain repositories, subdirectories and
//! linked worktrees.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::GateError;

/// A repository as far as stops are concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repo {
    /// The main checkout's real path: where `.chock/stop.json` lives and what
    /// the machine registry is keyed by. For a bare repository with linked
    /// worktrees this is the bare repository's directory.
    pub main_checkout: PathBuf,
    /// The git common directory (`<main>/.git` for an ordinary repository).
    pub common_dir: PathBuf,
}

impl Repo {
    /// `<main checkout>/.chock/stop.json`.
    pub fn stop_file(&self) -> PathBuf {
        self.main_checkout.join(".chock").join("stop.json")
    }

    /// The repository's name a person types to resume: the main checkout's
    /// directory name.
    pub fn name(&self) -> String {
        self.main_checkout
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.main_checkout.display().to_string())
    }
}

/// Find the repository `dir` belongs to. `Ok(None)` when `dir` is not inside
/// one; `Err` when git metadata exists but cannot be made sense of, which a
/// caller deciding on a stop must treat as a refusal.
pub fn discover(dir: &Path) -> Result<Option<Repo>, GateError> {
    let start = fs::canonicalize(dir).map_err(|e| GateError::io("resolve", dir, e))?;
    let mut current: Option<&Path> = Some(&start);
    while let Some(here) = current {
        let dot_git = here.join(".git");
        match fs::symlink_metadata(&dot_git) {
            Ok(meta) if meta.is_dir() => return from_git_dir(&dot_git).map(Some),
            Ok(_) => return from_git_file(here, &dot_git).map(Some),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            Err(err) => return Err(GateError::io("inspect", dot_git, err)),
        }
        current = here.parent();
    }
    Ok(None)
}

fn from_git_file(worktree: &Path, dot_git: &Path) -> Result<Repo, GateError> {
    let text = fs::read_to_string(dot_git).map_err(|e| GateError::io("read", dot_git, e))?;
    let target = text
        .trim_end()
        .strip_prefix("gitdir:")
        .map(str::trim)
        .ok_or_else(|| GateError::BadGitDir {
            path: dot_git.to_owned(),
            detail: "no 'gitdir:' line".into(),
        })?;
    let git_dir = worktree.join(target);
    from_git_dir(&git_dir)
}

fn from_git_dir(git_dir: &Path) -> Result<Repo, GateError> {
    let git_dir = fs::canonicalize(git_dir).map_err(|e| GateError::io("resolve", git_dir, e))?;
    let commondir = git_dir.join("commondir");
    let common_dir = match fs::read_to_string(&commondir) {
        Ok(text) => {
            let joined = git_dir.join(text.trim_end());
            fs::canonicalize(&joined).map_err(|e| GateError::io("resolve", joined, e))?
        }
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => git_dir.clone(),
        Err(err) => return Err(GateError::io("read", commondir, err)),
    };
    let main_checkout = if common_dir.file_name().is_some_and(|n| n == ".git") {
        common_dir
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| common_dir.clone())
    } else if git_dir == common_dir && !is_bare(&common_dir) {
        // A submodule: `.git` points into the superproject's `modules/`, with
        // no `commondir`; its checkout is recorded in `core.worktree`.
        return submodule_checkout(&git_dir);
    } else {
        common_dir.clone()
    };
    Ok(Repo {
        main_checkout,
        common_dir,
    })
}

/// A submodule's git dir records its checkout in `core.worktree`.
fn submodule_checkout(git_dir: &Path) -> Result<Repo, GateError> {
    let config = git_dir.join("config");
    let text = fs::read_to_string(&config).map_err(|e| GateError::io("read", &config, e))?;
    let worktree = text
        .lines()
        .filter_map(|line| line.trim().strip_prefix("worktree"))
        .filter_map(|rest| rest.trim_start().strip_prefix('='))
        .map(str::trim)
        .next()
        .ok_or_else(|| GateError::BadGitDir {
            path: git_dir.to_owned(),
            detail: "neither a checkout's .git nor a bare repository nor a submodule".into(),
        })?;
    let joined = git_dir.join(worktree);
    let main_checkout =
        fs::canonicalize(&joined).map_err(|e| GateError::io("resolve", joined, e))?;
    Ok(Repo {
        main_checkout,
        common_dir: git_dir.to_owned(),
    })
}

fn is_bare(git_dir: &Path) -> bool {
    fs::read_to_string(git_dir.join("config"))
        .map(|text| {
            text.lines()
                .any(|l| l.split_whitespace().collect::<String>() == "bare=true")
        })
        .unwrap_or(false)
}
