//! The handover socket's exchange: `handover.sock` beside a session's log.
//!
//! Like `approve.sock`, the socket carries a question and an answer and never
//! a log write: the session records its own ending. It takes two round trips
//! on one connection, and the second is what makes a client that gave up
//! safe (seeds 000, "Handing a session over"):
//!
//! ```text
//! -> handover
//! <- holding <commands> <subagents>     (zero or more: background work it waits for)
//! <- ready <last event id>\t<workspace directory or ->
//! -> confirm
//! <- ok <session.end event id>          (written, flushed, lock released)
//! ```
//!
//! Any line from the session may instead be `error <message>`. A client that
//! never sends `confirm` (it was interrupted, or found the daemon gone)
//! leaves the session running with its log untouched by the attempt.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::io::{AsyncWriteExt as _, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};

use crate::lines::{LineError, LineReader};
use crate::sanitize;

/// The longest line either side of the handover socket reads.
pub const MAX_HANDOVER_LINE: usize = 64 << 10;

/// The client's first line.
pub const ASK: &str = "handover";
/// The client's second line, sent only after it proved the daemon again.
pub const CONFIRM: &str = "confirm";

/// Background work a session holds, by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Holdings {
    pub commands: u64,
    pub subagents: u64,
}

impl Holdings {
    pub fn is_empty(&self) -> bool {
        self.commands == 0 && self.subagents == 0
    }
}

impl std::fmt::Display for Holdings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let plural =
            |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        match (self.commands, self.subagents) {
            (0, 0) => f.write_str("no background work"),
            (c, 0) => f.write_str(&plural(c, "background command", "background commands")),
            (0, s) => f.write_str(&plural(s, "background subagent", "background subagents")),
            (c, s) => write!(
                f,
                "{} and {}",
                plural(c, "background command", "background commands"),
                plural(s, "background subagent", "background subagents")
            ),
        }
    }
}

/// A line the session sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionLine {
    /// It holds background work and waits for it before it is ready.
    Holding(Holdings),
    /// It is at a turn boundary and waits for `confirm`.
    Ready {
        last_event: u64,
        workspace: Option<String>,
    },
    /// It ended its run with `session.end` reason handover and let go.
    HandedOver { ending: u64 },
    /// It refused, and says why.
    Error(String),
}

impl SessionLine {
    pub fn to_line(&self) -> String {
        match self {
            SessionLine::Holding(h) => format!("holding {} {}\n", h.commands, h.subagents),
            SessionLine::Ready {
                last_event,
                workspace,
            } => format!(
                "ready {last_event}\t{}\n",
                workspace
                    .as_deref()
                    .map_or_else(|| "-".to_owned(), |w| w.replace(['\n', '\r', '\t'], " "))
            ),
            SessionLine::HandedOver { ending } => format!("ok {ending}\n"),
            SessionLine::Error(message) => {
                format!("error {}\n", message.replace(['\n', '\r'], " "))
            }
        }
    }

    /// The client's side: `None` for a line this client does not know.
    pub fn parse(line: &str) -> Option<SessionLine> {
        if let Some(message) = line.strip_prefix("error ") {
            return Some(SessionLine::Error(message.to_owned()));
        }
        if let Some(rest) = line.strip_prefix("holding ") {
            let (c, s) = rest.split_once(' ')?;
            return Some(SessionLine::Holding(Holdings {
                commands: c.parse().ok()?,
                subagents: s.parse().ok()?,
            }));
        }
        if let Some(rest) = line.strip_prefix("ready ") {
            let (id, ws) = rest.split_once('\t')?;
            return Some(SessionLine::Ready {
                last_event: id.parse().ok()?,
                workspace: (ws != "-" && !ws.is_empty()).then(|| ws.to_owned()),
            });
        }
        let ending = line.strip_prefix("ok ")?.parse().ok()?;
        Some(SessionLine::HandedOver { ending })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum HandoverError {
    #[error(
        "nothing is listening on {path} ({error}): the session is not running on this machine, \
         has just ended, or runs a chock that cannot hand over"
    )]
    Connect {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("the handover socket {path} failed: {error}")]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("the session closed {path} without answering")]
    Closed { path: PathBuf },
    #[error("the session sent nothing over {path} within {seconds} s")]
    Timeout { path: PathBuf, seconds: u64 },
    #[error("the session's reply over {path} was not understood: '{line}'")]
    Garbled { path: PathBuf, line: String },
}

/// The client's end of one exchange.
#[derive(Debug)]
pub struct HandoverClient {
    path: PathBuf,
    reader: LineReader<BufReader<OwnedReadHalf>>,
    writer: OwnedWriteHalf,
}

impl HandoverClient {
    /// Connects to the session's socket and sends the ask.
    pub async fn ask(path: &Path) -> Result<HandoverClient, HandoverError> {
        let stream = UnixStream::connect(path)
            .await
            .map_err(|source| HandoverError::Connect {
                path: path.to_owned(),
                error: source,
            })?;
        let (read, writer) = stream.into_split();
        let mut client = HandoverClient {
            path: path.to_owned(),
            reader: LineReader::new(BufReader::new(read), MAX_HANDOVER_LINE),
            writer,
        };
        client.send(ASK).await?;
        Ok(client)
    }

    /// The session's next line, waiting at most `wait`.
    pub async fn next(&mut self, wait: Duration) -> Result<SessionLine, HandoverError> {
        let line = tokio::time::timeout(wait, self.reader.next_line())
            .await
            .map_err(|_| HandoverError::Timeout {
                path: self.path.clone(),
                seconds: wait.as_secs(),
            })?;
        match line {
            Ok(Some(line)) => SessionLine::parse(&line).ok_or_else(|| HandoverError::Garbled {
                path: self.path.clone(),
                line: sanitize(&line),
            }),
            Ok(None) | Err(LineError::Unterminated(_)) => Err(HandoverError::Closed {
                path: self.path.clone(),
            }),
            Err(LineError::Io(source)) => Err(HandoverError::Io {
                path: self.path.clone(),
                error: source,
            }),
            Err(other) => Err(HandoverError::Garbled {
                path: self.path.clone(),
                line: other.to_string(),
            }),
        }
    }

    /// Sends `confirm`: after this the session ends its run.
    pub async fn confirm(&mut self) -> Result<(), HandoverError> {
        self.send(CONFIRM).await
    }

    async fn send(&mut self, line: &str) -> Result<(), HandoverError> {
        let io = |source| HandoverError::Io {
            path: self.path.clone(),
            error: source,
        };
        self.writer
            .write_all(format!("{line}\n").as_bytes())
            .await
            .map_err(io)?;
        self.writer.flush().await.map_err(io)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_lines_round_trip() {
        for line in [
            SessionLine::Holding(Holdings {
                commands: 2,
                subagents: 1,
            }),
            SessionLine::Ready {
                last_event: 42,
                workspace: Some("/s/workspaces/x".into()),
            },
            SessionLine::Ready {
                last_event: 7,
                workspace: None,
            },
            SessionLine::HandedOver { ending: 45 },
            SessionLine::Error("another detach is asking".into()),
        ] {
            let text = line.to_line();
            assert!(text.ends_with('\n'));
            assert_eq!(SessionLine::parse(text.trim_end_matches('\n')), Some(line));
        }
        for bad in ["", "ready", "ready x\t-", "holding 1", "ok", "ok x", "yes"] {
            assert_eq!(SessionLine::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn holdings_read_as_counts() {
        let h = |commands, subagents| Holdings {
            commands,
            subagents,
        };
        assert_eq!(h(1, 0).to_string(), "1 background command");
        assert_eq!(h(0, 2).to_string(), "2 background subagents");
        assert_eq!(
            h(2, 1).to_string(),
            "2 background commands and 1 background subagent"
        );
        assert!(h(0, 0).is_empty());
    }
}
