//! The client library: connect, greet, send one verb, read its reply.
//!
//! One verb per connection: the daemon closes the connection after the reply,
//! and for `read` and `list` that close is what ends the list of lines. A
//! `watch` stays open and streams until the session ends. Every call greets
//! first and sends nothing else until the numbers match.

mod workspace;

use std::path::Path;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::{TcpStream, UnixStream};

use crate::greeting::{GreetingError, check_greeting_reply};
use crate::lines::{LineError, LineReader, MAX_REPLY_LINE};
use crate::reply::{EventLine, RowLine, error_message};
use crate::{Address, Answer, Greeting, PROTOCOL, Request, RequestError, sanitize};

pub use workspace::{DiffFile, RowFeed, WorkspaceDiff};

trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

type Conn = LineReader<BufReader<Box<dyn Io>>>;

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("no daemon is listening on {address} ({error}): start one with 'chock daemon'")]
    NotListening {
        address: Address,
        error: std::io::Error,
    },
    #[error("could not reach the daemon at {address}: {error}")]
    Connect {
        address: Address,
        error: std::io::Error,
    },
    #[error("daemon at {address}: {error}")]
    Greeting {
        address: Address,
        error: GreetingError,
    },
    #[error("the daemon at {address} said: {message}")]
    Daemon { address: Address, message: String },
    #[error("the daemon at {address} sent a reply this client does not understand: '{line}'")]
    Unexpected { address: Address, line: String },
    #[error("the daemon at {address} closed the connection before replying: is it still running?")]
    Closed { address: Address },
    #[error("the daemon at {address} did not reply within {seconds} s")]
    Timeout { address: Address, seconds: u64 },
    #[error("reading from the daemon at {address}: {error}")]
    Line { address: Address, error: LineError },
    #[error("writing to the daemon at {address}: {error}")]
    Write {
        address: Address,
        error: std::io::Error,
    },
    #[error(transparent)]
    Request(#[from] RequestError),
    #[error("the project directory {0} is not UTF-8 text, which the protocol cannot carry")]
    NotUtf8Path(std::path::PathBuf),
}

/// What `start` and `adopt` return: the session and where its log is (on the
/// daemon's machine).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Started {
    pub session: String,
    pub log: String,
}

/// A client for one daemon address.
#[derive(Debug, Clone)]
pub struct Client {
    address: Address,
    timeout: Option<Duration>,
    protocol: u32,
}

impl Client {
    pub fn new(address: Address) -> Client {
        Client {
            address,
            timeout: None,
            protocol: PROTOCOL,
        }
    }

    /// Bounds the connect and each read of a reply (not the wait between a
    /// watch's events, which lasts as long as the session does).
    pub fn with_timeout(mut self, timeout: Duration) -> Client {
        self.timeout = Some(timeout);
        self
    }

    /// Greets with another number; only tests of the refusal need this.
    #[doc(hidden)]
    pub fn with_protocol(mut self, protocol: u32) -> Client {
        self.protocol = protocol;
        self
    }

    pub fn address(&self) -> &Address {
        &self.address
    }

    /// Connects and greets, then closes: proves a daemon that speaks this
    /// client's protocol is there.
    pub async fn ping(&self) -> Result<(), ClientError> {
        self.connect().await.map(drop)
    }

    pub async fn start(&self, project: &Path, message: &str) -> Result<Started, ClientError> {
        let request = Request::Start {
            project: utf8(project)?,
            message: message.to_owned(),
        };
        self.started(&request).await
    }

    pub async fn adopt(&self, project: &Path, session: &str) -> Result<Started, ClientError> {
        let request = Request::Adopt {
            project: utf8(project)?,
            session: session.to_owned(),
        };
        self.started(&request).await
    }

    /// The events after `after`, then the end of the log as it stood.
    pub async fn read(&self, session: &str, after: u64) -> Result<Vec<EventLine>, ClientError> {
        let request = Request::Read {
            session: session.to_owned(),
            after,
        };
        let mut conn = self.send(&request).await?;
        let mut events = Vec::new();
        while let Some(line) = self.next_line(&mut conn).await? {
            events.push(self.event(&line)?);
        }
        Ok(events)
    }

    /// The first `limit` events after `after`: the connection is closed once
    /// they arrived, so a caller that wants one page of a long log holds that
    /// page, not the log.
    pub async fn read_at_most(
        &self,
        session: &str,
        after: u64,
        limit: usize,
    ) -> Result<Vec<EventLine>, ClientError> {
        let request = Request::Read {
            session: session.to_owned(),
            after,
        };
        let mut conn = self.send(&request).await?;
        let mut events = Vec::new();
        while events.len() < limit {
            let Some(line) = self.next_line(&mut conn).await? else {
                break;
            };
            events.push(self.event(&line)?);
        }
        Ok(events)
    }

    /// One row per session of the project.
    pub async fn list(&self, project: &Path) -> Result<Vec<RowLine>, ClientError> {
        let request = Request::List {
            project: utf8(project)?,
        };
        let mut conn = self.send(&request).await?;
        let mut rows = Vec::new();
        while let Some(line) = self.next_line(&mut conn).await? {
            rows.push(RowLine::parse(&line).ok_or_else(|| self.unexpected(&line))?);
        }
        Ok(rows)
    }

    /// Opens a watch: the header row now, then events as the session appends.
    pub async fn watch(
        &self,
        project: &Path,
        session: &str,
        after: u64,
    ) -> Result<Watch, ClientError> {
        let request = Request::Watch {
            project: utf8(project)?,
            session: session.to_owned(),
            after,
        };
        let mut conn = self.send(&request).await?;
        let line = self
            .next_line(&mut conn)
            .await?
            .ok_or_else(|| ClientError::Closed {
                address: self.address.clone(),
            })?;
        let header = line
            .strip_prefix("ok ")
            .and_then(|rest| rest.split_once('\t'))
            .and_then(|(id, row)| {
                let row: serde_json::Value = serde_json::from_str(row).ok()?;
                (id == session && row.is_object()).then_some(row)
            })
            .ok_or_else(|| self.unexpected(&line))?;
        Ok(Watch {
            client: self.clone(),
            conn,
            header,
            last: after,
        })
    }

    /// Delivers an answer to a pending approval. `Ok` only when the session's
    /// own socket took it.
    pub async fn answer(
        &self,
        project: &Path,
        session: &str,
        request: &str,
        answer: Answer,
    ) -> Result<(), ClientError> {
        let request = Request::Answer {
            project: utf8(project)?,
            session: session.to_owned(),
            request: request.to_owned(),
            answer,
        };
        self.answered(&request).await
    }

    /// Delivers the text answer to a question the model asked
    /// (`ask_user`). `Ok` only when the session's own socket took it.
    /// Newlines in `text` become spaces: the answer is one line.
    pub async fn reply(
        &self,
        project: &Path,
        session: &str,
        request: &str,
        text: &str,
    ) -> Result<(), ClientError> {
        let request = Request::Reply {
            project: utf8(project)?,
            session: session.to_owned(),
            request: request.to_owned(),
            text: text.replace(['\r', '\n'], " "),
        };
        self.answered(&request).await
    }

    /// Carries an ended session on with `message`, in the daemon's own
    /// child, as `chock run --continue` would: the same log, the same
    /// workspace. Newlines in `message` become spaces: a request is one line.
    pub async fn continue_session(
        &self,
        project: &Path,
        session: &str,
        message: &str,
    ) -> Result<Started, ClientError> {
        let request = Request::Continue {
            project: utf8(project)?,
            session: session.to_owned(),
            message: message.replace(['\r', '\n'], " "),
        };
        self.started(&request).await
    }

    /// Ends the session's current turn (SIGINT to the process holding its
    /// log). `Ok` only for `ok interrupted`.
    pub async fn interrupt(&self, project: &Path, session: &str) -> Result<(), ClientError> {
        let request = Request::Interrupt {
            project: utf8(project)?,
            session: session.to_owned(),
        };
        let mut conn = self.send(&request).await?;
        let line = self.reply_line(&mut conn).await?;
        if line == "ok interrupted" {
            Ok(())
        } else {
            Err(self.unexpected(&line))
        }
    }

    /// Stops every agent in the project's repository, as `chock stop
    /// --project <dir> --reason <reason>` does, with `who` recorded as the
    /// person who stopped it. Returns the sentence `chock stop` prints.
    /// Newlines in `who` and `reason` become spaces.
    pub async fn stop(
        &self,
        project: &Path,
        who: &str,
        reason: &str,
    ) -> Result<String, ClientError> {
        let request = Request::Stop {
            project: utf8(project)?,
            who: who.replace(['\r', '\n', '\t'], " "),
            reason: reason.replace(['\r', '\n'], " "),
        };
        let mut conn = self.send(&request).await?;
        let line = self.reply_line(&mut conn).await?;
        line.strip_prefix("ok ")
            .filter(|sentence| !sentence.is_empty())
            .map(str::to_owned)
            .ok_or_else(|| self.unexpected(&line))
    }

    /// Hands a session the daemon does not own over to it, as `chock
    /// detach <id>` does; `Ok` once the daemon's own child holds its log.
    pub async fn detach(&self, project: &Path, session: &str) -> Result<Started, ClientError> {
        let request = Request::Detach {
            project: utf8(project)?,
            session: session.to_owned(),
        };
        self.started(&request).await
    }

    /// Sends an `answer` or a `reply`: `Ok` only for `ok answered`.
    async fn answered(&self, request: &Request) -> Result<(), ClientError> {
        let mut conn = self.send(request).await?;
        let line = self.reply_line(&mut conn).await?;
        if line == "ok answered" {
            Ok(())
        } else {
            Err(self.unexpected(&line))
        }
    }

    /// The next line of a reply that stays open (a watch, a row feed),
    /// with no timeout: `None` when the daemon closed it, and its `error`
    /// line as the daemon's refusal.
    async fn streamed_line(&self, conn: &mut Conn) -> Result<Option<String>, ClientError> {
        let line = conn
            .next_line()
            .await
            .map_err(|error| self.line_error(error))?;
        self.refused(line)
    }

    async fn started(&self, request: &Request) -> Result<Started, ClientError> {
        let mut conn = self.send(request).await?;
        let line = self.reply_line(&mut conn).await?;
        line.strip_prefix("ok ")
            .and_then(|rest| rest.split_once('\t'))
            .filter(|(session, log)| !session.is_empty() && !log.is_empty())
            .map(|(session, log)| Started {
                session: session.to_owned(),
                log: log.to_owned(),
            })
            .ok_or_else(|| self.unexpected(&line))
    }

    async fn connect(&self) -> Result<Conn, ClientError> {
        let io: Box<dyn Io> = match &self.address {
            Address::Unix(path) => Box::new(
                self.timed(UnixStream::connect(path))
                    .await
                    .and_then(|r| r.map_err(|source| self.connect_error(source)))?,
            ),
            Address::Tcp { host, port } => Box::new(
                self.timed(TcpStream::connect((host.as_str(), *port)))
                    .await
                    .and_then(|r| r.map_err(|source| self.connect_error(source)))?,
            ),
        };
        let mut conn = LineReader::new(BufReader::new(io), MAX_REPLY_LINE);
        let greeting = Greeting {
            protocol: self.protocol,
        };
        self.write(&mut conn, &greeting.to_line()).await?;
        // Read raw: a refusal of the greeting is judged by its number, not
        // turned into an ordinary error line.
        let line = self
            .raw_line(&mut conn)
            .await?
            .ok_or_else(|| ClientError::Closed {
                address: self.address.clone(),
            })?;
        check_greeting_reply(&line, self.protocol).map_err(|source| ClientError::Greeting {
            address: self.address.clone(),
            error: source,
        })?;
        Ok(conn)
    }

    async fn send(&self, request: &Request) -> Result<Conn, ClientError> {
        // Format before connecting: a request that cannot be sent must not
        // cost the daemon a connection.
        let line = request.to_line()?;
        let mut conn = self.connect().await?;
        self.write(&mut conn, &line).await?;
        Ok(conn)
    }

    async fn write(&self, conn: &mut Conn, line: &str) -> Result<(), ClientError> {
        let stream = conn.get_mut().get_mut();
        let result = async {
            stream.write_all(line.as_bytes()).await?;
            stream.flush().await
        }
        .await;
        result.map_err(|source| ClientError::Write {
            address: self.address.clone(),
            error: source,
        })
    }

    /// The next line as it came, within the timeout.
    async fn raw_line(&self, conn: &mut Conn) -> Result<Option<String>, ClientError> {
        self.timed(conn.next_line())
            .await?
            .map_err(|error| self.line_error(error))
    }

    fn line_error(&self, error: LineError) -> ClientError {
        ClientError::Line {
            address: self.address.clone(),
            error,
        }
    }

    /// The next line, with an `error ` line turned into an error.
    async fn next_line(&self, conn: &mut Conn) -> Result<Option<String>, ClientError> {
        let line = self.raw_line(conn).await?;
        self.refused(line)
    }

    /// `line`, with an `error ` line turned into the daemon's refusal.
    fn refused(&self, line: Option<String>) -> Result<Option<String>, ClientError> {
        match line {
            Some(line) => match error_message(&line) {
                Some(message) => Err(ClientError::Daemon {
                    address: self.address.clone(),
                    message: message.to_owned(),
                }),
                None => Ok(Some(line)),
            },
            None => Ok(None),
        }
    }

    async fn reply_line(&self, conn: &mut Conn) -> Result<String, ClientError> {
        self.next_line(conn)
            .await?
            .ok_or_else(|| ClientError::Closed {
                address: self.address.clone(),
            })
    }

    async fn timed<F: Future>(&self, future: F) -> Result<F::Output, ClientError> {
        match self.timeout {
            None => Ok(future.await),
            Some(limit) => {
                tokio::time::timeout(limit, future)
                    .await
                    .map_err(|_| ClientError::Timeout {
                        address: self.address.clone(),
                        seconds: limit.as_secs(),
                    })
            }
        }
    }

    fn event(&self, line: &str) -> Result<EventLine, ClientError> {
        EventLine::parse(line).ok_or_else(|| self.unexpected(line))
    }

    fn unexpected(&self, line: &str) -> ClientError {
        ClientError::Unexpected {
            address: self.address.clone(),
            line: sanitize(line),
        }
    }

    fn connect_error(&self, source: std::io::Error) -> ClientError {
        use std::io::ErrorKind;
        let address = self.address.clone();
        match source.kind() {
            ErrorKind::NotFound | ErrorKind::ConnectionRefused => ClientError::NotListening {
                address,
                error: source,
            },
            _ => ClientError::Connect {
                address,
                error: source,
            },
        }
    }
}

/// An open watch. The header is the session's row when the watch began;
/// events follow in id order with none repeated, and `next_event` returns
/// `None` when the session has ended and the daemon closed the stream.
pub struct Watch {
    client: Client,
    conn: Conn,
    header: serde_json::Value,
    last: u64,
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watch")
            .field("address", &self.client.address)
            .field("last", &self.last)
            .finish_non_exhaustive()
    }
}

impl Watch {
    pub fn header(&self) -> &serde_json::Value {
        &self.header
    }

    /// The header as a [`crate::SessionRow`].
    pub fn header_row(&self) -> Result<crate::SessionRow, serde_json::Error> {
        serde_json::from_value(self.header.clone())
    }

    /// The id of the last event received: what to send to resume after a
    /// dropped connection.
    pub fn last_event_id(&self) -> u64 {
        self.last
    }

    pub async fn next_event(&mut self) -> Result<Option<EventLine>, ClientError> {
        // No timeout here: a session may think for as long as it likes.
        let Some(line) = self.client.streamed_line(&mut self.conn).await? else {
            return Ok(None);
        };
        let event = self.client.event(&line)?;
        self.last = event.id;
        Ok(Some(event))
    }
}

fn utf8(path: &Path) -> Result<String, ClientError> {
    path.to_str()
        .map(str::to_owned)
        .ok_or_else(|| ClientError::NotUtf8Path(path.to_owned()))
}
