//! The approval socket's exchange: `approve.sock` beside a session's log.
//!
//! The socket carries a question and an answer and never a log write: the
//! session owns its log and records `approval.answer` itself. A client (the
//! daemon's `answer` verb, or `chock approve`) connects, sends one line
//! `answer <request id> <yes|no>`, and reads one line back: `ok` when the
//! session took the answer, `error <message>` when it did not (no such
//! pending request, already answered). The question itself is the
//! `approval.request` event in the log, which every client already reads.
//!
//! A request of kind `question` (the model's `ask_user`) is answered with
//! text instead: `reply <request id> <text>`, the text being the rest of the
//! line (one line; a client turns newlines into spaces). Each kind takes
//! only its own verb, so a stray `yes` never answers a question.

use std::path::{Path, PathBuf};

use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

use crate::lines::{LineError, LineReader};
use crate::{Answer, sanitize};

/// The longest line either side of the approval socket reads.
pub const MAX_APPROVE_LINE: usize = 64 << 10;

/// One answer, as the client sends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApproveRequest {
    pub request: String,
    pub answer: Answer,
}

impl ApproveRequest {
    pub fn to_line(&self) -> String {
        format!("answer {} {}\n", self.request, self.answer)
    }

    /// The session's side: parses a line, or says what was wrong with it.
    pub fn parse(line: &str) -> Result<ApproveRequest, String> {
        let usage = "expected 'answer <request id> <yes|no>'";
        let mut words = line.split(' ');
        match (words.next(), words.next(), words.next(), words.next()) {
            (Some("answer"), Some(request), Some(answer), None)
                if !request.is_empty() && !request.contains('\t') =>
            {
                let answer = Answer::parse(answer).ok_or_else(|| {
                    format!("malformed answer: {usage}, got '{}'", sanitize(line))
                })?;
                Ok(ApproveRequest {
                    request: request.to_owned(),
                    answer,
                })
            }
            _ => Err(format!(
                "malformed answer: {usage}, got '{}'",
                sanitize(line)
            )),
        }
    }
}

/// A text answer to a question, as the client sends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplyRequest {
    pub request: String,
    pub text: String,
}

impl ReplyRequest {
    pub fn to_line(&self) -> String {
        format!(
            "reply {} {}\n",
            self.request,
            self.text.replace(['\n', '\r'], " ")
        )
    }
}

/// One line a client sent: an answer or a reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Incoming {
    Answer(ApproveRequest),
    Reply(ReplyRequest),
}

impl Incoming {
    /// The request the line names.
    pub fn request(&self) -> &str {
        match self {
            Incoming::Answer(a) => &a.request,
            Incoming::Reply(r) => &r.request,
        }
    }

    /// The session's side: parses either kind of line, or says what was
    /// wrong with it.
    pub fn parse(line: &str) -> Result<Incoming, String> {
        match line.strip_prefix("reply ") {
            Some(rest) => {
                let (request, text) = rest.split_once(' ').unwrap_or((rest, ""));
                if request.is_empty() || request.contains('\t') || text.trim().is_empty() {
                    return Err(format!(
                        "malformed reply: expected 'reply <request id> <text>' with some text, got '{}'",
                        sanitize(line)
                    ));
                }
                Ok(Incoming::Reply(ReplyRequest {
                    request: request.to_owned(),
                    text: text.to_owned(),
                }))
            }
            None => ApproveRequest::parse(line).map(Incoming::Answer),
        }
    }
}

/// The session's reply line: `ok`, or `error <message>`.
pub fn reply_line(result: &Result<(), String>) -> String {
    match result {
        Ok(()) => "ok\n".to_owned(),
        Err(message) => format!("error {}\n", message.replace(['\n', '\r'], " ")),
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ApproveError {
    #[error(
        "could not deliver the answer: nothing is listening on {path} ({error}); \
         the session is not running on this machine or has ended"
    )]
    Connect {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("could not deliver the answer over {path}: {error}")]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("the session closed {path} without saying whether it took the answer")]
    NoReply { path: PathBuf },
    #[error("the session did not take the answer: {0}")]
    Refused(String),
    #[error("the session's reply over {path} was not understood: {detail}")]
    Garbled { path: PathBuf, detail: String },
    #[error("request id '{0}' cannot be sent: it is empty or holds a space, tab or newline")]
    BadRequestId(String),
}

/// Delivers one answer to the session listening on `path`. Only `ok` from
/// the session is success; every other outcome is an error, so an approval
/// nobody could deliver never reads as one that was given.
pub async fn answer(path: &Path, request: &str, answer: Answer) -> Result<(), ApproveError> {
    let line = ApproveRequest {
        request: request.to_owned(),
        answer,
    }
    .to_line();
    exchange(path, request, &line).await
}

/// Delivers a text answer to a question (`ask_user`), like [`answer`].
pub async fn reply(path: &Path, request: &str, text: &str) -> Result<(), ApproveError> {
    let line = ReplyRequest {
        request: request.to_owned(),
        text: text.to_owned(),
    }
    .to_line();
    exchange(path, request, &line).await
}

async fn exchange(path: &Path, request: &str, line: &str) -> Result<(), ApproveError> {
    if request.is_empty() || request.contains([' ', '\t', '\n', '\r']) {
        return Err(ApproveError::BadRequestId(sanitize(request)));
    }
    let io = |source| ApproveError::Io {
        path: path.to_owned(),
        error: source,
    };
    let mut stream = UnixStream::connect(path)
        .await
        .map_err(|source| ApproveError::Connect {
            path: path.to_owned(),
            error: source,
        })?;
    stream.write_all(line.as_bytes()).await.map_err(io)?;
    let mut reader = LineReader::new(BufReader::new(stream), MAX_APPROVE_LINE);
    match reader.next_line().await {
        Ok(Some(reply)) if reply == "ok" => Ok(()),
        Ok(Some(reply)) => match reply.strip_prefix("error ") {
            Some(message) => Err(ApproveError::Refused(message.to_owned())),
            None => Err(ApproveError::Garbled {
                path: path.to_owned(),
                detail: sanitize(&reply),
            }),
        },
        Ok(None) | Err(LineError::Unterminated(_)) => Err(ApproveError::NoReply {
            path: path.to_owned(),
        }),
        Err(LineError::Io(source)) => Err(io(source)),
        Err(other) => Err(ApproveError::Garbled {
            path: path.to_owned(),
            detail: other.to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answer_lines_round_trip() {
        let req = ApproveRequest {
            request: "7".into(),
            answer: Answer::Yes,
        };
        assert_eq!(req.to_line(), "answer 7 yes\n");
        assert_eq!(ApproveRequest::parse("answer 7 yes"), Ok(req));
        assert_eq!(
            ApproveRequest::parse("answer r-1 no").map(|r| r.answer),
            Ok(Answer::No)
        );
    }

    #[test]
    fn malformed_answers_are_refused_by_name() {
        for bad in [
            "",
            "answer",
            "answer 7",
            "answer 7 maybe",
            "answer 7 yes extra",
            "ok",
        ] {
            let err = ApproveRequest::parse(bad).unwrap_err();
            assert!(
                err.starts_with("malformed answer: expected 'answer <request id> <yes|no>'"),
                "{err}"
            );
        }
    }

    #[test]
    fn replies_carry_the_rest_of_the_line_and_answers_still_parse() {
        let reply = ReplyRequest {
            request: "4".into(),
            text: "use port 8080\nplease".into(),
        };
        assert_eq!(reply.to_line(), "reply 4 use port 8080 please\n");
        assert_eq!(
            Incoming::parse("reply 4 use port 8080  please"),
            Ok(Incoming::Reply(ReplyRequest {
                request: "4".into(),
                text: "use port 8080  please".into()
            }))
        );
        assert_eq!(
            Incoming::parse("answer 4 no").unwrap(),
            Incoming::Answer(ApproveRequest {
                request: "4".into(),
                answer: Answer::No
            })
        );
        for bad in ["reply 4", "reply 4 ", "reply  text"] {
            let err = Incoming::parse(bad).unwrap_err();
            assert!(err.starts_with("malformed reply"), "{err}");
        }
        assert!(
            Incoming::parse("reply")
                .unwrap_err()
                .starts_with("malformed answer")
        );
    }

    #[test]
    fn reply_lines_are_ok_or_error() {
        assert_eq!(reply_line(&Ok(())), "ok\n");
        assert_eq!(
            reply_line(&Err("no pending request 9\nat all".into())),
            "error no pending request 9 at all\n"
        );
    }
}
