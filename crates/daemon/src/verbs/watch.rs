//! `watch <project directory>\t<session id>\t<last event id>`: the header
//! line `ok <session id>\t<row as JSON>`, then every event after the id, and
//! every event the session appends after that, until the session ends.
//!
//! Each pass subscribes to the session's feed first and reads the log
//! second, so an append lands in one or the other; ids already sent are
//! skipped, so nothing repeats. A watcher that falls behind the feed reads
//! the log again from its last id.
//!
//! A `handover` ending is not the end of the session: the daemon's child
//! takes the log over and appends a new `session.open`. After one, the
//! watch waits up to the configured grace (10 s by default) for a new owner
//! before it ends.

use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use chock_control::Reply;
use tokio::sync::broadcast::error::RecvError;

use super::{Conn, Shared, VerbError, project_session};
use crate::store::{self, LogEvent};

pub(crate) async fn watch(
    shared: &Shared,
    project: &str,
    session: &str,
    after: u64,
    conn: &mut Conn,
) -> Result<(), VerbError> {
    let (_, path, row) = project_session(shared, project, session)?;
    conn.send(&Reply::WatchHeader {
        session: session.to_owned(),
        row: row.json(),
    })
    .await?;
    let mut state = State {
        last: after,
        handover: false,
    };
    loop {
        let mut feed = shared.feeds.subscribe(session, &path);
        if catch_up(&path, &mut state, conn).await? {
            return Ok(());
        }
        if !store::is_owned(&path)
            && !awaits_new_owner(&path, &state, shared.handover_grace, conn).await?
        {
            // A log nobody holds, and nobody is taking over, will not grow;
            // but its owner may have written its last events between the
            // read above and letting go, so read it once more.
            catch_up(&path, &mut state, conn).await?;
            return Ok(());
        }
        loop {
            let received = tokio::select! {
                received = feed.recv() => received,
                // Anything from the client now, or its going away, ends the
                // watch: the request was its only line.
                () = conn.client_spoke() => return Err(VerbError::Gone),
            };
            match received {
                Ok(event) => {
                    if event.head.id.0 <= state.last {
                        continue;
                    }
                    if send(&event, &mut state, conn).await? {
                        return Ok(());
                    }
                    // Drain what is already queued before flushing once.
                    while let Ok(event) = feed.try_recv() {
                        if event.head.id.0 > state.last && send(&event, &mut state, conn).await? {
                            return Ok(());
                        }
                    }
                    conn.flush().await?;
                }
                // Fell behind, or the feed stopped (an ending, or an unowned
                // log): read the log again and follow afresh if it still lives.
                Err(RecvError::Lagged(_) | RecvError::Closed) => break,
            }
        }
    }
}

struct State {
    last: u64,
    /// The newest event sent is a `handover` ending.
    handover: bool,
}

/// After a recent handover ending, waits for a new owner; true when one
/// came (or the log grew), false when the session is over.
async fn awaits_new_owner(
    path: &Path,
    state: &State,
    grace: Duration,
    conn: &mut Conn,
) -> Result<bool, VerbError> {
    let recent = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|at| SystemTime::now().duration_since(at).ok())
        .is_some_and(|age| age < grace);
    if !state.handover || !recent {
        return Ok(false);
    }
    let deadline = Instant::now() + grace;
    let len = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    while Instant::now() < deadline {
        let grew = std::fs::metadata(path).is_ok_and(|m| m.len() > len);
        if grew || store::is_owned(path) {
            return Ok(true);
        }
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(50)) => {}
            () = conn.client_spoke() => return Err(VerbError::Gone),
        }
    }
    Ok(false)
}

/// Sends every event in the log after the last one sent, a page at a
/// time; true when the session ended.
async fn catch_up(path: &Path, state: &mut State, conn: &mut Conn) -> Result<bool, VerbError> {
    loop {
        let page = store::read_page(path, state.last)
            .map_err(|err| VerbError::Refuse(format!("cannot read the session's log: {err}")))?;
        if page.is_empty() {
            break;
        }
        for event in &page {
            if send(event, state, conn).await? {
                return Ok(true);
            }
        }
    }
    conn.flush().await?;
    Ok(false)
}

/// Queues one event; true when it was the session's final ending (flushed then).
async fn send(event: &LogEvent, state: &mut State, conn: &mut Conn) -> Result<bool, VerbError> {
    conn.queue(&Reply::Event(event.line.clone())).await?;
    state.last = event.head.id.0;
    state.handover = event.head.is_handover();
    if event.head.ends_session() {
        conn.flush().await?;
        return Ok(true);
    }
    Ok(false)
}
