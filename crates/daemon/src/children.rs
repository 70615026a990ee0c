//! The daemon's children: one `chock run` per session it started or adopted.
//!
//! Each child is reaped by its own task, and how it ended is kept here, so a
//! session whose process died without writing an ending still reads as
//! crashed in its row. A child that crashes takes down its session only: the
//! reaper records it and the daemon carries on serving everyone else.

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

#[derive(Debug, Clone)]
pub(crate) struct ChildInfo {
    pub(crate) pid: u32,
    pub(crate) ended: watch::Receiver<Option<Ending>>,
    /// The end of what the child wrote on stderr (which also goes on to
    /// the daemon's own stderr): why a child that ended early failed.
    pub(crate) said: Arc<Mutex<Tail>>,
}

/// How much of a child's stderr is kept.
const TAIL_BYTES: usize = 4 << 10;

/// The last few KiB a child wrote on stderr, whole lines.
#[derive(Debug, Default)]
pub(crate) struct Tail(String);

impl Tail {
    fn push(&mut self, line: &str) {
        self.0.push_str(line);
        self.0.push('\n');
        if self.0.len() > TAIL_BYTES {
            let cut = self.0.len() - TAIL_BYTES;
            let at = self.0[cut..]
                .find('\n')
                .map_or(self.0.len(), |i| cut + i + 1);
            self.0.drain(..at);
        }
    }

    /// The cause, as a person reads it: the last line that says something,
    /// without the `chock: ` every error line starts with, control
    /// characters shown as `?`. `None` when the child said nothing.
    pub(crate) fn cause(&self) -> Option<String> {
        let line = self
            .0
            .lines()
            .rev()
            .map(str::trim)
            .find(|line| !line.is_empty())?;
        let line = line.strip_prefix("chock: ").unwrap_or(line);
        let line = line.strip_prefix("error: ").unwrap_or(line);
        Some(chock_control::sanitize(line))
    }
}

/// Copies a child's stderr on to the daemon's, keeping its tail.
async fn relay(stderr: tokio::process::ChildStderr, tail: Arc<Mutex<Tail>>) {
    use std::io::Write as _;
    use tokio::io::AsyncBufReadExt;
    let mut lines = tokio::io::BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let _ = writeln!(std::io::stderr().lock(), "{line}");
        tail.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(&line);
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
        let said = Arc::new(Mutex::new(Tail::default()));
        let relayed = child
            .stderr
            .take()
            .map(|stderr| tokio::spawn(relay(stderr, Arc::clone(&said))));
        let info = ChildInfo {
            pid,
            ended: rx,
            said,
        };
        self.lock().insert(session.to_owned(), info.clone());
        let session = session.to_owned();
        tokio::spawn(async move {
            let ending = match child.wait().await {
                Ok(status) => Ending::from_status(status),
                Err(err) => Ending(format!("not reaped: {err}")),
            };
            // The ending is told once everything the child said is in its
            // tail, so an early failure's cause is there to read.
            if let Some(relayed) = relayed {
                let _ = tokio::time::timeout(std::time::Duration::from_secs(2), relayed).await;
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
    fn the_cause_is_the_last_line_that_says_something_without_its_prefix() {
        let mut tail = Tail::default();
        tail.push("chock: note: something earlier");
        tail.push("chock: /tmp/x is not in a git repository: run chock run inside one");
        tail.push("");
        assert_eq!(
            tail.cause().as_deref(),
            Some("/tmp/x is not in a git repository: run chock run inside one")
        );
        assert_eq!(Tail::default().cause(), None);
    }

    #[test]
    fn the_tail_keeps_whole_recent_lines_only() {
        let mut tail = Tail::default();
        for n in 0..2_000 {
            tail.push(&format!("line {n}"));
        }
        assert!(tail.0.len() <= TAIL_BYTES);
        assert!(tail.0.starts_with("line "));
        assert_eq!(tail.cause().as_deref(), Some("line 1999"));
    }
}
