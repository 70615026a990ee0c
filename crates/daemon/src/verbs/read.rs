//! `read <session id> <last event id>`: the events after the id, then the
//! connection closes.

use chock_control::Reply;

use super::{Conn, Shared, VerbError, session_log};
use crate::store;

pub(crate) async fn read(
    shared: &Shared,
    session: &str,
    after: u64,
    conn: &mut Conn,
) -> Result<(), VerbError> {
    let (_, path) = session_log(shared, session)?;
    let events = store::read_after(&path, after).map_err(|err| {
        VerbError::Refuse(format!("cannot read the log of session {session}: {err}"))
    })?;
    for event in events {
        conn.queue(&Reply::Event(event.line)).await?;
    }
    conn.flush().await
}
