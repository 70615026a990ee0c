//! A session log the test writes while it runs, as `chock run` would.

use std::path::Path;

use chock_log::event::SessionOpen;
use chock_log::{Event, LogWriter, SessionId, StateDir};

/// A log this test owns, written by the real log writer: an exclusive
/// flock, ids from 1, one write per event. It opens with a `session.open`
/// of model `fake`; dropping it lets go of the lock without an ending, as
/// a process that dies does.
#[derive(Debug)]
pub struct LiveLog {
    writer: LogWriter,
}

impl LiveLog {
    /// Creates the log of session `id` (a valid session id) in the state
    /// directory `state`, for the project directory `project`.
    pub fn create(state: &Path, id: &str, project: &str) -> LiveLog {
        let id = session_id(id);
        let writer = LogWriter::create(&StateDir::at(state), &id)
            .unwrap_or_else(|err| panic!("cannot create the log of {id}: {err}"));
        LiveLog::opened(writer, &id, project)
    }

    /// Takes over a log another owner let go of, as `chock run --adopt`
    /// does: locks it, carries on its ids, and appends a new
    /// `session.open`.
    pub fn adopt(state: &Path, id: &str, project: &str) -> LiveLog {
        let id = session_id(id);
        let writer = LogWriter::open(StateDir::at(state).log_path(&id))
            .unwrap_or_else(|err| panic!("cannot adopt the log of {id}: {err}"));
        LiveLog::opened(writer, &id, project)
    }

    fn opened(mut writer: LogWriter, id: &SessionId, project: &str) -> LiveLog {
        writer
            .append(SessionOpen {
                session_id: id.clone(),
                project: project.into(),
                model: "fake".into(),
                pid: std::process::id(),
                chock_version: "test".into(),
                parent: None,
            })
            .unwrap_or_else(|err| panic!("cannot append session.open: {err}"));
        LiveLog { writer }
    }

    /// Appends one event of type `kind` with the given JSON fields
    /// (`"a":1,"b":2`, or nothing); returns its id.
    pub fn append(&mut self, kind: &str, fields: &str) -> u64 {
        let comma = if fields.is_empty() { "" } else { "," };
        let line =
            format!(r#"{{"id":1,"at":"2026-11-29T19:00:00Z","type":"{kind}"{comma}{fields}}}"#);
        let event = Event::parse(line.as_bytes())
            .unwrap_or_else(|err| panic!("not an event: {line}: {err}"));
        self.writer
            .append(event.body)
            .unwrap_or_else(|err| panic!("cannot append {line}: {err}"))
            .id
            .0
    }

    /// Appends a `user.message` saying `text`; returns its id.
    pub fn say(&mut self, text: &str) -> u64 {
        let text = serde_json::Value::from(text);
        self.append("user.message", &format!(r#""text":{text}"#))
    }

    /// Ends the session (`done`) and lets go of the log; returns the
    /// ending's id.
    pub fn end(mut self) -> u64 {
        self.append("session.end", r#""reason":"done","detail":"finished""#)
    }
}

fn session_id(id: &str) -> SessionId {
    SessionId::parse(id).unwrap_or_else(|err| panic!("{id:?} is not a session id: {err}"))
}
