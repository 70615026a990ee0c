//! The provider-neutral conversation: what the loop hands a provider and
//! what a provider hands back. Both wire formats are translated to and from
//! these types in their own modules, so the loop never sees a wire detail.

use serde::{Deserialize, Serialize};

/// A tool the model may call, described for the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: serde_json::Value,
}

/// A tool call the model asked for. `arguments` is the JSON text exactly as
/// the model sent it: it may not parse, and the tool layer, not the
/// provider, turns that into an error the model can read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// One message of the conversation sent to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    User {
        text: String,
    },
    Assistant {
        text: String,
        calls: Vec<ToolCall>,
    },
    ToolResult {
        call_id: String,
        name: String,
        content: String,
        is_error: bool,
    },
    /// An image a tool returned (read_image), right after that tool's
    /// result. Each wire format carries it the way its API allows; the log
    /// does not keep it, so a conversation read back from a log has none.
    Image {
        call_id: String,
        media_type: String,
        base64: String,
    },
}

/// Everything one model call needs.
#[derive(Debug, Clone, Copy)]
pub struct ModelRequest<'a> {
    pub model: &'a str,
    pub system: &'a str,
    pub messages: &'a [Message],
    pub tools: &'a [ToolSpec],
}

/// Tokens one model call used, as the provider reported them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    /// It finished its answer.
    EndTurn,
    /// It wants the tool calls it made run.
    ToolUse,
    /// It hit the output token limit.
    MaxTokens,
    /// Anything else the provider said, verbatim.
    Other(String),
}

impl StopReason {
    /// The name written to the session log.
    pub fn as_str(&self) -> &str {
        match self {
            Self::EndTurn => "end_turn",
            Self::ToolUse => "tool_use",
            Self::MaxTokens => "max_tokens",
            Self::Other(other) => other,
        }
    }
}

/// One step of a streamed assistant turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEvent {
    /// More text, to show as it arrives.
    Text(String),
    /// A tool call, complete with its arguments.
    ToolCall(ToolCall),
    /// The call's token usage.
    Usage(Usage),
    /// The turn is over; always the last event.
    Stop(StopReason),
}

/// A whole assistant turn, gathered from its stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssistantTurn {
    pub text: String,
    pub calls: Vec<ToolCall>,
    pub usage: Option<Usage>,
    pub stop: StopReason,
}
