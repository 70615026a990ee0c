//! `answer <project directory>\t<session id>\t<request id>\t<yes|no>` and
//! `reply <project directory>\t<session id>\t<request id>\t<text>`: hand the
//! answer to the session's own approval socket. The daemon cannot write the
//! log, so `ok answered` is sent only when that socket took it; a connect
//! that failed is an error, never an answer. Which verb a request takes is
//! the session's to check (a question takes only a reply, an approval only a
//! yes or a no), so the daemon passes either on as it came.

use chock_control::approve::ApproveError;
use chock_control::{Answer, Reply};

use super::{Conn, Shared, VerbError, project_session};

/// What the client sent: a yes or a no, or a line of text.
pub(crate) enum Delivery<'a> {
    Answer(Answer),
    Reply(&'a str),
}

pub(crate) async fn deliver(
    shared: &Shared,
    project: &str,
    session: &str,
    request: &str,
    delivery: Delivery<'_>,
    conn: &mut Conn,
) -> Result<(), VerbError> {
    let (id, _, row) = project_session(shared, project, session)?;
    if row.ended() {
        let how = if row.row.reason == Some(chock_log::event::EndReason::Crashed) {
            "crashed"
        } else {
            "ended"
        };
        return Err(VerbError::Refuse(format!(
            "session {session} has {how}: there is nobody to answer"
        )));
    }
    let socket = shared.store.approve_socket(&id);
    let undelivered = |err| VerbError::Refuse(undelivered(session, &err));
    match delivery {
        Delivery::Answer(answer) => {
            chock_control::approve::answer(&socket, request, answer)
                .await
                .map_err(undelivered)?;
            tracing::info!(session_id = %session, request, %answer, "answer delivered");
        }
        Delivery::Reply(text) => {
            chock_control::approve::reply(&socket, request, text)
                .await
                .map_err(undelivered)?;
            // The text is the person's and stays out of the daemon's log.
            tracing::info!(session_id = %session, request, "reply delivered");
        }
    }
    conn.send(&Reply::Answered).await
}

/// The failure as the client should read it: what happened to the answer,
/// without the socket's path, which means nothing on another machine.
fn undelivered(session: &str, err: &ApproveError) -> String {
    match err {
        ApproveError::Connect { error: source, .. } => format!(
            "the answer was not delivered: session {session} is not taking answers ({source}); \
             it has ended or runs elsewhere"
        ),
        ApproveError::Io { error: source, .. } => {
            format!(
                "the answer was not delivered: the connection to session {session} failed ({source})"
            )
        }
        ApproveError::NoReply { .. } => format!(
            "the answer may not have been delivered: session {session} closed without saying; \
             check its log for approval.answer"
        ),
        ApproveError::Refused(message) => {
            format!("session {session} did not take the answer: {message}")
        }
        ApproveError::Garbled { detail, .. } => {
            format!(
                "session {session} replied with something this daemon does not understand: {detail}"
            )
        }
        ApproveError::BadRequestId(id) => format!("'{id}' is not a request id"),
    }
}
