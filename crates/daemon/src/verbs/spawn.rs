//! `start` and `adopt`: each runs one child `chock run`, the same program a
//! person types, and replies `ok <session id>\t<log path>` once the child
//! holds the session's log, or an error when the child exits first.
//!
//! The child of `start` is told its session id with the hidden
//! `--session-id` flag, so the daemon knows where the log will appear
//! without reading anything the child prints. The daemon never writes the
//! log itself.

use std::path::Path;
use std::time::{Duration, Instant};

use chock_control::Reply;
use chock_log::SessionId;

use super::{Conn, Shared, VerbError, project_dir, project_session};
use crate::children::ChildInfo;
use crate::store;

/// How often the wait for a child's log looks again.
const READY_POLL: Duration = Duration::from_millis(10);

pub(crate) async fn start(
    shared: &Shared,
    project: &str,
    message: &str,
    conn: &mut Conn,
) -> Result<(), VerbError> {
    let dir = project_dir(project)?;
    let id = SessionId::new();
    let session = id.as_str();
    let dir_text = dir.to_string_lossy().into_owned();
    let args = ["run", "--session-id", session, "--", &dir_text, message];
    let child = spawn(shared, session, &args, &dir)?;
    let path = shared.store.log_path(&id);
    wait_ready(shared, session, &path, &child, None).await?;
    conn.send(&Reply::Started {
        session: session.to_owned(),
        log: path.to_string_lossy().into_owned(),
    })
    .await
}

pub(crate) async fn adopt(
    shared: &Shared,
    project: &str,
    session: &str,
    conn: &mut Conn,
) -> Result<(), VerbError> {
    let path = adopt_child(shared, project, session).await?;
    conn.send(&Reply::Started {
        session: session.to_owned(),
        log: path.to_string_lossy().into_owned(),
    })
    .await
}

/// Runs the daemon's own `chock run --adopt` for a session whose log ends
/// with a handover and returns its log once the child holds it (at once
/// when the daemon's child already does).
pub(super) async fn adopt_child(
    shared: &Shared,
    project: &str,
    session: &str,
) -> Result<std::path::PathBuf, VerbError> {
    let (_, path, _) = project_session(shared, project, session)?;
    // One adopt of a session at a time: a second waits for the first, and
    // then finds the daemon's own child holding the log.
    let turn = shared.children.adopting(session);
    let _turn = turn.lock().await;
    if store::is_owned(&path) {
        let by = store::owner(&path);
        if let (Some(pid), Some(child)) = (by, shared.children.get(session))
            && child.pid == pid
            && child.ended.borrow().is_none()
        {
            // Already the daemon's: its own child holds the lock.
            return Ok(path);
        }
        let by = by.map_or_else(
            || "another process".to_owned(),
            |pid| format!("process {pid}"),
        );
        return Err(VerbError::Refuse(format!(
            "session {session} is still owned by {by}: hand it over with 'chock detach {session}'"
        )));
    }
    // Only a log that ends with a handover waits for an adopt; one that
    // another process carried on since (and perhaps finished) does not.
    let folded = shared.store.fold(&path).map_err(|err| {
        VerbError::Refuse(format!("cannot read the log of session {session}: {err}"))
    })?;
    let handed = matches!(
        &folded.state.status,
        chock_log::Status::Ended {
            reason: chock_log::event::EndReason::Handover,
            ..
        }
    );
    if !handed {
        let by = folded.state.owner_pid.map_or_else(String::new, |pid| {
            format!(" (the last process to open it was {pid})")
        });
        return Err(VerbError::Refuse(format!(
            "session {session} is not waiting to be adopted: its log does not end with a \
             handover{by}; 'chock log {session}' shows how it stands"
        )));
    }
    let dir = project_dir(project)?;
    // Read before the child can append its own `session.open`.
    let before = store::last_id(&path).unwrap_or(0);
    let args = ["run", "--adopt", session];
    let child = spawn(shared, session, &args, &dir)?;
    wait_ready(shared, session, &path, &child, Some(before)).await?;
    Ok(path)
}

pub(super) fn spawn(
    shared: &Shared,
    session: &str,
    args: &[&str],
    dir: &Path,
) -> Result<ChildInfo, VerbError> {
    shared
        .children
        .spawn(
            session,
            &shared.chock_exe,
            args,
            dir,
            shared.store.state().root(),
        )
        .map_err(|err| {
            VerbError::Refuse(format!(
                "cannot start 'chock run' for session {session}: {err}; \
                 check the chock installation on the daemon's machine"
            ))
        })
}

/// Waits until, for `start`, the log has its first complete event, or, for
/// `adopt`, the child itself holds the log: `/proc/locks` names it, or the
/// log's new `session.open` carries its pid. A log that grew by someone
/// else's hand is not the child's: another process (a person's `chock run
/// --continue`) took the session first, and that is what the reply says.
pub(super) async fn wait_ready(
    shared: &Shared,
    session: &str,
    path: &Path,
    child: &ChildInfo,
    adopted_after: Option<u64>,
) -> Result<(), VerbError> {
    let deadline = Instant::now() + shared.start_timeout;
    let mut ended = child.ended.clone();
    loop {
        let taker = adopted_after.and_then(|after| opened_by(path, after));
        let ready = match adopted_after {
            // A fresh log is a started session once its first event (the
            // session.open naming the project) is complete: holding the
            // lock comes earlier, and a watch or answer arriving between
            // the two would find a session of no project.
            None => store::last_id(path).is_ok_and(|last| last > 0),
            Some(_) => store::owner(path) == Some(child.pid) || taker == Some(child.pid),
        };
        if ready {
            return Ok(());
        }
        let other = taker
            .filter(|pid| *pid != child.pid)
            .or_else(|| store::owner(path).filter(|pid| *pid != child.pid));
        if let (Some(_), Some(pid)) = (adopted_after, other) {
            return Err(VerbError::Refuse(format!(
                "session {session} was taken by process {pid} before this daemon's child \
                 could hold it: it carries on in that process, not in the daemon; \
                 follow it with 'chock log -f {session}'"
            )));
        }
        if let Some(ending) = ended.borrow_and_update().clone() {
            let cause = child.cause().unwrap_or_else(|| {
                "it said nothing on stderr; run it by hand in the project to see why".to_owned()
            });
            return Err(VerbError::Refuse(format!(
                "chock run for session {session} ended ({}) before it held the session's log: \
                 {cause}",
                ending.0
            )));
        }
        if Instant::now() >= deadline {
            return Err(VerbError::Refuse(format!(
                "chock run for session {session} did not take the session's log within {} s; \
                 it is still running as process {}",
                shared.start_timeout.as_secs(),
                child.pid
            )));
        }
        tokio::select! {
            _ = ended.changed() => {}
            () = tokio::time::sleep(READY_POLL) => {}
        }
    }
}

/// The pid in the first `session.open` after event `after`: the process
/// that took the log over.
fn opened_by(path: &Path, after: u64) -> Option<u32> {
    let page = store::read_page(path, after).ok()?;
    page.iter()
        .find(|event| event.head.kind == "session.open")
        .and_then(|event| {
            let value: serde_json::Value = serde_json::from_str(&event.line).ok()?;
            u32::try_from(value.get("pid")?.as_u64()?).ok()
        })
}
