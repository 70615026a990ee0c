//! `list <project directory>`: one line per session of the project,
//! `<started at>\t<row as JSON>`, newest first.

use std::path::Path;

use chock_log::LazyLocks;

use super::{Conn, Row, Shared, VerbError, project_dir, with_daemon_facts};

pub(crate) async fn list(shared: &Shared, project: &str, conn: &mut Conn) -> Result<(), VerbError> {
    let dir = project_dir(project)?;
    send_rows(shared, Some(&dir), conn).await
}

/// Every row of `project` (of every project with `None`), newest first,
/// queued and flushed: `list`, `all` and the start of `rows` alike.
pub(crate) async fn send_rows(
    shared: &Shared,
    project: Option<&Path>,
    conn: &mut Conn,
) -> Result<(), VerbError> {
    // Every line written into one buffer, as `Reply::Row` formats it: a
    // started-at has no line break and the row's JSON escapes every one.
    let rows = rows(shared, project);
    let mut text = Vec::with_capacity(rows.len() * 512);
    for row in &rows {
        text.extend_from_slice(row.started_at().as_bytes());
        text.push(b'\t');
        row.write_json(&mut text);
        text.push(b'\n');
    }
    conn.queue_text(&text).await?;
    conn.flush().await
}

fn rows(shared: &Shared, project: Option<&Path>) -> Vec<Row> {
    // The state directory's index folds only the logs that changed, with
    // the row fold (docs/log.md, "The index").
    // Every row's owner is looked up: read /proc/locks while listing.
    let mut locks = LazyLocks::ahead();
    let listed = chock_log::list_sessions(shared.store.state(), project);
    // One unreadable log must not hide every other session.
    for (path, why) in &listed.skipped {
        tracing::warn!(path = %path.display(), %why, "list skipped an entry");
    }
    listed
        .sessions
        .into_iter()
        .map(|listed| {
            let path = shared.store.log_path(&listed.id);
            let id = listed.id.clone();
            with_daemon_facts(shared, &id, &path, listed.into_row(&mut locks))
        })
        .collect()
}
