//! Test-only helpers shared by every crate's integration tests and by the
//! end-to-end suite: a scripted fake model server that speaks the real
//! OpenAI Chat Completions and Anthropic Messages wire formats, temporary
//! projects and git repos, deadline-bounded polling, servers that serve in
//! the background of a test, and (with the `daemon` feature) a daemon in a
//! temporary state directory with a stand-in `chock run` and live session
//! logs.
//!
//! Helpers here panic with a message instead of returning errors: they only
//! run inside tests, where a panic *is* the failure report, and a test that
//! has to unwrap every fixture reads worse than one that does not.

#![deny(clippy::print_stdout, clippy::print_stderr)]
#![forbid(unsafe_code)]

mod background;
#[cfg(feature = "bench")]
mod bench;
#[cfg(feature = "daemon")]
mod daemon;
mod devices;
mod git_server;
mod model;
mod other_user;
mod project;
mod rerun;
mod site;
mod tmux;
mod wait;

pub use background::{Serving, Stopped, serve_in_background};
#[cfg(feature = "bench")]
pub use bench::CpuTime;
#[cfg(feature = "daemon")]
pub use daemon::{
    GREETING, HasTestDirs, LiveLog, RunningDaemon, S1, S2, S3, StandIn, TestDaemon, TestDirs,
    eventually, read_all,
};
pub use devices::{FakeDevices, UsbDevice, device_numbers};
pub use git_server::{GitRequest, GitServer};
pub use model::{Billing, FakeModel, RecordedRequest, Reply, ScriptedCall, Turn, Wire, tokens_of};
pub use other_user::{OTHER_USER, exchange_as_other_user, other_uid};
pub use project::{TempProject, git, git_repo};
pub use rerun::{NoRerun, Rerun};
pub use site::{Page, Site};
pub use tmux::{SCREEN_WAIT, Tmux};
pub use wait::{wait_for, wait_for_async, wait_for_async_probe};

/// Runs `command` to its end and returns its stdout; panics naming `what`
/// when it cannot start or fails, with its stderr.
pub(crate) fn stdout_of(command: &mut std::process::Command, what: &str) -> String {
    let out = command
        .output()
        .unwrap_or_else(|err| panic!("cannot run {what}: {err}"));
    if !out.status.success() {
        panic!(
            "{what} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Listens on a free port of 127.0.0.1 and hands each connection to
/// `answer` on a thread of its own, until the test process ends; the
/// address. `what` names the server in a panic.
pub(crate) fn serve_on_loopback(
    what: &str,
    answer: impl Fn(std::net::TcpStream) + Send + Sync + 'static,
) -> std::net::SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap_or_else(|err| panic!("cannot bind a {what} on 127.0.0.1: {err}"));
    let addr = listener
        .local_addr()
        .unwrap_or_else(|err| panic!("the {what} has no local address: {err}"));
    let answer = std::sync::Arc::new(answer);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let answer = std::sync::Arc::clone(&answer);
            std::thread::spawn(move || answer(stream));
        }
    });
    addr
}

/// The permission bits (`0o777`) of the file at `path`.
#[must_use]
pub fn permission_bits(path: &std::path::Path) -> u32 {
    let meta = std::fs::metadata(path)
        .unwrap_or_else(|err| panic!("cannot stat {}: {err}", path.display()));
    std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o777
}

/// A current-thread tokio runtime with I/O and timers, for a test that
/// drives async code from a plain `#[test]`.
#[must_use]
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|err| panic!("cannot build a current-thread runtime: {err}"))
}
