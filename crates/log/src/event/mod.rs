//! The wire format of one log line: the envelope (`id`, `at`, `type`) and
//! the body of each event type, flat in one JSON object.
//!
//! Why the envelope is (de)serialised by hand: serde's internally tagged
//! enums cannot carry sibling fields (`id`, `at`) without `flatten`, which the
//! style rules forbid in wire types because it buffers every event into an
//! intermediate tree, loses `deny`/default behaviour and costs the fold half
//! its speed. Instead [`Event::to_line`] writes `id`, `at` and `type` first
//! and then splices in the body struct's own fields, and the `Deserialize`
//! impl reads the envelope keys, then hands the rest of the same JSON map
//! straight to the body struct named by `type` (with `id`/`at` filtered out
//! wherever they appear). Only a line whose `type` comes after a body field
//! (never written by Chock) takes a slower path through `serde_json::Map`.
//!
//! An event whose `type` this version does not know is kept as
//! [`EventBody::Unknown`] with all its fields, and every reader also keeps
//! the raw line ([`RawEvent`]) so serving a log never drops what a newer
//! writer added.

mod de;
mod types;

use serde_json::{Map, Value};

pub use types::*;

use crate::id::EventId;
use crate::time::Timestamp;

macro_rules! event_types {
    ($( $(#[$doc:meta])* $variant:ident($ty:ty) = $name:literal, durable: $durable:literal; )*) => {
        /// The body of an event: its type and that type's own fields.
        #[derive(Clone, Debug, PartialEq)]
        pub enum EventBody {
            $( $(#[$doc])* $variant($ty), )*
            /// A type this version does not know, kept whole.
            Unknown {
                /// The `type` as written.
                type_name: String,
                /// Every field but `id`, `at` and `type`.
                fields: Map<String, Value>,
            },
        }

        /// Every event type this version knows, as the log spells them.
        pub const KNOWN_TYPES: &[&str] = &[$($name),*];

        impl EventBody {
            /// The `type` as the log spells it.
            pub fn type_name(&self) -> &str {
                match self {
                    $( EventBody::$variant(_) => $name, )*
                    EventBody::Unknown { type_name, .. } => type_name,
                }
            }

            /// Whether the writer fsyncs this event before `append` returns.
            pub fn is_durable(&self) -> bool {
                match self {
                    $( EventBody::$variant(_) => $durable, )*
                    EventBody::Unknown { .. } => false,
                }
            }

            fn write_fields(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
                match self {
                    $( EventBody::$variant(body) => serde_json::to_writer(out, body), )*
                    EventBody::Unknown { fields, .. } => {
                        use serde::ser::{SerializeMap as _, Serializer as _};
                        let mut ser = serde_json::Serializer::new(out);
                        let mut map = ser.serialize_map(None)?;
                        for (key, value) in fields {
                            if !matches!(key.as_str(), "id" | "at" | "type") {
                                map.serialize_entry(key, value)?;
                            }
                        }
                        map.end()
                    }
                }
            }

            /// Deserialise the body of an event of type `type_name` from a
            /// map that holds its fields.
            pub(crate) fn deserialize_as<'de, D: serde::Deserializer<'de>>(
                type_name: &str,
                fields: D,
            ) -> Result<EventBody, D::Error> {
                use serde::Deserialize as _;
                match type_name {
                    $( $name => <$ty>::deserialize(fields).map(EventBody::$variant), )*
                    other => Ok(EventBody::Unknown {
                        type_name: other.to_owned(),
                        fields: Map::deserialize(fields)?,
                    }),
                }
            }
        }

        $(
            impl From<$ty> for EventBody {
                fn from(body: $ty) -> EventBody {
                    EventBody::$variant(body)
                }
            }
        )*
    };
}

event_types! {
    /// `session.open`
    SessionOpen(SessionOpen) = "session.open", durable: true;
    /// `user.message`
    UserMessage(UserMessage) = "user.message", durable: false;
    /// `assistant.message`
    AssistantMessage(AssistantMessage) = "assistant.message", durable: false;
    /// `tool.call`
    ToolCall(ToolCallEvent) = "tool.call", durable: false;
    /// `decision`
    Decision(Decision) = "decision", durable: false;
    /// `approval.request`
    ApprovalRequest(ApprovalRequest) = "approval.request", durable: true;
    /// `approval.answer`
    ApprovalAnswer(ApprovalAnswer) = "approval.answer", durable: true;
    /// `review`
    Review(Review) = "review", durable: true;
    /// `promise`
    Promise(Promise) = "promise", durable: true;
    /// `promise.release`
    PromiseRelease(PromiseRelease) = "promise.release", durable: true;
    /// `grant`
    Grant(Grant) = "grant", durable: true;
    /// `tool.result`
    ToolResult(ToolResult) = "tool.result", durable: false;
    /// `plan.update`
    PlanUpdate(PlanUpdate) = "plan.update", durable: false;
    /// `title.set`
    TitleSet(TitleSet) = "title.set", durable: false;
    /// `compaction`
    Compaction(Compaction) = "compaction", durable: true;
    /// `workspace.open`
    WorkspaceOpen(WorkspaceOpen) = "workspace.open", durable: true;
    /// `workspace.apply`
    WorkspaceApply(WorkspaceApply) = "workspace.apply", durable: true;
    /// `background.start`
    BackgroundStart(BackgroundStart) = "background.start", durable: true;
    /// `background.end`
    BackgroundEnd(BackgroundEnd) = "background.end", durable: true;
    /// `subagent.end`
    SubagentEnd(SubagentEnd) = "subagent.end", durable: true;
    /// `handover`
    Handover(Handover) = "handover", durable: true;
    /// `notice`
    Notice(Notice) = "notice", durable: false;
    /// `turn.end`
    TurnEnd(TurnEnd) = "turn.end", durable: true;
    /// `session.end`
    SessionEnd(SessionEnd) = "session.end", durable: true;
}

/// One event: its number, when it was written, and what it says.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// Its number in the session, from 1.
    pub id: EventId,
    /// When the writer appended it.
    pub at: Timestamp,
    /// Its type and fields.
    pub body: EventBody,
}

/// An event as a reader found it: its id and its line exactly as stored
/// (without the newline), so a server can pass it on unchanged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawEvent {
    /// The event's id.
    pub id: EventId,
    /// The line as stored.
    pub line: String,
}

impl RawEvent {
    /// Parse the line into an [`Event`].
    pub fn parse(&self) -> serde_json::Result<Event> {
        Event::parse(self.line.as_bytes())
    }
}

/// How much of an event's body [`Event::parse_reading`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reading {
    /// Every field, as [`Event::parse`] does.
    Whole,
    /// Only the envelope (`id`, `at`): the body comes back as an `Unknown`
    /// body with no type name and no fields.
    Envelope,
    /// Of an `assistant.message`, only what the call cost (`usage`,
    /// `model`): its text, tool calls and reasoning come back empty. Any
    /// other type is read whole.
    Cost,
}

impl Event {
    /// Parse one line (without its newline).
    pub fn parse(line: &[u8]) -> serde_json::Result<Event> {
        serde_json::from_slice(line)
    }

    /// Parse one line, reading as much of its body as `reading` asks for,
    /// given the event's type and its id (`None` when the line puts `id`
    /// after `type`, as no line Chock writes does). A body read less than
    /// whole is still scanned as JSON, so a line that is not JSON is an
    /// error; but a body that is JSON with the wrong fields for its type is
    /// not, as it is for [`Event::parse`].
    pub fn parse_reading(
        line: &[u8],
        reading: &dyn Fn(&str, Option<EventId>) -> Reading,
    ) -> serde_json::Result<Event> {
        use serde::Deserializer as _;
        let mut de = serde_json::Deserializer::from_slice(line);
        let event = (&mut de).deserialize_map(de::EventVisitor { reading })?;
        de.end()?;
        Ok(event)
    }

    /// The event as one line of JSON, newline included: `id`, `at` and
    /// `type` first, then the body's fields.
    pub fn to_line(&self) -> serde_json::Result<Vec<u8>> {
        let mut out = Vec::with_capacity(160);
        self.write_line(&mut out)?;
        Ok(out)
    }

    /// Append the event's line (newline included) to `out`.
    pub fn write_line(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        use std::io::Write as _;
        // Writing into a Vec cannot fail; `map_err` keeps clippy and the
        // signature honest without an unwrap.
        write!(
            out,
            "{{\"id\":{},\"at\":\"{}\",\"type\":",
            self.id.0, self.at
        )
        .map_err(serde_json::Error::io)?;
        serde_json::to_writer(&mut *out, self.body.type_name())?;
        let start = out.len();
        self.body.write_fields(out)?;
        // The body is an object `{...}`: turn its `{` into the `,` that joins
        // it to the envelope, or drop it when the body has no fields.
        if out.len() == start + 2 {
            out.truncate(start);
            out.push(b'}');
        } else {
            out[start] = b',';
        }
        out.push(b'\n');
        Ok(())
    }
}

#[cfg(test)]
mod tests;
