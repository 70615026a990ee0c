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
    chock_testkit::git_repo(&root.join(name))
}

/// The fixtures directory of this crate.
pub(crate) fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}
