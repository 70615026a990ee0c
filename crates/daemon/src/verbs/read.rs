//! `read <session id> <last event id>`: the events after the id, then the
//! connection closes. The log goes out a page at a time, each page read
//! once the one before is written, so a client that reads slowly (or not
//! at all) holds one page of the daemon's memory, not the whole log.

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
    let mut last = after;
    loop {
        let page = store::read_page(&path, last).map_err(|err| {
            VerbError::Refuse(format!("cannot read the log of session {session}: {err}"))
        })?;
        let Some(newest) = page.last() else {
            break;
        };
        last = newest.head.id.0;
        for event in page {
            conn.queue(&Reply::Event(event.line)).await?;
        }
    }
    conn.flush().await
}
