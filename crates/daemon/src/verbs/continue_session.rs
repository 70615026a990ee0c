//! `continue`: carries an ended session on with the person's message, as
//! `chock run --continue <id> <message>` does (the same log, the same
//! workspace), run as the daemon's own child. The reply waits, like
//! `adopt`'s, until the child's new `session.open` carries its pid or
//! `/proc/locks` names it, so `ok` means the daemon's child has the session.

use chock_control::Reply;
use chock_log::RowStatus;
use chock_log::event::EndReason;

use super::spawn::{spawn, wait_ready};
use super::{Conn, Shared, VerbError, project_dir, project_session};
use crate::store;

pub(crate) async fn continue_session(
    shared: &Shared,
    project: &str,
    session: &str,
    message: &str,
    conn: &mut Conn,
) -> Result<(), VerbError> {
    if message.trim().is_empty() {
        return Err(VerbError::Refuse(format!(
            "the message to continue session {session} with is empty: say what the session should do next"
        )));
    }
    let (_, path, row) = project_session(shared, project, session)?;
    // One start of a child for a session at a time, shared with `adopt`.
    let turn = shared.children.adopting(session);
    let _turn = turn.lock().await;
    if store::is_owned(&path) || !row.ended() {
        let by = store::owner(&path).map_or_else(String::new, |pid| format!(" in process {pid}"));
        let doing = match row.row.status {
            RowStatus::Waiting => "waiting for a person",
            _ => "still running",
        };
        return Err(VerbError::Refuse(format!(
            "session {session} is {doing}{by}: answer its question or interrupt it first \
             ('interrupt <project directory>\\t{session}'), then continue it"
        )));
    }
    if row.row.reason == Some(EndReason::Handover) {
        return Err(VerbError::Refuse(format!(
            "session {session} ended with a handover and waits to be adopted, not continued: \
             send 'adopt <project directory>\\t{session}'"
        )));
    }
    let dir = project_dir(project)?;
    // Read before the child can append its own `session.open`.
    let before = store::last_id(&path).unwrap_or(0);
    // `--continue=<id>` and `--` so that a message starting with `-` is
    // the message, not a flag.
    let flag = format!("--continue={session}");
    let args = ["run", &flag, "--", message];
    let child = spawn(shared, session, &args, &dir)?;
    wait_ready(shared, session, &path, &child, Some(before)).await?;
    conn.send(&Reply::Started {
        session: session.to_owned(),
        log: path.to_string_lossy().into_owned(),
    })
    .await
}
