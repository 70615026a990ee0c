//! Waiting for a sandbox to end on the session's one thread: its pid 1's
//! pidfd, which tokio polls like a socket (used by foreground commands and
//! background jobs alike).

use chock_sandbox::{ExitStatus, SandboxChild};
use tokio::io::unix::AsyncFd;

/// The sandbox's pidfd as something tokio can poll.
pub(super) struct PidFd<'c>(pub(super) &'c mut SandboxChild);

impl std::os::fd::AsRawFd for PidFd<'_> {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.0.as_raw_fd()
    }
}

pub(super) async fn wait_exit(pidfd: &mut AsyncFd<PidFd<'_>>) -> std::io::Result<ExitStatus> {
    loop {
        let mut ready = pidfd.readable_mut().await?;
        if let Some(status) = ready.get_inner_mut().0.try_wait()? {
            return Ok(status);
        }
        ready.clear_ready();
    }
}
