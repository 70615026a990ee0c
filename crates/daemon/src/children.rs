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
            .kill_on_drop(false);
        let mut child = command.spawn()?;
        let pid = child.id().unwrap_or(0);
        let (tx, rx) = watch::channel(None);
        let info = ChildInfo { pid, ended: rx };
        self.lock().insert(session.to_owned(), info.clone());
        let session = session.to_owned();
        tokio::spawn(async move {
            let ending = match child.wait().await {
                Ok(status) => Ending::from_status(status),
                Err(err) => Ending(format!("not reaped: {err}")),
            };
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
