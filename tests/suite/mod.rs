//! Shared helpers for the end-to-end suite.

mod cli;
mod daemon;
mod log;
mod network;
mod plan;
mod policy;
mod sandbox;
mod session_logs;
mod sessions;
mod usage;

use std::path::PathBuf;
use std::process::Command;

/// The `chock` binary cargo built for this test run.
pub(crate) fn chock_bin() -> PathBuf {
    // Cargo builds every binary of the workspace before running an
    // integration test of another package only when asked; nextest and
    // `cargo test --workspace` both do, and the binary sits beside the test.
    let mut dir = std::env::current_exe().expect("test binary path");
    dir.pop();
    if dir.ends_with("deps") {
        dir.pop();
    }
    dir.join("chock")
}

/// A `chock` command isolated from the person's own state and config.
pub(crate) fn chock(state: &std::path::Path) -> Command {
    let mut cmd = Command::new(chock_bin());
    cmd.env("CHOCK_STATE_DIR", state)
        .env("XDG_CONFIG_HOME", state.join("config"))
        .env_remove("CHOCK_DAEMON")
        .env_remove("CHOCK_LOG");
    cmd
}
