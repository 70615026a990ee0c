//! `interrupt`: ends a session's current turn by sending SIGINT to the
//! process that holds its log, as Ctrl-C in that process would. A session
//! running one task (every daemon child, every `chock run <dir> <message>`)
//! then ends its turn and the session as `interrupted`, whole, and
//! `continue` carries it on.
//!
//! The holder is the one `/proc/locks` names; only a process of the
//! daemon's own user is signalled, so the verb cannot reach anyone else's.

use std::os::unix::fs::MetadataExt;

use chock_control::Reply;

use super::{Conn, Shared, VerbError, project_session};
use crate::store;

pub(crate) async fn interrupt(
    shared: &Shared,
    project: &str,
    session: &str,
    conn: &mut Conn,
) -> Result<(), VerbError> {
    let (_, path, row) = project_session(shared, project, session)?;
    if row.ended() {
        return Err(VerbError::Refuse(format!(
            "session {session} has ended: there is no turn to interrupt; \
             'continue' carries it on"
        )));
    }
    let Some(pid) = store::owner(&path) else {
        return Err(VerbError::Refuse(format!(
            "nobody holds the log of session {session}: no process runs it, so there is \
             no turn to interrupt"
        )));
    };
    let uid = rustix::process::getuid().as_raw();
    let theirs = std::fs::metadata(format!("/proc/{pid}")).map(|m| m.uid());
    if theirs.as_ref().ok() != Some(&uid) {
        return Err(VerbError::Refuse(format!(
            "session {session} is held by process {pid}, which is not this daemon's user's: \
             interrupt it from its own terminal"
        )));
    }
    let target = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
        .ok_or_else(|| {
            VerbError::Refuse(format!("process {pid} is not a pid that can be signalled"))
        })?;
    rustix::process::kill_process(target, rustix::process::Signal::INT).map_err(|err| {
        VerbError::Refuse(format!(
            "cannot interrupt process {pid}, which holds session {session}: {err}"
        ))
    })?;
    tracing::info!(session_id = %session, pid, "interrupted the session's turn");
    conn.send(&Reply::Interrupted).await
}
