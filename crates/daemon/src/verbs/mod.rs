//! The verbs, one file each, behind one exhaustive `dispatch`. Each handler
//! writes its reply lines and returns; a refusal becomes the connection's
//! one `error` line.

mod answer;
mod continue_session;
mod detach;
mod interrupt;
mod list;
pub(crate) use list::ListMemory;
mod read;
mod spawn;
mod stop;
mod watch;
// The workspace and row-feed verbs.
mod all;
mod apply;
mod diff;
mod discard;
mod rows;
mod workspace;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use chock_control::{LineReader, Reply, Request};
use chock_log::event::EndReason;
use chock_log::{RowStatus, SessionId, SessionRow};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};

use crate::{Shared, store};

pub(crate) type ReadHalf = Box<dyn AsyncRead + Send + Unpin>;
pub(crate) type WriteHalf = Box<dyn AsyncWrite + Send + Unpin>;

/// A greeted connection: its remaining input and its buffered output.
pub(crate) struct Conn {
    pub(crate) lines: LineReader<BufReader<ReadHalf>>,
    pub(crate) out: BufWriter<WriteHalf>,
    /// How long one write may wait for the client to take bytes before the
    /// client is cut: a client that reads nothing holds a page and a
    /// socket buffer, and only for this long.
    pub(crate) stall: Duration,
}

impl Conn {
    /// Writes one reply line and flushes it.
    pub(crate) async fn send(&mut self, reply: &Reply) -> Result<(), VerbError> {
        self.queue(reply).await?;
        self.flush().await
    }

    /// Writes a reply line without flushing, for a batch of lines.
    pub(crate) async fn queue(&mut self, reply: &Reply) -> Result<(), VerbError> {
        let line = reply.to_line();
        match tokio::time::timeout(self.stall, self.out.write_all(line.as_bytes())).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) => Err(VerbError::Gone),
            Err(_) => Err(VerbError::Stalled(self.stall)),
        }
    }

    /// Writes whole reply lines already formatted, without flushing: a
    /// listing's ten thousand rows go as one buffer, each piece of it given
    /// the stall timeout of one line.
    pub(crate) async fn queue_text(&mut self, text: &[u8]) -> Result<(), VerbError> {
        const PIECE: usize = 64 << 10;
        for piece in text.chunks(PIECE) {
            match tokio::time::timeout(self.stall, self.out.write_all(piece)).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) => return Err(VerbError::Gone),
                Err(_) => return Err(VerbError::Stalled(self.stall)),
            }
        }
        Ok(())
    }

    pub(crate) async fn flush(&mut self) -> Result<(), VerbError> {
        match tokio::time::timeout(self.stall, self.out.flush()).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) => Err(VerbError::Gone),
            Err(_) => Err(VerbError::Stalled(self.stall)),
        }
    }

    /// Completes when the client sends anything more, or closes its side:
    /// after its request it has nothing more to say, so either ends a
    /// watch. Nothing it sends is kept beyond the reader's own buffer.
    pub(crate) async fn client_spoke(&mut self) {
        use tokio::io::AsyncBufReadExt;
        let _ = self.lines.get_mut().fill_buf().await;
    }
}

#[derive(Debug)]
pub(crate) enum VerbError {
    /// Refused: the message goes back as `error <message>`.
    Refuse(String),
    /// The client went away; there is nobody to tell.
    Gone,
    /// The client took nothing for this long while replies waited.
    Stalled(Duration),
}

impl From<String> for VerbError {
    fn from(message: String) -> VerbError {
        VerbError::Refuse(message)
    }
}

pub(crate) async fn dispatch(
    shared: &Arc<Shared>,
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
        } => {
            let answer = answer::Delivery::Answer(answer);
            answer::deliver(shared, &project, &session, &request, answer, conn).await
        }
        Request::Reply {
            project,
            session,
            request,
            text,
        } => {
            let reply = answer::Delivery::Reply(&text);
            answer::deliver(shared, &project, &session, &request, reply, conn).await
        }
        Request::Diff {
            project,
            session,
            limit,
        } => diff::diff(shared, &project, &session, limit, conn).await,
        Request::Apply { project, session } => apply::apply(shared, &project, &session, conn).await,
        Request::Discard { project, session } => {
            discard::discard(shared, &project, &session, conn).await
        }
        Request::All => all::all(shared, conn).await,
        Request::Rows { project } => rows::rows(shared, project.as_deref(), conn).await,
        Request::Continue {
            project,
            session,
            message,
        } => continue_session::continue_session(shared, &project, &session, &message, conn).await,
        Request::Interrupt { project, session } => {
            interrupt::interrupt(shared, &project, &session, conn).await
        }
        Request::Stop {
            project,
            who,
            reason,
        } => stop::stop(shared, &project, &who, &reason, conn).await,
        Request::Detach { project, session } => {
            detach::detach(shared, &project, &session, conn).await
        }
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

/// A session's id and log, checked to exist; the id is checked before it
/// names a path.
pub(crate) fn session_log(
    shared: &Shared,
    session: &str,
) -> Result<(SessionId, PathBuf), VerbError> {
    let id = store::parse_session_id(session)?;
    let path = shared.store.log_path(&id);
    if path.is_file() {
        Ok((id, path))
    } else {
        Err(VerbError::Refuse(format!(
            "no session {session} on this daemon's machine: 'list <project directory>' shows the sessions"
        )))
    }
}

/// A session's row as the daemon sends it: the fold's row, plus what only
/// the daemon knows.
#[derive(Debug)]
pub(crate) struct Row {
    pub(crate) row: SessionRow,
    /// The daemon's own child for the session: its pid, and how it ended.
    child: Option<(u32, Option<String>)>,
}

impl Row {
    /// `<started at>` as `list` writes it; `-` for a log with no events.
    pub(crate) fn started_at(&self) -> String {
        self.row
            .started_at
            .map_or_else(|| "-".to_owned(), |at| at.to_string())
    }

    pub(crate) fn ended(&self) -> bool {
        self.row.status == RowStatus::Ended
    }

    /// The row as one line of JSON, with the daemon's `child` field.
    pub(crate) fn json(&self) -> String {
        let mut text = Vec::with_capacity(512);
        self.write_json(&mut text);
        // serde_json writes UTF-8.
        String::from_utf8(text).unwrap_or_else(|_| "{}".to_owned())
    }

    /// Appends the row as one line of JSON (no newline: JSON escapes every
    /// control character in a string), with the daemon's `child` field.
    pub(crate) fn write_json(&self, out: &mut Vec<u8>) {
        // Written straight from the row (a listing writes ten thousand of
        // them), `child` put last inside the row's object.
        let start = out.len();
        if serde_json::to_writer(&mut *out, &self.row).is_err() {
            out.truncate(start);
            out.extend_from_slice(b"{}");
        }
        if let Some((pid, ended)) = &self.child {
            #[derive(serde::Serialize)]
            struct Child<'a> {
                pid: u32,
                #[serde(skip_serializing_if = "Option::is_none")]
                ended: Option<&'a str>,
            }
            // A row is a JSON object: it ends in `}`, and has fields before.
            out.pop();
            out.extend_from_slice(b",\"child\":");
            let child = Child {
                pid: *pid,
                ended: ended.as_deref(),
            };
            if serde_json::to_writer(&mut *out, &child).is_err() {
                out.extend_from_slice(b"{}");
            }
            out.push(b'}');
        }
    }
}

/// A session's row: the fold of its log, whether anyone holds the log, and
/// what only the daemon knows (its child, and that a child which ended
/// without writing an ending crashed: the log cannot say so).
pub(crate) fn row(shared: &Shared, id: &SessionId, path: &Path) -> Result<Row, VerbError> {
    let row = store::fold_row(&shared.store, id, path)
        .map_err(|err| VerbError::Refuse(format!("cannot read the log of session {id}: {err}")))?;
    Ok(with_daemon_facts(shared, id, path, row))
}

/// The daemon's own child for the session: its pid, and how it ended.
fn child_facts(shared: &Shared, id: &SessionId) -> Option<(u32, Option<String>)> {
    shared.children.get(id.as_str()).as_ref().map(child_fact)
}

/// A child's pid, and how it ended.
fn child_fact(child: &crate::children::ChildInfo) -> (u32, Option<String>) {
    let ended = child.ended.borrow().clone().map(|e| e.0);
    (child.pid, ended)
}

/// Adds to a folded row what only the daemon knows.
pub(crate) fn with_daemon_facts(
    shared: &Shared,
    id: &SessionId,
    path: &Path,
    row: SessionRow,
) -> Row {
    let child = child_facts(shared, id);
    // A listing has looked up every owner with one reading of /proc/locks.
    let mut row = if row.owned.is_some() {
        row
    } else {
        row.with_owner(path)
    };
    // An ended session's sockets are looked for once per ending (its id and
    // length: a session carried on and ended again is looked at again), so
    // a listing of ten thousand ended sessions does not probe twenty
    // thousand paths every time.
    let look = row.owned == Some(false)
        && (row.status != RowStatus::Ended
            || shared.swept.lock().map_or(true, |mut swept| {
                swept.insert(format!("{id} {}", row.events))
            }));
    if look {
        // Nobody holds the log, so sockets beside it that nothing answers
        // on were left by a process killed before it removed them.
        for socket in [
            shared.store.approve_socket(id),
            shared.store.state().handover_socket(id),
        ] {
            if chock_control::owned_socket::remove_if_stale(&socket) {
                tracing::info!(path = %socket.display(), "removed a stale socket");
            }
        }
    }
    let crashed = child.as_ref().and_then(|(_, ended)| ended.clone());
    // The fold already calls an unheld log with no ending crashed; the
    // daemon knows how its own child ended, and says so.
    let no_ending = row.status != RowStatus::Ended
        || (row.reason == Some(EndReason::Crashed)
            && row.detail.as_deref() == Some(chock_log::row::CRASHED_DETAIL));
    if let Some(ending) = crashed.filter(|_| no_ending && row.owned != Some(true)) {
        row.status = RowStatus::Ended;
        row.reason = Some(EndReason::Crashed);
        row.detail = Some(format!(
            "its process ended ({ending}) without writing an ending"
        ));
        row.pending_approvals = 0;
    }
    Row { row, child }
}

/// The session's row, refused unless it belongs to `project`.
pub(crate) fn project_session(
    shared: &Shared,
    project: &str,
    session: &str,
) -> Result<(SessionId, PathBuf, Row), VerbError> {
    let dir = project_dir(project)?;
    let (id, path) = session_log(shared, session)?;
    let row = row(shared, &id, &path)?;
    if !store::same_project(&row.row.project, &dir) {
        let theirs = if row.row.project.as_os_str().is_empty() {
            "no project".to_owned()
        } else {
            row.row.project.display().to_string()
        };
        return Err(VerbError::Refuse(format!(
            "session {session} belongs to {theirs}, not {project}: name its own project directory"
        )));
    }
    Ok((id, path, row))
}
