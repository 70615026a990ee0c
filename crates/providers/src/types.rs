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
    /// What a reasoning model thought before the assistant message that
    /// follows it (Anthropic's thinking blocks, a Responses API reasoning
    /// item). Sent back as the API requires: Anthropic refuses a tool-use
    /// turn whose thinking was dropped; a Chat Completions server is never
    /// sent it.
    Reasoning(Reasoning),
    /// An image a tool returned (read_image), right after that tool's
    /// result. Each wire format carries it the way its API allows; the log
    /// does not keep it, so a conversation read back from a log has none.
    Image {
        call_id: String,
        media_type: String,
        base64: String,
    },
}

/// Which API a piece of reasoning came from, and so where it may go back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReasoningKind {
    /// An Anthropic `thinking` block: `text` is the thinking, `opaque` its
    /// signature.
    Thinking,
    /// An Anthropic `redacted_thinking` block: `opaque` is its data.
    RedactedThinking,
    /// A Responses API `reasoning` item: `id` is its id, `text` its summary,
    /// `opaque` its `encrypted_content`.
    OpenAiReasoning,
}

impl ReasoningKind {
    /// The name the session log keeps.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Thinking => "thinking",
            Self::RedactedThinking => "redacted_thinking",
            Self::OpenAiReasoning => "reasoning",
        }
    }

    /// The kind a log name stands for; `None` for one this version does not
    /// know.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "thinking" => Some(Self::Thinking),
            "redacted_thinking" => Some(Self::RedactedThinking),
            "reasoning" => Some(Self::OpenAiReasoning),
            _ => None,
        }
    }
}

/// One piece of a model's reasoning, kept verbatim so it can be sent back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reasoning {
    pub kind: ReasoningKind,
    /// What a person may read: the thinking, or its summary.
    pub text: String,
    /// What the API needs back untouched (a signature, redacted data,
    /// encrypted content); empty when there is none.
    pub opaque: String,
    /// The provider's id for it, when it has one.
    pub id: String,
}

/// An output item of a type this version does not know: kept in the log,
/// never sent back to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownItem {
    /// Its `type`.
    pub kind: String,
    /// The item as JSON text.
    pub json: String,
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
/// `input_tokens` is every token of the prompt, cached or not (what the
/// context holds); the cache fields say how many of them were read from
/// the provider's prompt cache and how many were written to it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    #[serde(default)]
    pub cache_read_tokens: u64,
    #[serde(default)]
    pub cache_write_tokens: u64,
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
    /// More thinking, to show folded as it arrives.
    Thinking(String),
    /// A whole piece of reasoning, to keep and send back.
    Reasoning(Reasoning),
    /// An output item of a type this version does not know.
    Unknown(UnknownItem),
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
    /// The reasoning before the answer, in the order it came.
    pub reasoning: Vec<Reasoning>,
    /// Output items this version does not know.
    pub unknown: Vec<UnknownItem>,
    pub usage: Option<Usage>,
    pub stop: StopReason,
}
