//! The verbs, one file each, behind one exhaustive `dispatch`. Each handler
//! writes its reply lines and returns; a refusal becomes the connection's
//! one `error` line.

mod answer;
mod list;
mod read;
mod spawn;
mod watch;

use std::path::{Path, PathBuf};

use chock_control::{LineReader, Reply, Request};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};

use crate::Shared;
use crate::store::{self, Row};

pub(crate) type ReadHalf = Box<dyn AsyncRead + Send + Unpin>;
pub(crate) type WriteHalf = Box<dyn AsyncWrite + Send + Unpin>;

/// A greeted connection: its remaining input and its buffered output.
pub(crate) struct Conn {
    pub(crate) lines: LineReader<BufReader<ReadHalf>>,
    pub(crate) out: BufWriter<WriteHalf>,
}

impl Conn {
    /// Writes one reply line and flushes it.
    pub(crate) async fn send(&mut self, reply: &Reply) -> Result<(), VerbError> {
        self.out
            .write_all(reply.to_line().as_bytes())
            .await
            .map_err(|_| VerbError::Gone)?;
        self.out.flush().await.map_err(|_| VerbError::Gone)
    }

    /// Writes a reply line without flushing, for a batch of lines.
    pub(crate) async fn queue(&mut self, reply: &Reply) -> Result<(), VerbError> {
        self.out
            .write_all(reply.to_line().as_bytes())
            .await
            .map_err(|_| VerbError::Gone)
    }

    pub(crate) async fn flush(&mut self) -> Result<(), VerbError> {
        self.out.flush().await.map_err(|_| VerbError::Gone)
    }
}

#[derive(Debug)]
pub(crate) enum VerbError {
    /// Refused: the message goes back as `error <message>`.
    Refuse(String),
    /// The client went away; there is nobody to tell.
    Gone,
}

impl From<String> for VerbError {
    fn from(message: String) -> VerbError {
        VerbError::Refuse(message)
    }
}

pub(crate) async fn dispatch(
    shared: &Shared,
    request: Request,
    conn: &mut Conn,
) -> Result<(), VerbError> {
    match request {
        Request::Hello { .. } => Err(VerbError::Refuse(
            "this connection already greeted: send one verb".to_owned(),
        )),
        Request::Start { project, message } => spawn::start(shared, &project, &message, conn).await,
        Request::Adopt { project, session } => spawn::adopt(shared, &project, &session, conn).await,
        Request::Read { session, after } => read::read(shared, &session, after, conn).await,
        Request::List { project } => list::list(shared, &project, conn).await,
        Request::Watch {
            project,
            session,
            after,
        } => watch::watch(shared, &project, &session, after, conn).await,
        Request::Answer {
            project,
            session,
            request,
            answer,
        } => answer::answer(shared, &project, &session, &request, answer, conn).await,
    }
}

/// The project directory a person typed, as this machine resolves it.
pub(crate) fn project_dir(project: &str) -> Result<PathBuf, VerbError> {
    let path = Path::new(project);
    if !path.is_absolute() {
        return Err(VerbError::Refuse(format!(
            "project directory '{}' is not an absolute path: send the full path",
            chock_control::sanitize(project)
        )));
    }
    match path.canonicalize() {
        Ok(dir) if dir.is_dir() => Ok(dir),
        Ok(_) => Err(VerbError::Refuse(format!(
            "{project} is not a directory: name the project's directory"
        ))),
        Err(err) => Err(VerbError::Refuse(format!(
            "no project directory {project} on the daemon's machine ({err}): check the path"
        ))),
    }
}

/// A session's log, checked to exist; the id is checked before it names a path.
pub(crate) fn session_log(shared: &Shared, session: &str) -> Result<PathBuf, VerbError> {
    store::check_session_id(session)?;
    let path = shared.store.log_path(session);
    if path.is_file() {
        Ok(path)
    } else {
        Err(VerbError::Refuse(format!(
            "no session {session} on this daemon's machine: 'list <project directory>' shows the sessions"
        )))
    }
}

/// A session's row: the fold of its log, plus what only the daemon knows
/// (its child, and that a session whose log has no ending and no owner has
/// crashed: its process is gone and can no longer say so).
pub(crate) fn row(shared: &Shared, session: &str, path: &Path) -> Result<Row, VerbError> {
    let events = store::read_after(path, 0).map_err(|err| {
        VerbError::Refuse(format!("cannot read the log of session {session}: {err}"))
    })?;
    let mut row = store::fold_row(session, &events);
    if row.status == "running" && store::owner(path).is_none() {
        row.status = "crashed".to_owned();
        row.reason = Some("crashed".to_owned());
        row.pending_approvals.clear();
    }
    if let Some(child) = shared.children.get(session) {
        let ended = child.ended.borrow().clone().map(|e| e.0);
        row.child = Some(store::ChildRow {
            pid: child.pid,
            ended,
        });
    }
    Ok(row)
}

/// The session's row, refused unless it belongs to `project`.
pub(crate) fn project_session(
    shared: &Shared,
    project: &str,
    session: &str,
) -> Result<(PathBuf, Row), VerbError> {
    let dir = project_dir(project)?;
    let path = session_log(shared, session)?;
    let row = row(shared, session, &path)?;
    if !store::same_project(&row.project, &dir) {
        return Err(VerbError::Refuse(format!(
            "session {session} belongs to {}, not {project}: name its own project directory",
            if row.project.is_empty() {
                "no project"
            } else {
                &row.project
            }
        )));
    }
    Ok((path, row))
}

pub(crate) fn row_json(row: &Row) -> String {
    // A struct of strings and numbers always serialises.
    serde_json::to_string(row).unwrap_or_else(|_| "{}".to_owned())
}
