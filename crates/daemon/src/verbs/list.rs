//! `list <project directory>`: one line per session of the project,
//! `<started at>\t<row as JSON>`, newest first.

use chock_control::Reply;
use chock_log::SessionRow;

use super::{Conn, Shared, VerbError, project_dir, with_daemon_facts};

pub(crate) async fn list(shared: &Shared, project: &str, conn: &mut Conn) -> Result<(), VerbError> {
    let dir = project_dir(project)?;
    let listed = chock_log::list_sessions_with(shared.store.state(), Some(&dir), |path| {
        shared.store.fold(path)
    });
    // One unreadable log must not hide every other session.
    for (path, why) in &listed.skipped {
        tracing::warn!(path = %path.display(), %why, "list skipped an entry");
    }
    for (id, state) in listed.sessions {
        let path = shared.store.log_path(&id);
        let row = with_daemon_facts(shared, &id, &path, SessionRow::from_state(&id, &state));
        conn.queue(&Reply::Row {
            started_at: row.started_at(),
            row: row.json(),
        })
        .await?;
    }
    conn.flush().await
}
