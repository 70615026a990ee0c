//! Shared helpers: temporary homes and git repositories.

mod hook_inputs;
mod reader;
mod repo;
mod sync;

use std::path::{Path, PathBuf};
use std::process::Command;

/// Run git in `dir`, panicking with its stderr on failure.
pub(crate) fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A repository with one commit at `<root>/<name>`.
pub(crate) fn repo(root: &Path, name: &str) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    git(&dir, &["init", "-q", "-b", "main"]);
    git(&dir, &["config", "user.email", "ada@example.org"]);
    git(&dir, &["config", "user.name", "Ada"]);
    std::fs::write(dir.join("README"), "hi\n").unwrap();
    git(&dir, &["add", "README"]);
    git(&dir, &["commit", "-q", "-m", "first"]);
    std::fs::canonicalize(dir).unwrap()
}

/// The fixtures directory of this crate.
pub(crate) fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}
