//! Replies: what the daemon writes back, and how a client reads it.
//!
//! Every reply line either begins `ok `, begins `error `, is a session row
//! (`<started at>\t<row as JSON>`, from `list`, `all` and `rows`) or is an
//! event exactly as the log holds it (from `read` and `watch`). An event is
//! a JSON object and a row starts with a timestamp, so the `error ` prefix
//! can never be mistaken for either. A connection carries one verb; its end is the end of the reply.

use serde::Deserialize;

use crate::{PROTOCOL, PROTOCOL_NAME};

/// One reply line, as the daemon formats it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// `ok chock-control <n>`: the greeting matched.
    Greeting,
    /// The client's number differs; names both numbers, then the connection closes.
    Mismatch { client: u32 },
    /// The first line was not a greeting; `got` is what it was.
    NoGreeting { got: String },
    /// `ok <session id>\t<log path>`: the reply to `start`, `adopt` and
    /// `continue`.
    Started { session: String, log: String },
    /// `ok answered`: the session's own socket took the answer.
    Answered,
    /// `ok interrupted`: the process holding the session's log got SIGINT.
    Interrupted,
    /// `ok <sentence>`: the stop was written; the sentence is the one
    /// `chock stop` prints (`stopped every agent in <repo>: <reason>`).
    Stopped(String),
    /// `ok <session id>\t<row as JSON>`: the first line of a `watch`.
    WatchHeader { session: String, row: String },
    /// `<started at>\t<row as JSON>`: one line of `list`.
    Row { started_at: String, row: String },
    /// An event line exactly as the log holds it.
    Event(String),
    /// `error <message>`: the request failed; the connection closes after it.
    Error(String),
    // The workspace and row-feed verbs' own lines.
    /// `ok <JSON object>`: the reply to `diff`.
    Diff(String),
    /// `ok <sentence>`: what `apply` or `discard` did.
    Done(String),
    /// `ok live`: a `rows` feed has sent every row and now sends changes.
    Live,
}

impl Reply {
    /// The reply as one line, newline included. Messages are flattened to one
    /// line so that a reply can never be read as two.
    pub fn to_line(&self) -> String {
        let mut line = match self {
            Reply::Greeting => format!("ok {PROTOCOL_NAME} {PROTOCOL}"),
            Reply::Mismatch { client } => format!(
                "error {PROTOCOL_NAME} {PROTOCOL}\tprotocol mismatch: this daemon speaks \
                 {PROTOCOL_NAME} {PROTOCOL} and the client {PROTOCOL_NAME} {client}; \
                 update the older of the two"
            ),
            Reply::NoGreeting { got } => format!(
                "error no greeting: a connection opens with 'hello {PROTOCOL_NAME} <n>' \
                 (this daemon speaks {PROTOCOL_NAME} {PROTOCOL}), not with '{}'; \
                 update the client",
                sanitize(got)
            ),
            Reply::Started { session, log } => format!("ok {session}\t{}", one_line(log)),
            Reply::Answered => "ok answered".to_owned(),
            Reply::Interrupted => "ok interrupted".to_owned(),
            Reply::Stopped(sentence) => format!("ok {}", one_line(sentence)),
            Reply::WatchHeader { session, row } => format!("ok {session}\t{}", one_line(row)),
            Reply::Row { started_at, row } => {
                format!("{}\t{}", one_line(started_at), one_line(row))
            }
            Reply::Event(event) => one_line(event),
            Reply::Error(message) => format!("error {}", one_line(message)),
            Reply::Diff(json) => format!("ok {}", one_line(json)),
            Reply::Done(sentence) => format!("ok {}", one_line(sentence)),
            Reply::Live => "ok live".to_owned(),
        };
        line.push('\n');
        line
    }
}

/// One event line of `read` or `watch`: its id, and the line as the log has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventLine {
    pub id: u64,
    pub line: String,
}

#[derive(Deserialize)]
struct IdOnly {
    id: u64,
}

impl EventLine {
    /// Reads the id out of an event line; every other field is the caller's.
    pub fn parse(line: &str) -> Option<EventLine> {
        let IdOnly { id } = serde_json::from_str(line).ok()?;
        Some(EventLine {
            id,
            line: line.to_owned(),
        })
    }
}

/// One line of `list`: when the session started, and its row. The row is
/// kept as the JSON text the daemon sent, checked to be one object, so a
/// client can read it into its own type (every row field has a default and
/// an unknown one is ignored, so rows grow without a new protocol number)
/// and a client that only passes rows on, as `chock serve` does, passes the
/// text without reading it into values and writing them out again.
#[derive(Debug, Clone)]
pub struct RowLine {
    pub started_at: String,
    pub row: Box<serde_json::value::RawValue>,
}

impl PartialEq for RowLine {
    fn eq(&self, other: &RowLine) -> bool {
        self.started_at == other.started_at && self.row.get() == other.row.get()
    }
}

impl RowLine {
    /// The row as a [`crate::SessionRow`]: unknown fields dropped, missing
    /// ones defaulted.
    pub fn session_row(&self) -> Result<crate::SessionRow, serde_json::Error> {
        serde_json::from_str(self.row.get())
    }

    /// The row read into a JSON value, to look at fields no type names.
    pub fn value(&self) -> serde_json::Value {
        // The text parsed as JSON when the line was read.
        serde_json::from_str(self.row.get()).unwrap_or_default()
    }

    pub fn parse(line: &str) -> Option<RowLine> {
        let (started_at, row) = line.split_once('\t')?;
        let row: Box<serde_json::value::RawValue> = serde_json::from_str(row).ok()?;
        (row.get().starts_with('{') && !started_at.is_empty()).then(|| RowLine {
            started_at: started_at.to_owned(),
            row,
        })
    }
}

/// The message of an `error ` line, or `None` for any other line.
pub(crate) fn error_message(line: &str) -> Option<&str> {
    line.strip_prefix("error ")
}

/// Client text echoed back in an error: control characters shown as `?`,
/// and at most 120 characters so a huge line is not sent back whole.
pub fn sanitize(text: &str) -> String {
    const MAX: usize = 120;
    let mut out: String = text
        .chars()
        .take(MAX)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if text.chars().nth(MAX).is_some() {
        out.push_str("...");
    }
    out
}

fn one_line(text: &str) -> String {
    if text.contains(['\n', '\r']) {
        text.replace(['\n', '\r'], " ")
    } else {
        text.to_owned()
    }
}
