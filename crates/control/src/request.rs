//! Requests: the greeting and the verbs (the specification's six, `reply`,
//! the workspace and row-feed verbs, and the session controls), parsed
//! from and formatted to one line each.
//!
//! The verb is separated from its fields by one space; the fields are
//! separated by tabs, except `read`, whose two fields the specification
//! separates by a space. The last field of `start` is the person's message
//! and may itself hold tabs, so it is taken whole. No field may hold a
//! newline: a line is a request, and nothing escapes.

use std::fmt;

use crate::{PROTOCOL_NAME, sanitize};

/// A yes or a no, the only two answers an approval takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Yes,
    No,
}

impl Answer {
    pub fn as_str(self) -> &'static str {
        match self {
            Answer::Yes => "yes",
            Answer::No => "no",
        }
    }

    pub fn parse(text: &str) -> Option<Answer> {
        match text {
            "yes" => Some(Answer::Yes),
            "no" => Some(Answer::No),
            _ => None,
        }
    }
}

impl fmt::Display for Answer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One request line. `Hello` is only valid as a connection's first line and
/// every other variant only after it; the daemon enforces the order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// `hello chock-control <protocol number>`
    Hello { protocol: u32 },
    /// `start <project directory>\t<message>`
    Start { project: String, message: String },
    /// `adopt <project directory>\t<session id>`
    Adopt { project: String, session: String },
    /// `read <session id> <last event id>`
    Read { session: String, after: u64 },
    /// `list <project directory>`
    List { project: String },
    /// `watch <project directory>\t<session id>\t<last event id>`
    Watch {
        project: String,
        session: String,
        after: u64,
    },
    /// `answer <project directory>\t<session id>\t<request id>\t<yes|no>`
    Answer {
        project: String,
        session: String,
        request: String,
        answer: Answer,
    },
    /// `reply <project directory>\t<session id>\t<request id>\t<text>`:
    /// the answer to a question the model asked (`ask_user`), which wants a
    /// line of text rather than a yes or a no. The text is the rest of the
    /// line and may hold tabs.
    Reply {
        project: String,
        session: String,
        request: String,
        text: String,
    },
    // The workspace and row-feed verbs, for `chock serve`.
    /// `diff <project directory>\t<session id>\t<byte limit>`
    Diff {
        project: String,
        session: String,
        limit: u64,
    },
    /// `apply <project directory>\t<session id>`
    Apply { project: String, session: String },
    /// `discard <project directory>\t<session id>`
    Discard { project: String, session: String },
    /// `all`: every session of every project the daemon's state knows.
    All,
    /// `rows <project directory, or empty>`: the rows, then their changes.
    Rows { project: Option<String> },
    // The session controls, for `chock serve`.
    /// `continue <project directory>\t<session id>\t<message>`: carries an
    /// ended session on with the person's message, as `chock run
    /// --continue` does. The message is the rest of the line and may hold
    /// tabs.
    Continue {
        project: String,
        session: String,
        message: String,
    },
    /// `interrupt <project directory>\t<session id>`: ends the session's
    /// current turn, as Ctrl-C does.
    Interrupt { project: String, session: String },
    /// `stop <project directory>\t<who>\t<reason>`: stops every agent in
    /// the project's repository, as `chock stop --project <dir> --reason
    /// <reason>` does, recording `who` as the person who stopped it. The
    /// reason is the rest of the line and may hold tabs.
    Stop {
        project: String,
        who: String,
        reason: String,
    },
    /// `detach <project directory>\t<session id>`: hands a session the
    /// daemon does not own over to it, as `chock detach <id>` does.
    Detach { project: String, session: String },
}

/// The verbs: the specification's, in its order, then `reply`, the
/// workspace and row-feed verbs, and the session controls.
pub const VERBS: [&str; 16] = [
    "start",
    "adopt",
    "read",
    "list",
    "watch",
    "answer",
    "reply",
    // The workspace and row-feed verbs.
    "diff",
    "apply",
    "discard",
    "all",
    "rows",
    // Session controls.
    "continue",
    "interrupt",
    "stop",
    "detach",
];

/// Why a line is not a request. Each message is what the daemon sends back
/// after `error `, so it names the offending text and the expected shape.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    #[error("empty request: send one of {}", VERBS.join(", "))]
    Empty,
    #[error("unknown verb '{verb}': the verbs are {}", VERBS.join(", "))]
    UnknownVerb { verb: String },
    #[error("malformed '{verb}' request: expected '{usage}', got '{got}'")]
    Malformed {
        verb: &'static str,
        usage: &'static str,
        got: String,
    },
    #[error("the {field} holds a newline, which would end the request early: remove it")]
    Newline { field: &'static str },
    #[error(
        "cannot send this '{verb}' request: a field is empty or holds a tab or space the protocol uses to separate fields ('{line}')"
    )]
    Unsendable { verb: &'static str, line: String },
}

impl Request {
    /// The verb as it is written on the wire.
    pub fn verb(&self) -> &'static str {
        match self {
            Request::Hello { .. } => "hello",
            Request::Start { .. } => "start",
            Request::Adopt { .. } => "adopt",
            Request::Read { .. } => "read",
            Request::List { .. } => "list",
            Request::Watch { .. } => "watch",
            Request::Answer { .. } => "answer",
            Request::Reply { .. } => "reply",
            Request::Diff { .. } => "diff",
            Request::Apply { .. } => "apply",
            Request::Discard { .. } => "discard",
            Request::All => "all",
            Request::Rows { .. } => "rows",
            Request::Continue { .. } => "continue",
            Request::Interrupt { .. } => "interrupt",
            Request::Stop { .. } => "stop",
            Request::Detach { .. } => "detach",
        }
    }

    /// The session the request is about, when it names one; the daemon logs it.
    pub fn session(&self) -> Option<&str> {
        match self {
            Request::Adopt { session, .. }
            | Request::Read { session, .. }
            | Request::Watch { session, .. }
            | Request::Answer { session, .. }
            | Request::Reply { session, .. }
            | Request::Diff { session, .. }
            | Request::Apply { session, .. }
            | Request::Discard { session, .. }
            | Request::Continue { session, .. }
            | Request::Interrupt { session, .. }
            | Request::Detach { session, .. } => Some(session),
            Request::Hello { .. }
            | Request::Start { .. }
            | Request::List { .. }
            | Request::All
            | Request::Rows { .. }
            | Request::Stop { .. } => None,
        }
    }

    /// Parses one line, without its trailing newline.
    pub fn parse(line: &str) -> Result<Request, RequestError> {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() {
            return Err(RequestError::Empty);
        }
        let (verb, rest) = line.split_once(' ').unwrap_or((line, ""));
        let malformed = |verb: &'static str, usage: &'static str| RequestError::Malformed {
            verb,
            usage,
            got: sanitize(line),
        };
        match verb {
            "hello" => {
                let usage = "hello chock-control <protocol number>";
                let (name, number) = rest
                    .split_once(' ')
                    .ok_or_else(|| malformed("hello", usage))?;
                let protocol = parse_number(number).ok_or_else(|| malformed("hello", usage))?;
                if name != PROTOCOL_NAME {
                    return Err(malformed("hello", usage));
                }
                Ok(Request::Hello { protocol })
            }
            "start" => {
                let usage = "start <project directory>\\t<message>";
                let (project, message) = rest
                    .split_once('\t')
                    .ok_or_else(|| malformed("start", usage))?;
                if project.is_empty() || message.is_empty() {
                    return Err(malformed("start", usage));
                }
                Ok(Request::Start {
                    project: project.to_owned(),
                    message: message.to_owned(),
                })
            }
            "adopt" => {
                let usage = "adopt <project directory>\\t<session id>";
                let [project, session] = fields(rest).ok_or_else(|| malformed("adopt", usage))?;
                Ok(Request::Adopt {
                    project: project.to_owned(),
                    session: session.to_owned(),
                })
            }
            "read" => {
                let usage = "read <session id> <last event id>";
                let (session, after) = rest
                    .split_once(' ')
                    .ok_or_else(|| malformed("read", usage))?;
                let after = parse_number(after).ok_or_else(|| malformed("read", usage))?;
                if !is_token(session) {
                    return Err(malformed("read", usage));
                }
                Ok(Request::Read {
                    session: session.to_owned(),
                    after,
                })
            }
            "list" => {
                let usage = "list <project directory>";
                if rest.is_empty() || rest.contains('\t') {
                    return Err(malformed("list", usage));
                }
                Ok(Request::List {
                    project: rest.to_owned(),
                })
            }
            "watch" => {
                let usage = "watch <project directory>\\t<session id>\\t<last event id>";
                let [project, session, after] =
                    fields(rest).ok_or_else(|| malformed("watch", usage))?;
                let after = parse_number(after).ok_or_else(|| malformed("watch", usage))?;
                Ok(Request::Watch {
                    project: project.to_owned(),
                    session: session.to_owned(),
                    after,
                })
            }
            "answer" => {
                let usage = "answer <project directory>\\t<session id>\\t<request id>\\t<yes|no>";
                let [project, session, request, answer] =
                    fields(rest).ok_or_else(|| malformed("answer", usage))?;
                let answer = Answer::parse(answer).ok_or_else(|| malformed("answer", usage))?;
                if !is_token(request) {
                    return Err(malformed("answer", usage));
                }
                Ok(Request::Answer {
                    project: project.to_owned(),
                    session: session.to_owned(),
                    request: request.to_owned(),
                    answer,
                })
            }
            "reply" => {
                let usage = "reply <project directory>\\t<session id>\\t<request id>\\t<text>";
                let mut parts = rest.splitn(4, '\t');
                let mut next = || parts.next().filter(|p| !p.is_empty());
                let (Some(project), Some(session), Some(request), Some(text)) =
                    (next(), next(), next(), next())
                else {
                    return Err(malformed("reply", usage));
                };
                if !is_token(request) || !is_token(session) {
                    return Err(malformed("reply", usage));
                }
                Ok(Request::Reply {
                    project: project.to_owned(),
                    session: session.to_owned(),
                    request: request.to_owned(),
                    text: text.to_owned(),
                })
            }
            "diff" => {
                let usage = "diff <project directory>\\t<session id>\\t<byte limit>";
                let [project, session, limit] =
                    fields(rest).ok_or_else(|| malformed("diff", usage))?;
                let limit = parse_number(limit).ok_or_else(|| malformed("diff", usage))?;
                Ok(Request::Diff {
                    project: project.to_owned(),
                    session: session.to_owned(),
                    limit,
                })
            }
            "apply" => {
                let usage = "apply <project directory>\\t<session id>";
                let [project, session] = fields(rest).ok_or_else(|| malformed("apply", usage))?;
                Ok(Request::Apply {
                    project: project.to_owned(),
                    session: session.to_owned(),
                })
            }
            "discard" => {
                let usage = "discard <project directory>\\t<session id>";
                let [project, session] = fields(rest).ok_or_else(|| malformed("discard", usage))?;
                Ok(Request::Discard {
                    project: project.to_owned(),
                    session: session.to_owned(),
                })
            }
            "all" => {
                if line != "all" {
                    return Err(malformed("all", "all"));
                }
                Ok(Request::All)
            }
            "rows" => {
                let usage = "rows <project directory, or nothing for every project>";
                if rest.contains('\t') {
                    return Err(malformed("rows", usage));
                }
                Ok(Request::Rows {
                    project: (!rest.is_empty()).then(|| rest.to_owned()),
                })
            }
            "continue" => {
                let usage = "continue <project directory>\\t<session id>\\t<message>";
                let mut parts = rest.splitn(3, '\t');
                let mut next = || parts.next().filter(|p| !p.is_empty());
                let (Some(project), Some(session), Some(message)) = (next(), next(), next()) else {
                    return Err(malformed("continue", usage));
                };
                if !is_token(session) {
                    return Err(malformed("continue", usage));
                }
                Ok(Request::Continue {
                    project: project.to_owned(),
                    session: session.to_owned(),
                    message: message.to_owned(),
                })
            }
            "interrupt" => {
                let usage = "interrupt <project directory>\\t<session id>";
                let [project, session] =
                    fields(rest).ok_or_else(|| malformed("interrupt", usage))?;
                Ok(Request::Interrupt {
                    project: project.to_owned(),
                    session: session.to_owned(),
                })
            }
            "stop" => {
                let usage = "stop <project directory>\\t<who>\\t<reason>";
                let mut parts = rest.splitn(3, '\t');
                let mut next = || parts.next().filter(|p| !p.is_empty());
                let (Some(project), Some(who), Some(reason)) = (next(), next(), next()) else {
                    return Err(malformed("stop", usage));
                };
                Ok(Request::Stop {
                    project: project.to_owned(),
                    who: who.to_owned(),
                    reason: reason.to_owned(),
                })
            }
            "detach" => {
                let usage = "detach <project directory>\\t<session id>";
                let [project, session] = fields(rest).ok_or_else(|| malformed("detach", usage))?;
                Ok(Request::Detach {
                    project: project.to_owned(),
                    session: session.to_owned(),
                })
            }
            other => Err(RequestError::UnknownVerb {
                verb: sanitize(other),
            }),
        }
    }

    /// The request as one line, newline included. Refuses a field holding a
    /// newline rather than sending a request the daemon would cut in two.
    pub fn to_line(&self) -> Result<String, RequestError> {
        let line = match self {
            Request::Hello { protocol } => format!("hello {PROTOCOL_NAME} {protocol}"),
            Request::Start { project, message } => {
                check("project directory", project)?;
                check("message", message)?;
                format!("start {project}\t{message}")
            }
            Request::Adopt { project, session } => {
                check("project directory", project)?;
                check("session id", session)?;
                format!("adopt {project}\t{session}")
            }
            Request::Read { session, after } => {
                check("session id", session)?;
                format!("read {session} {after}")
            }
            Request::List { project } => {
                check("project directory", project)?;
                format!("list {project}")
            }
            Request::Watch {
                project,
                session,
                after,
            } => {
                check("project directory", project)?;
                check("session id", session)?;
                format!("watch {project}\t{session}\t{after}")
            }
            Request::Answer {
                project,
                session,
                request,
                answer,
            } => {
                check("project directory", project)?;
                check("session id", session)?;
                check("request id", request)?;
                format!("answer {project}\t{session}\t{request}\t{answer}")
            }
            Request::Reply {
                project,
                session,
                request,
                text,
            } => {
                check("project directory", project)?;
                check("session id", session)?;
                check("request id", request)?;
                check("reply", text)?;
                format!("reply {project}\t{session}\t{request}\t{text}")
            }
            Request::Diff {
                project,
                session,
                limit,
            } => {
                check("project directory", project)?;
                check("session id", session)?;
                format!("diff {project}\t{session}\t{limit}")
            }
            Request::Apply { project, session } => {
                check("project directory", project)?;
                check("session id", session)?;
                format!("apply {project}\t{session}")
            }
            Request::Discard { project, session } => {
                check("project directory", project)?;
                check("session id", session)?;
                format!("discard {project}\t{session}")
            }
            Request::All => "all".to_owned(),
            Request::Rows { project } => {
                let project = project.as_deref().unwrap_or("");
                check("project directory", project)?;
                format!("rows {project}")
            }
            Request::Continue {
                project,
                session,
                message,
            } => {
                check("project directory", project)?;
                check("session id", session)?;
                check("message", message)?;
                format!("continue {project}\t{session}\t{message}")
            }
            Request::Interrupt { project, session } => {
                check("project directory", project)?;
                check("session id", session)?;
                format!("interrupt {project}\t{session}")
            }
            Request::Stop {
                project,
                who,
                reason,
            } => {
                check("project directory", project)?;
                check("who", who)?;
                check("reason", reason)?;
                format!("stop {project}\t{who}\t{reason}")
            }
            Request::Detach { project, session } => {
                check("project directory", project)?;
                check("session id", session)?;
                format!("detach {project}\t{session}")
            }
        };
        // A tab inside a field, or an empty one, would shift or drop fields:
        // the daemon must read back exactly what the caller meant.
        if Request::parse(&line).as_ref() != Ok(self) {
            return Err(RequestError::Unsendable {
                verb: self.verb(),
                line: sanitize(&line),
            });
        }
        Ok(line + "\n")
    }
}

/// Exactly `N` non-empty tab-separated fields.
fn fields<const N: usize>(rest: &str) -> Option<[&str; N]> {
    let mut out = [""; N];
    let mut parts = rest.split('\t');
    for slot in &mut out {
        let part = parts.next()?;
        if part.is_empty() {
            return None;
        }
        *slot = part;
    }
    parts.next().is_none().then_some(out)
}

/// A decimal number with no sign, no spaces and no leading `+`.
fn parse_number<T: std::str::FromStr>(text: &str) -> Option<T> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// A field that is one word: no spaces, no tabs.
fn is_token(text: &str) -> bool {
    !text.is_empty() && !text.contains([' ', '\t'])
}

fn check(field: &'static str, value: &str) -> Result<(), RequestError> {
    if value.contains(['\n', '\r']) {
        return Err(RequestError::Newline { field });
    }
    Ok(())
}
