//! `chock approve`'s library half: find a session's open question in its
//! log (the question is the `approval.request` event, which every client
//! already reads, so the socket exchange needs no verb of its own), and
//! deliver one answer over the session's `approve.sock`. The binary only
//! shows the question and reads y/n.

use std::path::PathBuf;

use chock_control::Answer;
use chock_control::approve::ApproveError;
use chock_log::fold::{PendingApproval, Status};
use chock_log::{FindError, ReadError, SessionId, StateDir, fold_log};

/// A session's open question and where to answer it.
#[derive(Debug, Clone)]
pub struct Pending {
    pub session: SessionId,
    pub socket: PathBuf,
    pub request: PendingApproval,
}

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error(transparent)]
    Find(#[from] FindError),
    #[error(transparent)]
    Read(#[from] ReadError),
    #[error("session {session} has ended ({reason}): there is nothing to approve")]
    Ended { session: String, reason: String },
    #[error(
        "session {session} has no approval pending: it is not waiting for anyone; \
         'chock log {session}' shows what it is doing"
    )]
    NothingPending { session: String },
    #[error(transparent)]
    Deliver(#[from] ApproveError),
    #[error("cannot start a runtime to deliver the answer: {0}")]
    Runtime(std::io::Error),
}

/// The oldest open approval of the session named `text`.
pub fn pending(state: &StateDir, text: &str) -> Result<Pending, ClientError> {
    let (session, log) = state.find_session(text)?;
    let folded = fold_log(&log)?;
    if let Status::Ended { reason, .. } = &folded.state.status {
        return Err(ClientError::Ended {
            session: session.as_str().to_owned(),
            reason: reason.as_str().to_owned(),
        });
    }
    let request = folded
        .state
        .pending_approvals
        .first()
        .cloned()
        .ok_or_else(|| ClientError::NothingPending {
            session: session.as_str().to_owned(),
        })?;
    Ok(Pending {
        socket: state.approve_socket(&session),
        session,
        request,
    })
}

/// Delivers a typed answer to `pending`'s question (ask_user); `Ok` only
/// when the session said it took it.
pub fn deliver_text(pending: &Pending, text: &str) -> Result<(), ClientError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ClientError::Runtime)?;
    runtime.block_on(chock_control::approve::reply(
        &pending.socket,
        &pending.request.request_id,
        text,
    ))?;
    Ok(())
}

/// Delivers `answer` to `pending`'s session; `Ok` only when the session
/// said it took it.
pub fn deliver(pending: &Pending, answer: Answer) -> Result<(), ClientError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ClientError::Runtime)?;
    runtime.block_on(chock_control::approve::answer(
        &pending.socket,
        &pending.request.request_id,
        answer,
    ))?;
    Ok(())
}
