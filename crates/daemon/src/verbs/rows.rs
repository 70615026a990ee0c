//! `rows <project directory, or nothing>`: every row as `list` (or `all`)
//! gives them, then `ok live`, then a row each time a session's row
//! changes, until the client sends anything or closes.
//!
//! The subscription to the shared watcher (`crate::rows`) is taken before
//! the rows are read, so a change lands in one or the other, and may come
//! in both: a row is a state, so one sent twice is harmless. A client that
//! falls behind the watcher's ring is sent every row again.

use std::sync::Arc;

use chock_control::Reply;
use tokio::sync::broadcast::error::RecvError;

use super::{Conn, Shared, VerbError, list, project_dir};
use crate::rows::RowHub;
use crate::store;

pub(crate) async fn rows(
    shared: &Arc<Shared>,
    project: Option<&str>,
    conn: &mut Conn,
) -> Result<(), VerbError> {
    let dir = project.map(project_dir).transpose()?;
    let mut changes = RowHub::subscribe(shared);
    list::send_rows(shared, dir.as_deref(), conn).await?;
    conn.send(&Reply::Live).await?;
    loop {
        let received = tokio::select! {
            received = changes.recv() => received,
            () = conn.client_spoke() => return Err(VerbError::Gone),
        };
        match received {
            Ok(change) => {
                if dir
                    .as_deref()
                    .is_none_or(|dir| store::same_project(&change.project, dir))
                {
                    conn.send(&Reply::Row {
                        started_at: change.started_at.clone(),
                        row: change.row.clone(),
                    })
                    .await?;
                }
            }
            Err(RecvError::Lagged(_)) => list::send_rows(shared, dir.as_deref(), conn).await?,
            Err(RecvError::Closed) => {
                return Err(VerbError::Refuse(
                    "the daemon stopped watching the sessions: open 'rows' again".to_owned(),
                ));
            }
        }
    }
}
