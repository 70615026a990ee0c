//! `start` and `adopt`: each runs one child `chock run`, the same program a
//! person types, and replies `ok <session id>\t<log path>` once the child
//! holds the session's log, or an error when the child exits first.
//!
//! The child of `start` is told its session id with the hidden
//! `--session-id` flag, so the daemon knows where the log will appear
//! without reading anything the child prints. The daemon never writes the
//! log itself.

use std::path::Path;
use std::time::{Duration, Instant};

use chock_control::Reply;
use chock_log::SessionId;

use super::{Conn, Shared, VerbError, project_dir, project_session};
use crate::children::ChildInfo;
use crate::store;

/// How often the wait for a child's log looks again.
const READY_POLL: Duration = Duration::from_millis(10);

pub(crate) async fn start(
    shared: &Shared,
    project: &str,
    message: &str,
    conn: &mut Conn,
) -> Result<(), VerbError> {
    let dir = project_dir(project)?;
    let id = SessionId::new();
    let session = id.as_str();
    let dir_text = dir.to_string_lossy().into_owned();
    let args = ["run", "--session-id", session, "--", &dir_text, message];
    let child = spawn(shared, session, &args, &dir)?;
    let path = shared.store.log_path(&id);
    wait_ready(shared, session, &path, &child, None).await?;
    conn.send(&Reply::Started {
        session: session.to_owned(),
        log: path.to_string_lossy().into_owned(),
    })
    .await
}

pub(crate) async fn adopt(
    shared: &Shared,
    project: &str,
    session: &str,
    conn: &mut Conn,
) -> Result<(), VerbError> {
    let (_, path, _) = project_session(shared, project, session)?;
    if store::is_owned(&path) {
        let by = store::owner(&path).map_or_else(
            || "another process".to_owned(),
            |pid| format!("process {pid}"),
        );
        return Err(VerbError::Refuse(format!(
            "session {session} is still owned by {by}: hand it over with 'chock detach {session}'"
        )));
    }
    let dir = project_dir(project)?;
    // Measured before the child can append its own `session.open`.
    let before = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let args = ["run", "--adopt", session];
    let child = spawn(shared, session, &args, &dir)?;
    wait_ready(shared, session, &path, &child, Some(before)).await?;
    conn.send(&Reply::Started {
        session: session.to_owned(),
        log: path.to_string_lossy().into_owned(),
    })
    .await
}

fn spawn(
    shared: &Shared,
    session: &str,
    args: &[&str],
    dir: &Path,
) -> Result<ChildInfo, VerbError> {
    shared
        .children
        .spawn(
            session,
            &shared.chock_exe,
            args,
            dir,
            shared.store.state().root(),
        )
        .map_err(|err| {
            VerbError::Refuse(format!(
                "cannot start 'chock run' for session {session}: {err}; \
                 check the chock installation on the daemon's machine"
            ))
        })
}

/// Waits until, for `start`, the log has its first complete event, or, for
/// `adopt`, the child holds the log or has written to it; or the child
/// exits, or the time runs out.
async fn wait_ready(
    shared: &Shared,
    session: &str,
    path: &Path,
    child: &ChildInfo,
    adopted_len: Option<u64>,
) -> Result<(), VerbError> {
    let deadline = Instant::now() + shared.start_timeout;
    let mut ended = child.ended.clone();
    loop {
        let ready = match adopted_len {
            // A fresh log is a started session once its first event (the
            // session.open naming the project) is complete: holding the
            // lock comes earlier, and a watch or answer arriving between
            // the two would find a session of no project.
            None => store::last_id(path).is_ok_and(|last| last > 0),
            // An adopted log already names its project.
            Some(before) => {
                store::owner(path) == Some(child.pid)
                    || std::fs::metadata(path).is_ok_and(|m| m.len() > before)
            }
        };
        if ready {
            return Ok(());
        }
        if let Some(ending) = ended.borrow_and_update().clone() {
            return Err(VerbError::Refuse(format!(
                "chock run for session {session} ended ({}) before it held the session's log: \
                 run it by hand in the project to see why",
                ending.0
            )));
        }
        if Instant::now() >= deadline {
            return Err(VerbError::Refuse(format!(
                "chock run for session {session} did not take the session's log within {} s; \
                 it is still running as process {}",
                shared.start_timeout.as_secs(),
                child.pid
            )));
        }
        tokio::select! {
            _ = ended.changed() => {}
            () = tokio::time::sleep(READY_POLL) => {}
        }
    }
}
