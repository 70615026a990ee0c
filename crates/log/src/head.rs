//! What a client of a log needs of one event line without reading its
//! body: its id, its type, and the ending it records. The one rule for
//! "this session is over" is here ([`EventHead::ends_session`], from
//! [`EndReason::is_over`]): `chock log --follow`, the daemon's watch and
//! its feed all stop where it says.

use serde::Deserialize;

use crate::event::EndReason;
use crate::id::EventId;

/// The type of the event that ends a run of a session.
const SESSION_END: &str = "session.end";

/// One event's id, type and ending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventHead {
    pub id: EventId,
    /// The event's type, as written.
    pub kind: String,
    /// The reason of a `session.end`.
    pub ending: Option<EndReason>,
}

#[derive(Deserialize)]
struct Envelope {
    id: EventId,
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    reason: Option<serde_json::Value>,
}

impl EventHead {
    /// The head of one event line; `None` when it is not an event.
    pub fn parse(line: &str) -> Option<EventHead> {
        let envelope: Envelope = serde_json::from_str(line).ok()?;
        let ending = match envelope.reason {
            Some(serde_json::Value::String(reason)) if envelope.kind == SESSION_END => {
                Some(EndReason::from_word(&reason))
            }
            _ => None,
        };
        Some(EventHead {
            id: envelope.id,
            kind: envelope.kind,
            ending,
        })
    }

    /// Whether the event ends the session: a `session.end` whose reason is
    /// not a handover (after one, the next owner carries on in this log).
    pub fn ends_session(&self) -> bool {
        self.ending.as_ref().is_some_and(EndReason::is_over)
    }

    /// Whether the event hands the session to another process.
    pub fn is_handover(&self) -> bool {
        self.ending == Some(EndReason::Handover)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_ending_that_is_not_a_handover_ends_the_session() {
        let head = |line: &str| EventHead::parse(line).unwrap();
        let handover = head(r#"{"id":2,"type":"session.end","reason":"handover"}"#);
        assert!(handover.is_handover() && !handover.ends_session());
        let done = head(r#"{"id":3,"type":"session.end","reason":"done"}"#);
        assert!(done.ends_session() && !done.is_handover());
        let future = head(r#"{"id":4,"type":"session.end","reason":"paused"}"#);
        assert_eq!(future.ending, Some(EndReason::Unknown("paused".into())));
        assert!(future.ends_session());
        let other = head(r#"{"id":5,"type":"notice","reason":"done"}"#);
        assert_eq!(other.ending, None);
        assert!(!other.ends_session());
        assert_eq!(EventHead::parse("not json"), None);
    }
}
