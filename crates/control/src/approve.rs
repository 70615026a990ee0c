//! The approval socket's exchange: `approve.sock` beside a session's log.
//!
//! The socket carries a question and an answer and never a log write: the
//! session owns its log and records `approval.answer` itself. A client (the
//! daemon's `answer` verb, or `chock approve`) connects, sends one line
//! `answer <request id> <yes|no>`, and reads one line back: `ok` when the
//! session took the answer, `error <message>` when it did not (no such
//! pending request, already answered). The question itself is the
//! `approval.request` event in the log, which every client already reads.

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
        "could not deliver the answer: nothing is listening on {path} ({source}); \
         the session is not running on this machine or has ended"
    )]
    Connect {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("could not deliver the answer over {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
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
    if request.is_empty() || request.contains([' ', '\t', '\n', '\r']) {
        return Err(ApproveError::BadRequestId(sanitize(request)));
    }
    let io = |source| ApproveError::Io {
        path: path.to_owned(),
        source,
    };
    let mut stream = UnixStream::connect(path)
        .await
        .map_err(|source| ApproveError::Connect {
            path: path.to_owned(),
            source,
        })?;
    let line = ApproveRequest {
        request: request.to_owned(),
        answer,
    }
    .to_line();
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
    fn reply_lines_are_ok_or_error() {
        assert_eq!(reply_line(&Ok(())), "ok\n");
        assert_eq!(
            reply_line(&Err("no pending request 9\nat all".into())),
            "error no pending request 9 at all\n"
        );
    }
}
