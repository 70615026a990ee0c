//! The session's end of `approve.sock`: a unix socket beside the log, mode
//! 0600, every peer's uid checked against our own, served on the session's
//! own `current_thread` runtime while a request waits (no thread of its
//! own: the tool path forks). One connection carries one line each way,
//! the exchange in docs/protocol.md that chock-control speaks; connections
//! are taken one at a time, each bounded by a deadline, because there is
//! only ever one question open.

use std::path::{Path, PathBuf};
use std::time::Duration;

use chock_control::approve::{Incoming, MAX_APPROVE_LINE, reply_line};
use chock_control::owned_socket::OwnedSocket;
use chock_control::{Answer, LineReader, Whose, check_peer_of, own_uid};
use tokio::io::{AsyncWriteExt as _, BufReader};
use tokio::net::UnixStream;

/// How long one client may take to send its line before it is dropped, so
/// a stuck client cannot keep a second one from answering.
const CLIENT_DEADLINE: Duration = Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub enum SocketError {
    #[error("cannot listen for approvals on {}: {error}; check that the session directory is writable", path.display())]
    Bind {
        path: PathBuf,
        error: std::io::Error,
    },
}

/// What a waiting request takes: a yes or no, or a line of text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wants {
    YesNo,
    Text,
}

/// What a person gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Given {
    Answer(Answer),
    Text(String),
}

/// A bound `approve.sock`; the file is removed when this is dropped.
#[derive(Debug)]
pub(crate) struct ApproveSocket {
    socket: OwnedSocket,
}

impl ApproveSocket {
    /// Binds `path` (a stale socket left by a crashed session is replaced:
    /// whoever holds the log's lock owns its socket) and makes it 0600.
    pub(crate) fn bind(path: &Path) -> Result<Self, SocketError> {
        let socket =
            OwnedSocket::bind(path, "approve.sock").map_err(|source| SocketError::Bind {
                path: path.to_owned(),
                error: source,
            })?;
        Ok(Self { socket })
    }

    /// Serves the socket until a permitted peer answers `request`, and
    /// returns that answer. Answers naming another request, malformed lines
    /// and foreign peers are told why and do not end the wait.
    #[cfg(test)]
    pub(crate) async fn wait_for(&self, request: &str) -> Answer {
        loop {
            if let Given::Answer(answer) = self.wait_for_kind(request, Wants::YesNo).await {
                return answer;
            }
        }
    }

    /// Like [`ApproveSocket::wait_for`], for a request that takes `wants`:
    /// a line of the other kind is refused by name and the wait goes on.
    pub(crate) async fn wait_for_kind(&self, request: &str, wants: Wants) -> Given {
        loop {
            let stream = self.socket.accept().await;
            match tokio::time::timeout(CLIENT_DEADLINE, serve_one(stream, request, wants)).await {
                Ok(Some(answer)) => return answer,
                Ok(None) => {}
                Err(_) => tracing::info!("an approve.sock client sent nothing in time"),
            }
        }
    }
}

/// One connection: a peer check, one line in, one line out.
async fn serve_one(mut stream: UnixStream, request: &str, wants: Wants) -> Option<Given> {
    if let Err(err) = check_peer_of(&stream, own_uid(), Whose::Session) {
        tracing::warn!(%err, "approve.sock refused a peer");
        let line = reply_line(&Err(err.to_string()));
        chock_control::owned_socket::refuse(stream, &line, MAX_APPROVE_LINE).await;
        return None;
    }
    let (read, mut write) = stream.split();
    let mut lines = LineReader::new(BufReader::new(read), MAX_APPROVE_LINE);
    let line = match lines.next_line().await {
        Ok(Some(line)) => line,
        Ok(None) => return None,
        Err(err) => {
            let _ = write
                .write_all(reply_line(&Err(err.to_string())).as_bytes())
                .await;
            return None;
        }
    };
    let (result, answer) = match Incoming::parse(&line) {
        Ok(parsed) if parsed.request() != request => (
            Err(format!(
                "no pending request {}: the request waiting is {request}",
                parsed.request()
            )),
            None,
        ),
        Ok(Incoming::Answer(a)) if wants == Wants::YesNo => (Ok(()), Some(Given::Answer(a.answer))),
        Ok(Incoming::Reply(r)) if wants == Wants::Text => (Ok(()), Some(Given::Text(r.text))),
        Ok(Incoming::Answer(_)) => (
            Err(format!(
                "request {request} is a question and takes text: send 'reply {request} <text>'"
            )),
            None,
        ),
        Ok(Incoming::Reply(_)) => (
            Err(format!(
                "request {request} takes yes or no: send 'answer {request} <yes|no>'"
            )),
            None,
        ),
        Err(message) => (Err(message), None),
    };
    // The answer stands once parsed, even if the client left before
    // reading its `ok`: it was given by a permitted peer.
    let _ = write.write_all(reply_line(&result).as_bytes()).await;
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `test` on a current-thread runtime against a freshly bound
    /// socket, and checks that the socket file goes with the socket.
    fn bound(test: impl AsyncFnOnce(&ApproveSocket, &Path)) {
        chock_testkit::runtime().block_on(async {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("approve.sock");
            let socket = ApproveSocket::bind(&path).unwrap();
            test(&socket, &path).await;
            drop(socket);
            assert!(!path.exists(), "the socket file is removed with the socket");
        });
    }

    #[test]
    fn answers_for_the_waiting_request_are_taken_and_others_refused() {
        bound(async |socket, path| {
            assert_eq!(chock_testkit::permission_bits(path), 0o600);
            let client = async {
                let wrong = chock_control::approve::answer(path, "9", Answer::Yes).await;
                assert!(
                    wrong
                        .unwrap_err()
                        .to_string()
                        .contains("no pending request 9"),
                );
                chock_control::approve::answer(path, "1", Answer::No)
                    .await
                    .unwrap();
            };
            let (answer, ()) = tokio::join!(socket.wait_for("1"), client);
            assert_eq!(answer, Answer::No);
        });
    }

    #[test]
    fn a_question_takes_text_and_refuses_a_yes() {
        bound(async |socket, path| {
            let client = async {
                let yes = chock_control::approve::answer(path, "3", Answer::Yes).await;
                assert!(
                    yes.unwrap_err().to_string().contains("reply 3 <text>"),
                    "a yes does not answer a question"
                );
                chock_control::approve::reply(path, "3", "port 8080")
                    .await
                    .unwrap();
            };
            let (given, ()) = tokio::join!(socket.wait_for_kind("3", Wants::Text), client);
            assert_eq!(given, Given::Text("port 8080".into()));
            let client = async {
                let text = chock_control::approve::reply(path, "4", "sure").await;
                assert!(text.unwrap_err().to_string().contains("answer 4 <yes|no>"));
                chock_control::approve::answer(path, "4", Answer::Yes)
                    .await
                    .unwrap();
            };
            let (given, ()) = tokio::join!(socket.wait_for_kind("4", Wants::YesNo), client);
            assert_eq!(given, Given::Answer(Answer::Yes));
        });
    }
}
