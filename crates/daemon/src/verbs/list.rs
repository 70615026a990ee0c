//! `list <project directory>`: one line per session of the project,
//! `<started at>\t<row as JSON>`, newest first.

use chock_control::Reply;
use chock_log::LazyLocks;

use super::{Conn, Shared, VerbError, project_dir, with_daemon_facts};

pub(crate) async fn list(shared: &Shared, project: &str, conn: &mut Conn) -> Result<(), VerbError> {
    let dir = project_dir(project)?;
    // The state directory's index folds only the logs that changed, with
    // the row fold (docs/log.md, "The index").
    let listed = chock_log::list_sessions(shared.store.state(), Some(&dir));
    // One unreadable log must not hide every other session.
    for (path, why) in &listed.skipped {
        tracing::warn!(path = %path.display(), %why, "list skipped an entry");
    }
    let mut locks = LazyLocks::default();
    for listed in listed.sessions {
        let path = shared.store.log_path(&listed.id);
        let id = listed.id.clone();
        let row = with_daemon_facts(shared, &id, &path, listed.into_row(&mut locks));
        conn.queue(&Reply::Row {
            started_at: row.started_at(),
            row: row.json(),
        })
        .await?;
    }
    conn.flush().await
}
