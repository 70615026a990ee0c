//! `stop`: the stop `chock stop --project <dir> --reason <reason>` makes,
//! for the project's repository, written by the daemon for a person in a
//! browser. The stop files and the decision log are the same ones the
//! binary writes (chock_gate's `stop_repo`), with the person the browser
//! names recorded as who stopped it. Every running session of the
//! repository sees it at its next tool call; lifting it stays a person's
//! at a terminal (`chock resume`).

use chock_control::Reply;

use super::{Conn, Shared, VerbError, project_dir};

pub(crate) async fn stop(
    shared: &Shared,
    project: &str,
    who: &str,
    reason: &str,
    conn: &mut Conn,
) -> Result<(), VerbError> {
    let dir = project_dir(project)?;
    let paths = chock_gate::StopPaths::from_env()
        .map_err(|err| VerbError::Refuse(format!("cannot locate the stop registry: {err}")))?;
    let env = chock_gate::ops::Env {
        paths,
        log: Some(shared.store.state().decisions_log()),
    };
    let report = chock_gate::ops::stop_repo_by(&env, &dir, reason, None, Some(who))
        .map_err(|err| VerbError::Refuse(format!("could not stop agents: {err}")))?;
    if let Some(warning) = &report.warning {
        tracing::warn!(%warning, "stop");
    }
    let repo = report.stop.repo.clone().unwrap_or_default();
    tracing::info!(%repo, %who, "stopped every agent in the repository");
    conn.send(&Reply::Stopped(format!(
        "stopped every agent in {repo}: {}",
        report.stop.reason
    )))
    .await
}
