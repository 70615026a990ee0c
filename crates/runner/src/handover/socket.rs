//! The session's end of `handover.sock`: a unix socket beside the log, mode
//! 0600, every peer's uid checked against our own, served on the session's
//! own `current_thread` runtime alongside the turn (no thread of its own:
//! the tool path forks).
//!
//! An ask is only remembered when it arrives; it is answered by the turn
//! loop at its next boundary ([`HandoverSocket::at_boundary`]), which is the
//! only place a session can stop without cutting a model call or a tool call
//! in two. The socket never writes the log: when the client confirms, the
//! session itself writes its ending (see `crate::session`).

use std::cell::{Cell, RefCell};
use std::convert::Infallible;
use std::path::{Path, PathBuf};
use std::time::Duration;

use chock_control::handover::{ASK, CONFIRM, Holdings, MAX_HANDOVER_LINE, SessionLine};
use chock_control::owned_socket::OwnedSocket;
use chock_control::{LineReader, Whose, check_peer_of, own_uid, sanitize};
use tokio::io::{AsyncWriteExt as _, BufReader};
use tokio::net::UnixStream;

/// How long a client may take to send its ask, so a stuck client cannot keep
/// another from asking.
const ASK_DEADLINE: Duration = Duration::from_secs(10);

/// How long the session waits for `confirm` after saying it is ready. The
/// client only proves the daemon in between; a client that takes longer has
/// gone, and the session carries on.
pub(crate) const CONFIRM_DEADLINE: Duration = Duration::from_secs(10);

/// How often the last boundary looks again for background work to end.
pub(crate) const LAST_BOUNDARY_POLL: Duration = Duration::from_millis(250);

#[derive(Debug, thiserror::Error)]
pub enum HandoverSocketError {
    #[error("cannot listen for handovers on {}: {error}; check that the session directory is writable", path.display())]
    Bind {
        path: PathBuf,
        error: std::io::Error,
    },
}

/// What the turn loop does after a boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Boundary {
    Continue,
    /// A client confirmed: the session ends its run with a handover.
    HandOver,
    /// After a final answer, the turn goes on with another model call:
    /// background subagents ended and the model has their answers to read.
    Resume,
}

type Conn = LineReader<BufReader<UnixStream>>;

/// A client that asked and has not been answered `ready` yet.
#[derive(Debug)]
struct Asker {
    conn: Conn,
    /// The holdings last named to it, so a count is said once.
    named: Option<Holdings>,
}

/// A client that confirmed; told `ok` once the ending is durable and the
/// lock is released.
#[derive(Debug)]
pub(crate) struct Confirmed {
    conn: Conn,
}

impl Confirmed {
    /// Tells the client the session let go; `ending` is the id of its
    /// `session.end`. A client that left already is no loss: the log says it.
    pub(crate) async fn done(mut self, ending: u64) {
        let line = SessionLine::HandedOver { ending }.to_line();
        let _ = send(&mut self.conn, &line).await;
    }
}

/// A bound `handover.sock`; the file is removed when this is dropped.
#[derive(Debug)]
pub(crate) struct HandoverSocket {
    socket: OwnedSocket,
    pending: RefCell<Option<Asker>>,
    confirmed: RefCell<Option<Confirmed>>,
    /// A boundary is talking to the asker right now.
    busy: Cell<bool>,
}

impl HandoverSocket {
    /// Binds `path` (a stale socket left by a crashed session is replaced:
    /// whoever holds the log's lock owns its sockets) and makes it 0600.
    pub(crate) fn bind(path: &Path) -> Result<Self, HandoverSocketError> {
        let socket = OwnedSocket::bind(path, "handover.sock").map_err(|source| {
            HandoverSocketError::Bind {
                path: path.to_owned(),
                error: source,
            }
        })?;
        Ok(Self {
            socket,
            pending: RefCell::new(None),
            confirmed: RefCell::new(None),
            busy: Cell::new(false),
        })
    }

    /// Whether a client is waiting for the next boundary.
    pub(crate) fn asked(&self) -> bool {
        self.pending.borrow().is_some()
    }

    /// Takes asks for as long as the session runs. Run it beside the turn
    /// (`select!`); it never returns.
    pub(crate) async fn serve(&self) -> Infallible {
        loop {
            let stream = self.socket.accept().await;
            if tokio::time::timeout(ASK_DEADLINE, self.take_ask(stream))
                .await
                .is_err()
            {
                tracing::info!("a handover.sock client sent nothing in time");
            }
        }
    }

    async fn take_ask(&self, stream: UnixStream) {
        if let Err(err) = check_peer_of(&stream, own_uid(), Whose::Session) {
            tracing::warn!(%err, "handover.sock refused a peer");
            let line = SessionLine::Error(err.to_string()).to_line();
            chock_control::owned_socket::refuse(stream, &line, MAX_HANDOVER_LINE).await;
            return;
        }
        let mut conn = LineReader::new(BufReader::new(stream), MAX_HANDOVER_LINE);
        let line = match conn.next_line().await {
            Ok(Some(line)) => line,
            Ok(None) => return,
            Err(err) => {
                let _ = send(&mut conn, &SessionLine::Error(err.to_string()).to_line()).await;
                return;
            }
        };
        let refusal = if line != ASK {
            Some(format!(
                "malformed ask: expected '{ASK}', got '{}'",
                sanitize(&line)
            ))
        } else if self.busy.get() || self.pending_alive() {
            Some(
                "another chock detach is already asking this session; wait for it to finish"
                    .to_owned(),
            )
        } else {
            None
        };
        match refusal {
            Some(message) => {
                let _ = send(&mut conn, &SessionLine::Error(message).to_line()).await;
            }
            None => {
                *self.pending.borrow_mut() = Some(Asker { conn, named: None });
            }
        }
    }

    /// Whether the remembered asker is still connected; one that went away
    /// (Ctrl-C) is forgotten, so it cannot block the next ask.
    fn pending_alive(&self) -> bool {
        let mut pending = self.pending.borrow_mut();
        let alive = pending
            .as_mut()
            .is_some_and(|asker| still_open(asker.conn.get_mut().get_ref()));
        if !alive {
            *pending = None;
        }
        alive
    }

    /// The turn loop is at a boundary. With no ask, or while `holdings`
    /// names background work (said to the asker once per change), the
    /// session carries on. Otherwise it says `ready` and waits for the
    /// confirm; a client that goes away or says anything else leaves the
    /// session carrying on, with nothing written.
    pub(crate) async fn at_boundary(
        &self,
        holdings: Holdings,
        last_event: u64,
        workspace: Option<&Path>,
    ) -> Boundary {
        let Some(mut asker) = self.pending.borrow_mut().take() else {
            return Boundary::Continue;
        };
        self.busy.set(true);
        let boundary = self
            .answer(&mut asker, holdings, last_event, workspace)
            .await;
        self.busy.set(false);
        match boundary {
            Answered::Keep => {
                *self.pending.borrow_mut() = Some(asker);
                Boundary::Continue
            }
            Answered::Drop => Boundary::Continue,
            Answered::Confirmed => {
                *self.confirmed.borrow_mut() = Some(Confirmed { conn: asker.conn });
                Boundary::HandOver
            }
        }
    }

    async fn answer(
        &self,
        asker: &mut Asker,
        holdings: Holdings,
        last_event: u64,
        workspace: Option<&Path>,
    ) -> Answered {
        if !holdings.is_empty() {
            if asker.named == Some(holdings) {
                return Answered::Keep;
            }
            asker.named = Some(holdings);
            let line = SessionLine::Holding(holdings).to_line();
            return match send(&mut asker.conn, &line).await {
                Ok(()) => Answered::Keep,
                Err(_) => Answered::Drop,
            };
        }
        let ready = SessionLine::Ready {
            last_event,
            workspace: workspace.map(|w| w.to_string_lossy().into_owned()),
        };
        if send(&mut asker.conn, &ready.to_line()).await.is_err() {
            return Answered::Drop;
        }
        match tokio::time::timeout(CONFIRM_DEADLINE, asker.conn.next_line()).await {
            Ok(Ok(Some(line))) if line == CONFIRM => Answered::Confirmed,
            Ok(Ok(Some(line))) => {
                let message = format!(
                    "expected '{CONFIRM}', got '{}': the session carries on",
                    sanitize(&line)
                );
                let _ = send(&mut asker.conn, &SessionLine::Error(message).to_line()).await;
                Answered::Drop
            }
            _ => {
                tracing::info!("a handover client left before confirming; the session carries on");
                Answered::Drop
            }
        }
    }

    /// The boundary after the model's final answer, where the turn has
    /// nothing more to run: while the ask is open and the client still
    /// there, background work named by `held` is waited for (looked at every
    /// [`LAST_BOUNDARY_POLL`]), then the exchange goes on as at any
    /// boundary. A client that gave up (at its `--wait`) ends the wait, and
    /// the session ends as it would have unasked.
    pub(crate) async fn wait_at_last_boundary(
        &self,
        mut held: impl FnMut() -> Option<(Holdings, Option<PathBuf>)>,
        last_event: impl Fn() -> u64,
    ) -> Boundary {
        loop {
            let Some((holdings, workspace)) = held() else {
                return Boundary::Continue;
            };
            let boundary = self
                .at_boundary(holdings, last_event(), workspace.as_deref())
                .await;
            if holdings.is_empty() || boundary == Boundary::HandOver || !self.asked() {
                return boundary;
            }
            tokio::time::sleep(LAST_BOUNDARY_POLL).await;
            if !self.pending_alive() {
                return Boundary::Continue;
            }
        }
    }

    /// The client that confirmed, if any.
    pub(crate) fn take_confirmed(&self) -> Option<Confirmed> {
        self.confirmed.borrow_mut().take()
    }
}

enum Answered {
    Keep,
    Drop,
    Confirmed,
}

async fn send(conn: &mut Conn, line: &str) -> std::io::Result<()> {
    let stream = conn.get_mut().get_mut();
    stream.write_all(line.as_bytes()).await?;
    stream.flush().await
}

/// Whether the peer has not closed its side: a read that would block means
/// it is still there; end of file or an error means it is gone. Anything it
/// sent early (a confirm before `ready`) is a client not following the
/// exchange, and is treated as gone.
fn still_open(stream: &UnixStream) -> bool {
    let mut byte = [0u8; 1];
    matches!(stream.try_read(&mut byte), Err(err) if err.kind() == std::io::ErrorKind::WouldBlock)
}

#[cfg(test)]
mod tests;
