//! `list <project directory>`: one line per session of the project,
//! `<started at>\t<row as JSON>`, oldest first.

use chock_control::Reply;

use super::{Conn, Shared, VerbError, project_dir, row, row_json};
use crate::store;

pub(crate) async fn list(shared: &Shared, project: &str, conn: &mut Conn) -> Result<(), VerbError> {
    let dir = project_dir(project)?;
    let entries = match std::fs::read_dir(shared.store.sessions_dir()) {
        Ok(entries) => entries,
        // No sessions directory yet: no sessions, which is a fine answer.
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return conn.flush().await,
        Err(err) => {
            return Err(VerbError::Refuse(format!(
                "cannot list the sessions directory: {err}"
            )));
        }
    };
    let mut rows = Vec::new();
    for entry in entries.flatten() {
        let Some(session) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        if store::check_session_id(&session).is_err() {
            continue;
        }
        let path = shared.store.log_path(&session);
        if !path.is_file() {
            continue;
        }
        // One unreadable log must not hide every other session.
        let Ok(row) = row(shared, &session, &path) else {
            continue;
        };
        if store::same_project(&row.project, &dir) {
            rows.push(row);
        }
    }
    rows.sort_by(|a, b| (&a.started_at, &a.id).cmp(&(&b.started_at, &b.id)));
    for row in rows {
        let line = row_json(&row);
        conn.queue(&Reply::Row {
            started_at: row.started_at,
            row: line,
        })
        .await?;
    }
    conn.flush().await
}
