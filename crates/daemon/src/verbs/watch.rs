//! `watch <project directory>\t<session id>\t<last event id>`: the header
//! line `ok <session id>\t<row as JSON>`, then every event after the id, and
//! every event the session appends after that, until the session ends.
//!
//! Each pass subscribes to the session's feed first and reads the log
//! second, so an append lands in one or the other; ids already sent are
//! skipped, so nothing repeats. A watcher that falls behind the feed reads
//! the log again from its last id.

use chock_control::Reply;
use tokio::sync::broadcast::error::RecvError;

use super::{Conn, Shared, VerbError, project_session, row_json};
use crate::store::{self, LogEvent};

pub(crate) async fn watch(
    shared: &Shared,
    project: &str,
    session: &str,
    after: u64,
    conn: &mut Conn,
) -> Result<(), VerbError> {
    let (path, row) = project_session(shared, project, session)?;
    conn.send(&Reply::WatchHeader {
        session: session.to_owned(),
        row: row_json(&row),
    })
    .await?;
    let mut last = after;
    let mut first = true;
    loop {
        let mut feed = shared.feeds.subscribe(session, &path);
        if catch_up(&path, &mut last, conn).await? {
            return Ok(());
        }
        // A log nobody holds will not grow: its process is gone.
        if first && store::owner(&path).is_none() {
            return Ok(());
        }
        first = false;
        loop {
            let received = tokio::select! {
                received = feed.recv() => received,
                // Anything from the client now, or its going away, ends the
                // watch: the request was its only line.
                _ = conn.lines.next_line() => return Err(VerbError::Gone),
            };
            match received {
                Ok(event) => {
                    if event.id <= last {
                        continue;
                    }
                    if send(&event, &mut last, conn).await? {
                        return Ok(());
                    }
                    // Drain what is already queued before flushing once.
                    while let Ok(event) = feed.try_recv() {
                        if event.id > last && send(&event, &mut last, conn).await? {
                            return Ok(());
                        }
                    }
                    conn.flush().await?;
                }
                Err(RecvError::Lagged(_)) => break,
                Err(RecvError::Closed) => {
                    // The feed saw the end, or an unowned log. Read what is
                    // left; if the session is still owned, follow it again.
                    if catch_up(&path, &mut last, conn).await? || store::owner(&path).is_none() {
                        return Ok(());
                    }
                    break;
                }
            }
        }
    }
}

/// Sends every event in the log after `last`; true when the session ended.
async fn catch_up(
    path: &std::path::Path,
    last: &mut u64,
    conn: &mut Conn,
) -> Result<bool, VerbError> {
    let events = store::read_after(path, *last)
        .map_err(|err| VerbError::Refuse(format!("cannot read the session's log: {err}")))?;
    for event in &events {
        if send(event, last, conn).await? {
            return Ok(true);
        }
    }
    conn.flush().await?;
    Ok(false)
}

/// Queues one event; true when it was the session's ending (flushed then).
async fn send(event: &LogEvent, last: &mut u64, conn: &mut Conn) -> Result<bool, VerbError> {
    conn.queue(&Reply::Event(event.line.clone())).await?;
    *last = event.id;
    if event.is_end() {
        conn.flush().await?;
        return Ok(true);
    }
    Ok(false)
}
