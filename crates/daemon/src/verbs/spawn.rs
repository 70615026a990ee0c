//! `start` and `adopt`: each runs one child `chock run`, the same program a
//! person types, and replies `ok <session id>\t<log path>` once the child
//! holds the session's log, or an error when the child exits first.
//!
//! The child of `start` is told its session id with the hidden
//! `--session-id` flag, so the daemon knows where the log will appear
//! without reading anything the child prints. The daemon never writes the
//! log itself.

use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use chock_control::Reply;

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
    let session = new_session_id();
    let dir_text = dir.to_string_lossy().into_owned();
    let args = ["run", "--session-id", &session, "--", &dir_text, message];
    let child = spawn(shared, &session, &args, &dir)?;
    let path = shared.store.log_path(&session);
    wait_ready(shared, &session, &path, &child, None).await?;
    conn.send(&Reply::Started {
        session,
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
    let (path, _) = project_session(shared, project, session)?;
    if let Some(pid) = store::owner(&path) {
        return Err(VerbError::Refuse(format!(
            "session {session} is still owned by process {pid}: hand it over with 'chock detach {session}'"
        )));
    }
    let dir = project_dir(project)?;
    let args = ["run", "--adopt", session];
    let child = spawn(shared, session, &args, &dir)?;
    let before = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    wait_ready(shared, session, &path, &child, Some(before)).await?;
    conn.send(&Reply::Started {
        session: session.to_owned(),
        log: path.to_string_lossy().into_owned(),
    })
    .await
}

fn spawn(
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
            shared.store.state_dir(),
        )
        .map_err(|err| {
            VerbError::Refuse(format!(
                "cannot start 'chock run' for session {session}: {err}; \
                 check the chock installation on the daemon's machine"
            ))
        })
}

/// Waits until the child holds the log (or, for `start`, the log has its
/// first complete event), the child exits, or the time runs out.
async fn wait_ready(
    shared: &Shared,
    session: &str,
    path: &Path,
    child: &ChildInfo,
    adopted_len: Option<u64>,
) -> Result<(), VerbError> {
    let deadline = Instant::now() + shared.start_timeout;
    let mut ended = child.ended.clone();
    loop {
        let held = store::owner(path) == Some(child.pid);
        let grew = match adopted_len {
            // A fresh log with one complete event is a started session.
            None => store::read_from(path, 0).is_ok_and(|(events, _)| !events.is_empty()),
            Some(before) => std::fs::metadata(path).is_ok_and(|m| m.len() > before),
        };
        if held || grew {
            return Ok(());
        }
        if let Some(ending) = ended.borrow_and_update().clone() {
            return Err(VerbError::Refuse(format!(
                "chock run for session {session} ended ({}) before it held the session's log: \
                 run it by hand in the project to see why",
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

/// An id that sorts by creation time, in the session-id shape the log uses
/// (`20261129-192736-123-7f3a9c1e`: UTC date, time, milliseconds, then
/// random bits so two starts in one millisecond differ).
fn new_session_id() -> String {
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    let mut random = [0u8; 4];
    if let Ok(mut urandom) = std::fs::File::open("/dev/urandom") {
        use std::io::Read;
        let _ = urandom.read_exact(&mut random);
    }
    session_id_at(millis, u32::from_be_bytes(random))
}

fn session_id_at(millis: i64, random: u32) -> String {
    let secs = millis.div_euclid(1000);
    let (days, of_day) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}{month:02}{day:02}-{:02}{:02}{:02}-{:03}-{random:08x}",
        of_day / 3600,
        of_day % 3600 / 60,
        of_day % 60,
        millis.rem_euclid(1000)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_have_the_log_s_shape_and_sort_by_time() {
        // 2026-11-29T19:27:36.123Z
        assert_eq!(
            session_id_at(1_795_980_456_123, 0x7f3a_9c1e),
            "20261129-192736-123-7f3a9c1e"
        );
        assert_eq!(session_id_at(0, 1), "19700101-000000-000-00000001");
        assert_eq!(
            session_id_at(951_782_400_000, 0),
            "20000229-000000-000-00000000"
        );
        assert!(session_id_at(1_000, u32::MAX) < session_id_at(1_001, 0));
        let id = new_session_id();
        assert_eq!(id.len(), 28, "{id}");
        store::check_session_id(&id).unwrap();
    }
}
