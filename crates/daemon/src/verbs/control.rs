//! The verbs that act on a session for `chock serve`: `continue` carries an
//! ended session on as `chock run --continue <id> <message>` would (as the
//! daemon's own child), `interrupt` ends the current turn, `stop` makes the
//! stop `chock stop` makes for the project's repository, and `detach` hands
//! a session the daemon does not own over to it, as `chock detach` does.
//! Each is the same program a person types, run by the daemon; the daemon
//! still never writes a log.

use std::time::Duration;

use chock_control::Reply;
use chock_log::RowStatus;
use chock_log::event::EndReason;

use super::spawn::{spawn, wait_ready};
use super::{Conn, Shared, VerbError, project_dir, project_session};
use crate::store;

/// How long `stop` and `detach` may take before the daemon gives up on
/// them (a detach waits for the session's next turn boundary).
const CHILD_TIMEOUT: Duration = Duration::from_secs(330);

pub(crate) async fn carry_on(
    shared: &Shared,
    project: &str,
    session: &str,
    message: &str,
    conn: &mut Conn,
) -> Result<(), VerbError> {
    let (_, path, row) = project_session(shared, project, session)?;
    if message.trim().is_empty() {
        return Err(VerbError::Refuse(
            "the message is empty: say what the session should do next".to_owned(),
        ));
    }
    let turn = shared.children.adopting(session);
    let _turn = turn.lock().await;
    let row = &row.row;
    match (&row.status, &row.reason) {
        (RowStatus::Ended, Some(EndReason::Handover)) => {
            return Err(VerbError::Refuse(format!(
                "session {session} was handed over and waits for its next owner: 'adopt' carries it on, not a reply"
            )));
        }
        (RowStatus::Ended, _) => {}
        (RowStatus::Waiting, _) => {
            return Err(VerbError::Refuse(format!(
                "session {session} is waiting for an answer, not a reply: answer its question, or interrupt it first"
            )));
        }
        _ => {
            return Err(VerbError::Refuse(format!(
                "session {session} is running: a reply carries on a session that has ended; wait for its answer, or interrupt it first"
            )));
        }
    }
    if store::is_owned(&path) {
        let by = store::owner(&path).map_or_else(
            || "another process".to_owned(),
            |pid| format!("process {pid}"),
        );
        return Err(VerbError::Refuse(format!(
            "session {session} is held by {by}: it carries on there"
        )));
    }
    let dir = project_dir(project)?;
    let before = store::last_id(&path).unwrap_or(0);
    let args = ["run", "--continue", session, "--", message];
    let child = spawn(shared, session, &args, &dir)?;
    wait_ready(shared, session, &path, &child, Some(before)).await?;
    conn.send(&Reply::Started {
        session: session.to_owned(),
        log: path.to_string_lossy().into_owned(),
    })
    .await
}

pub(crate) async fn interrupt(
    shared: &Shared,
    project: &str,
    session: &str,
    conn: &mut Conn,
) -> Result<(), VerbError> {
    let (_, path, row) = project_session(shared, project, session)?;
    if row.ended() {
        return Err(VerbError::Refuse(format!(
            "session {session} has ended: there is no turn to interrupt; a reply carries it on"
        )));
    }
    let Some(pid) = store::owner(&path) else {
        return Err(VerbError::Refuse(format!(
            "nobody holds session {session}'s log: its process is gone, so there is no turn to interrupt"
        )));
    };
    let uid = process_uid(pid);
    if uid != Some(shared.uid) {
        return Err(VerbError::Refuse(format!(
            "session {session} runs as process {pid} of another user: interrupt it as that user"
        )));
    }
    let pid = rustix::process::Pid::from_raw(i32::try_from(pid).unwrap_or(0)).ok_or_else(|| {
        VerbError::Refuse(format!("session {session}'s process has no usable pid"))
    })?;
    rustix::process::kill_process(pid, rustix::process::Signal::INT).map_err(|err| {
        VerbError::Refuse(format!(
            "could not interrupt session {session} (process {}): {err}",
            pid.as_raw_nonzero()
        ))
    })?;
    conn.send(&Reply::Done("interrupted".to_owned())).await
}

/// The uid that owns process `pid`, from `/proc`.
fn process_uid(pid: u32) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(format!("/proc/{pid}"))
        .ok()
        .map(|meta| meta.uid())
}

pub(crate) async fn stop(
    shared: &Shared,
    project: &str,
    who: &str,
    reason: &str,
    conn: &mut Conn,
) -> Result<(), VerbError> {
    let dir = project_dir(project)?;
    let dir_text = dir.to_string_lossy().into_owned();
    let args = [
        "stop",
        "--project",
        &dir_text,
        "--reason",
        reason,
        "--via",
        who,
    ];
    let said = run_chock(shared, &args, &dir, "chock stop").await?;
    let sentence = said
        .lines()
        .find(|line| line.starts_with("stopped "))
        .unwrap_or("stopped")
        .to_owned();
    conn.send(&Reply::Done(sentence)).await
}

pub(crate) async fn detach(
    shared: &Shared,
    project: &str,
    session: &str,
    conn: &mut Conn,
) -> Result<(), VerbError> {
    let (_, path, row) = project_session(shared, project, session)?;
    if let (Some(child), Some(pid)) = (shared.children.get(session), store::owner(&path))
        && child.pid == pid
        && child.ended.borrow().is_none()
    {
        return Err(VerbError::Refuse(format!(
            "session {session} is already this daemon's: its child (process {pid}) holds it"
        )));
    }
    if row.ended() && row.row.reason != Some(EndReason::Handover) {
        return Err(VerbError::Refuse(format!(
            "session {session} has ended: there is nothing to hand over; a reply carries it on in the daemon"
        )));
    }
    let Some(own) = &shared.own else {
        return Err(VerbError::Refuse(
            "this daemon has no address its child could call back: detach from the session's terminal with 'chock detach'".to_owned(),
        ));
    };
    let dir = project_dir(project)?;
    let address = own.to_string();
    let args = ["detach", session, "--daemon", &address];
    run_chock(shared, &args, &dir, "chock detach").await?;
    conn.send(&Reply::Started {
        session: session.to_owned(),
        log: path.to_string_lossy().into_owned(),
    })
    .await
}

/// Runs `chock <args>` in `dir` with the daemon's state directory and
/// waits for it: its stdout, or its last stderr line as the refusal.
async fn run_chock(
    shared: &Shared,
    args: &[&str],
    dir: &std::path::Path,
    what: &str,
) -> Result<String, VerbError> {
    let mut command = tokio::process::Command::new(&shared.chock_exe);
    command
        .args(args)
        .current_dir(dir)
        .env("CHOCK_STATE_DIR", shared.store.state().root())
        .env_remove("LISTEN_FDS")
        .env_remove("LISTEN_PID")
        .env_remove("NOTIFY_SOCKET")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    let out = tokio::time::timeout(CHILD_TIMEOUT, command.output())
        .await
        .map_err(|_| {
            VerbError::Refuse(format!(
                "{what} did not finish within {} s",
                CHILD_TIMEOUT.as_secs()
            ))
        })?
        .map_err(|err| {
            VerbError::Refuse(format!(
                "cannot start '{what}': {err}; check the chock installation on the daemon's machine"
            ))
        })?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let cause = stderr
        .lines()
        .rev()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .map(|line| line.strip_prefix("chock: ").unwrap_or(line))
        .map(|line| line.strip_prefix("error: ").unwrap_or(line))
        .map_or_else(
            || format!("{what} failed ({})", out.status),
            chock_control::sanitize,
        );
    Err(VerbError::Refuse(cause))
}
