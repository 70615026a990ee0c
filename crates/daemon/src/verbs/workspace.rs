//! What `diff`, `apply` and `discard` share: the session checked to be the
//! project's, its workspace found by the same library code `chock
//! workspace` uses, and the git work run off the async threads.

use chock_log::StateDir;
use chock_runner::workspace::{self, Entry};

use super::{Shared, VerbError, project_session};
use crate::store;

/// The session's workspace entry, refused for another project's session
/// or a session with no workspace; with `running_refused`, refused too
/// while a process holds the session's log.
pub(crate) fn entry(
    shared: &Shared,
    project: &str,
    session: &str,
    running_refused: Option<&str>,
) -> Result<Entry, VerbError> {
    let (id, path, row) = project_session(shared, project, session)?;
    if let Some(verb) = running_refused
        && store::is_owned(&path)
    {
        return Err(VerbError::Refuse(format!(
            "session {session} is running: end it first (or wait for it to end), then {verb}"
        )));
    }
    match workspace::find(shared.store.state(), id.as_str()) {
        Ok(entry) => Ok(entry),
        Err(_) if row.row.workspace.is_none() => Err(VerbError::Refuse(format!(
            "session {session} has no workspace: it ran without one, so there is nothing to diff, apply or discard"
        ))),
        Err(err) => Err(VerbError::Refuse(err.to_string())),
    }
}

/// Runs `work` on a blocking thread with its own copy of the state
/// directory's handle.
pub(crate) async fn blocking<T: Send + 'static>(
    shared: &Shared,
    work: impl FnOnce(&StateDir) -> Result<T, String> + Send + 'static,
) -> Result<T, VerbError> {
    let state = shared.store.state().clone();
    match tokio::task::spawn_blocking(move || work(&state)).await {
        Ok(result) => result.map_err(VerbError::Refuse),
        Err(err) => Err(VerbError::Refuse(format!(
            "the workspace work stopped before it finished ({err}); check the daemon's log"
        ))),
    }
}

/// Brings back what a session that is not running left in its sandbox's
/// git directory, as `chock workspace` does first; what it said is logged.
pub(crate) fn caught_up(state: &StateDir, entry: &Entry) {
    match workspace::catch_up(state, entry) {
        Ok((_, said)) => {
            for sentence in said {
                tracing::info!(session_id = %entry.session.as_str(), %sentence, "workspace");
            }
        }
        Err(err) => tracing::warn!(session_id = %entry.session.as_str(), %err, "workspace"),
    }
}
