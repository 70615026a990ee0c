//! `discard <project directory>\t<session id>`: removes the session's
//! workspace as `chock workspace discard <id>` does (refused while the
//! session runs), then `ok removed the workspace <directory>`.

use chock_control::Reply;
use chock_runner::workspace;

use super::workspace::{blocking, entry};
use super::{Conn, Shared, VerbError};

pub(crate) async fn discard(
    shared: &Shared,
    project: &str,
    session: &str,
    conn: &mut Conn,
) -> Result<(), VerbError> {
    let entry = entry(shared, project, session, Some("discard"))?;
    let sentence = blocking(shared, move |state| {
        workspace::discard(state, &entry)
            .map(|done| done.sentence())
            .map_err(|err| err.to_string())
    })
    .await?;
    conn.send(&Reply::Done(sentence)).await
}
