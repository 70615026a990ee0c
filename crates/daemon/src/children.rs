//! The daemon's children: one `chock run` per session it started or adopted.
//!
//! Each child is reaped by its own task, and how it ended is kept here, so a
//! session whose process died without writing an ending still reads as
//! crashed in its row. A child that crashes takes down its session only: the
//! reaper records it and the daemon carries on serving everyone else.
//!
//! A child's stderr still reaches the daemon's own stderr (its journal), line
//! by line, and the last few KiB of it are kept too: a child that exits
//! before it holds its log said why there, and `start`, `adopt` and
//! `continue` put that cause in their error line.

use std::collections::HashMap;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};

use tokio::process::Command;
use tokio::sync::watch;

/// How a child ended, as a person reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ending(pub(crate) String);

impl Ending {
    fn from_status(status: ExitStatus) -> Ending {
        use std::os::unix::process::ExitStatusExt;
        match (status.code(), status.signal()) {
            (Some(code), _) => Ending(format!("exit {code}")),
            (None, Some(signal)) => Ending(format!("signal {signal}")),
            (None, None) => Ending("unknown".to_owned()),
        }
    }
}

/// How much of a child's stderr is kept for its cause.
const STDERR_TAIL: usize = 4 << 10;

/// How long the reaper waits for the rest of a dead child's stderr: a
/// process the child left running may hold the pipe open.
const STDERR_DRAIN: std::time::Duration = std::time::Duration::from_secs(1);

#[derive(Debug, Clone)]
pub(crate) struct ChildInfo {
    pub(crate) pid: u32,
    /// Set once the child is reaped and its stderr read to the end.
    pub(crate) ended: watch::Receiver<Option<Ending>>,
    /// The last [`STDERR_TAIL`] bytes of its stderr, control characters
    /// shown as `?`.
    stderr: Arc<Mutex<String>>,
}

impl ChildInfo {
    /// Why the child said it stopped: its last non-empty stderr line,
    /// without the `chock: ` every message of the binary starts with.
    pub(crate) fn cause(&self) -> Option<String> {
        let tail = self
            .stderr
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let line = tail.lines().map(str::trim).rfind(|line| !line.is_empty())?;
        Some(line.strip_prefix("chock: ").unwrap_or(line).to_owned())
    }
}

/// Keeps the end of `tail` within [`STDERR_TAIL`] bytes after adding `line`.
fn keep(tail: &mut String, line: &str) {
    tail.extend(
        line.chars()
            .map(|c| if c.is_control() && c != '\t' { '?' } else { c }),
    );
    tail.push('\n');
    if tail.len() > STDERR_TAIL {
        let mut cut = tail.len() - STDERR_TAIL;
        while !tail.is_char_boundary(cut) {
            cut += 1;
        }
        tail.drain(..cut);
    }
}

/// Copies the child's stderr to the daemon's, keeping its tail.
async fn forward(stderr: tokio::process::ChildStderr, tail: Arc<Mutex<String>>) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let mut lines = tokio::io::BufReader::new(stderr).split(b'\n');
    let mut out = tokio::io::stderr();
    while let Ok(Some(line)) = lines.next_segment().await {
        let mut raw = line.clone();
        raw.push(b'\n');
        let _ = out.write_all(&raw).await;
        let text = String::from_utf8_lossy(&line);
        keep(
            &mut tail
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
            text.trim_end_matches('\r'),
        );
    }
}

/// Every child this daemon has run, by session id.
#[derive(Debug, Default)]
pub(crate) struct Children {
    by_session: Mutex<HashMap<String, ChildInfo>>,
    /// One adopt of a session at a time.
    adopting: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl Children {
    /// The turn an adopt of `session` waits for.
    pub(crate) fn adopting(&self, session: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut map = self
            .adopting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // Turns nobody waits on are dropped, so the map stays small.
        map.retain(|_, turn| Arc::strong_count(turn) > 1);
        Arc::clone(map.entry(session.to_owned()).or_default())
    }

    pub(crate) fn get(&self, session: &str) -> Option<ChildInfo> {
        self.lock().get(session).cloned()
    }

    /// Every child, as it is now: for a caller that looks up thousands of
    /// sessions and should lock once.
    pub(crate) fn snapshot(&self) -> HashMap<String, ChildInfo> {
        self.lock().clone()
    }

    /// Spawns `exe args...` in `project` for `session`, and a task that
    /// reaps it and records how it ended.
    pub(crate) fn spawn(
        self: &Arc<Self>,
        session: &str,
        exe: &Path,
        args: &[&str],
        project: &Path,
        state_dir: &Path,
    ) -> std::io::Result<ChildInfo> {
        let mut command = Command::new(exe);
        command
            .args(args)
            .current_dir(project)
            .env("CHOCK_STATE_DIR", state_dir)
            // The child is a session of its own, not part of this service's
            // socket activation or readiness protocol.
            .env_remove("LISTEN_FDS")
            .env_remove("LISTEN_PID")
            .env_remove("LISTEN_FDNAMES")
            .env_remove("NOTIFY_SOCKET")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(false);
        let mut child = command.spawn()?;
        let pid = child.id().unwrap_or(0);
        let (tx, rx) = watch::channel(None);
        let stderr = Arc::new(Mutex::new(String::new()));
        let info = ChildInfo {
            pid,
            ended: rx,
            stderr: Arc::clone(&stderr),
        };
        self.lock().insert(session.to_owned(), info.clone());
        let session = session.to_owned();
        let forwarding = child
            .stderr
            .take()
            .map(|pipe| tokio::spawn(forward(pipe, stderr)));
        tokio::spawn(async move {
            let ending = match child.wait().await {
                Ok(status) => Ending::from_status(status),
                Err(err) => Ending(format!("not reaped: {err}")),
            };
            if let Some(forwarding) = forwarding {
                let _ = tokio::time::timeout(STDERR_DRAIN, forwarding).await;
            }
            tracing::info!(session_id = %session, pid, ending = %ending.0, "session process ended");
            tx.send_replace(Some(ending));
        });
        Ok(info)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, ChildInfo>> {
        // A poisoned map is still a correct map: every insert is one call.
        self.by_session
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_is_bounded_and_its_control_characters_are_safe() {
        let mut tail = String::new();
        for n in 0..1000 {
            keep(&mut tail, &format!("line {n} \u{1b}[31mred"));
        }
        assert!(tail.len() <= STDERR_TAIL, "{}", tail.len());
        assert!(tail.ends_with("line 999 ?[31mred\n"), "{tail}");
        let info = ChildInfo {
            pid: 1,
            ended: watch::channel(None).1,
            stderr: Arc::new(Mutex::new(
                "chock: first\nchock: the cause\n\n  \n".to_owned(),
            )),
        };
        assert_eq!(info.cause().as_deref(), Some("the cause"));
    }
}
