//! `detach`: hands a session the daemon does not own over to it, exactly
//! as `chock detach <id>` does: the session's own handover socket is asked,
//! background work it holds is waited for, `confirm` follows its `ready`,
//! and once it has ended its run with reason handover the daemon's own
//! `adopt` carries it on. The session's refusal is relayed as it said it.

use std::time::Duration;

use chock_control::Reply;
use chock_control::handover::{HandoverClient, SessionLine};

use super::spawn::adopt_child;
use super::{Conn, Shared, VerbError, project_session};
use crate::store;

/// How long each wait of the exchange may take, as `chock detach`'s
/// default `--wait`: for the turn boundary, then for background work.
const WAIT: Duration = Duration::from_secs(300);

pub(crate) async fn detach(
    shared: &Shared,
    project: &str,
    session: &str,
    conn: &mut Conn,
) -> Result<(), VerbError> {
    let (id, path, row) = project_session(shared, project, session)?;
    if row.ended() {
        return Err(VerbError::Refuse(format!(
            "session {session} has ended: there is nothing to hand over; \
             'continue' carries it on in the daemon"
        )));
    }
    if let (Some(pid), Some(child)) = (store::owner(&path), shared.children.get(session))
        && child.pid == pid
        && child.ended.borrow().is_none()
    {
        return Err(VerbError::Refuse(format!(
            "session {session} is already the daemon's: its child, process {pid}, holds the log"
        )));
    }
    let socket = shared.store.state().handover_socket(&id);
    let refused = |err: chock_control::handover::HandoverError| {
        VerbError::Refuse(format!("cannot hand session {session} over: {err}"))
    };
    let mut client = HandoverClient::ask(&socket).await.map_err(refused)?;
    loop {
        match client.next(WAIT).await.map_err(refused)? {
            SessionLine::Holding(holdings) => {
                tracing::info!(session_id = %session, %holdings, "waiting for background work");
            }
            SessionLine::Ready { .. } => break,
            SessionLine::Error(message) => {
                return Err(VerbError::Refuse(format!(
                    "session {session} refused the handover: {message}"
                )));
            }
            SessionLine::HandedOver { .. } => {
                return Err(VerbError::Refuse(format!(
                    "session {session} said it handed over before it was confirmed; \
                     'chock log {session}' shows how it stands"
                )));
            }
        }
    }
    client.confirm().await.map_err(refused)?;
    match client.next(WAIT).await.map_err(refused)? {
        SessionLine::HandedOver { .. } => {}
        SessionLine::Error(message) => {
            return Err(VerbError::Refuse(format!(
                "session {session} refused the handover: {message}"
            )));
        }
        other => {
            return Err(VerbError::Refuse(format!(
                "session {session} answered the confirm with '{}'; 'chock log {session}' \
                 shows how it stands",
                other.to_line().trim_end()
            )));
        }
    }
    let path = adopt_child(shared, project, session).await?;
    conn.send(&Reply::Started {
        session: session.to_owned(),
        log: path.to_string_lossy().into_owned(),
    })
    .await
}
