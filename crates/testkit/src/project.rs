//! Temporary projects: a directory that is deleted when the test ends,
//! optionally a git repository with one commit. Git runs with the person's
//! global and system config shut out, so a test behaves the same on every
//! machine (no signing hooks, no default branch surprises).

use std::path::{Path, PathBuf};
use std::process::Command;

use tempfile::TempDir;

/// A throwaway project directory.
#[derive(Debug)]
pub struct TempProject {
    dir: TempDir,
}

impl TempProject {
    /// An empty directory that is not a git repository.
    pub fn new() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("chock-project-")
            .tempdir()
            .unwrap_or_else(|err| panic!("cannot create a temporary project: {err}"));
        Self { dir }
    }

    /// A git repository on branch `main` with `README.md` committed.
    pub fn git() -> Self {
        let project = Self::new();
        project.run_git(&["init", "--quiet", "--initial-branch=main"]);
        project.write("README.md", "# test project\n");
        project.commit_all("initial commit");
        project
    }

    /// The project's root directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Absolute path of `rel` inside the project.
    pub fn join(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Writes `contents` to `rel`, creating parent directories.
    pub fn write(&self, rel: &str, contents: &str) -> PathBuf {
        let path = self.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .unwrap_or_else(|err| panic!("cannot create {}: {err}", parent.display()));
        }
        std::fs::write(&path, contents)
            .unwrap_or_else(|err| panic!("cannot write {}: {err}", path.display()));
        path
    }

    /// Reads `rel` as UTF-8.
    pub fn read(&self, rel: &str) -> String {
        let path = self.join(rel);
        std::fs::read_to_string(&path)
            .unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()))
    }

    /// Writes the project's policy file, `chock.zon`, with `text` as given.
    pub fn write_chock_zon(&self, text: &str) -> PathBuf {
        self.write("chock.zon", text)
    }

    /// Stages everything and commits it.
    pub fn commit_all(&self, message: &str) {
        self.run_git(&["add", "--all"]);
        self.run_git(&["commit", "--quiet", "--allow-empty", "-m", message]);
    }

    /// The commit `HEAD` points at.
    pub fn head(&self) -> String {
        self.run_git(&["rev-parse", "HEAD"]).trim().to_owned()
    }

    /// Runs git in the project and returns its stdout; panics with git's
    /// stderr when it fails.
    pub fn run_git(&self, args: &[&str]) -> String {
        git(self.path(), args)
    }
}

/// Runs git in `dir` with a test identity and neither the person's nor the
/// system's configuration, and returns its stdout; panics with git's
/// stderr when it fails.
pub fn git(dir: &Path, args: &[&str]) -> String {
    crate::stdout_of(
        Command::new("git")
            .args([
                "-c",
                "user.name=Chock Test",
                "-c",
                "user.email=test@chock.invalid",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1"),
        &format!("git {args:?}"),
    )
}

impl Default for TempProject {
    fn default() -> Self {
        Self::new()
    }
}

/// A repository with one commit (`README`) at `dir`, on `main`, whose own
/// config names Ada as the person (`ada@example.org`): what a stop records
/// as who. Its canonical path.
pub fn git_repo(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir)
        .unwrap_or_else(|err| panic!("cannot make {}: {err}", dir.display()));
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["config", "user.email", "ada@example.org"]);
    git(dir, &["config", "user.name", "Ada"]);
    std::fs::write(dir.join("README"), "hi\n")
        .unwrap_or_else(|err| panic!("cannot write README: {err}"));
    git(dir, &["add", "README"]);
    git(dir, &["commit", "-q", "-m", "first"]);
    std::fs::canonicalize(dir)
        .unwrap_or_else(|err| panic!("cannot resolve {}: {err}", dir.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_git_project_has_one_commit_and_a_clean_tree() {
        let project = TempProject::git();
        assert_eq!(project.head().len(), 40);
        assert_eq!(project.run_git(&["status", "--porcelain"]), "");
        project.write_chock_zon(".{}\n");
        assert_eq!(
            project.run_git(&["status", "--porcelain"]),
            "?? chock.zon\n"
        );
    }
}
