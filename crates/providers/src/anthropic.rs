//! The `anthropic` kind: the Messages API. The conversation is regrouped
//! into alternating user and assistant messages of content blocks (tool
//! results travel as `tool_result` blocks of a user message, and
//! consecutive messages of one role are merged, as the API requires). The
//! stream is read event by event: text deltas are handed on at once, a
//! `tool_use` block's `input_json_delta` pieces are joined and handed on at
//! its `content_block_stop`, usage is the input count of `message_start`
//! plus the output count of `message_delta` (with the prompt cache's reads
//! and writes apart). Thinking blocks stream as `thinking_delta` and
//! `signature_delta` pieces and are handed on whole at their stop, so they
//! can be sent back with the tool results as the API requires.
//!
//! Prompt caching puts `cache_control` breakpoints on the last tool, the
//! system prompt and the last block of the conversation.

use std::collections::{BTreeMap, VecDeque};

use serde::Deserialize;
use serde_json::{Value, json};

use super::config::WireOptions;
use super::error::ProviderError;
use super::http::SseEvent;
use super::openai::{Flow, end_turn, parse, remote};
use super::types::{
    Message, ModelRequest, Reasoning, ReasoningKind, StopReason, StreamEvent, ToolCall, Usage,
};

/// The API version this module speaks, sent as `anthropic-version`.
pub(crate) const API_VERSION: &str = "2023-06-01";

/// Output tokens asked for when config.zon names no `.max_tokens`; the API
/// requires a number.
pub(crate) const DEFAULT_MAX_TOKENS: u32 = 8192;

/// The JSON body for `POST {base_url}/v1/messages`.
pub(crate) fn body(request: &ModelRequest<'_>, options: &WireOptions) -> Value {
    let mut body = count_body(request, options);
    body["max_tokens"] = json!(max_tokens(options));
    body["stream"] = json!(options.stream);
    body
}

/// Output tokens asked for: the configured number, else the default (on
/// top of the thinking budget, which counts against it).
pub(crate) fn max_tokens(options: &WireOptions) -> u32 {
    match (options.max_tokens, options.thinking_budget) {
        (Some(max), _) => max,
        (None, Some(budget)) => budget.saturating_add(DEFAULT_MAX_TOKENS),
        (None, None) => DEFAULT_MAX_TOKENS,
    }
}

/// The body for `POST {base_url}/v1/messages/count_tokens`: the request
/// without what only a generating call takes.
pub(crate) fn count_body(request: &ModelRequest<'_>, options: &WireOptions) -> Value {
    let mut messages: Vec<(&str, Vec<Value>)> = Vec::new();
    for message in request.messages {
        let (role, blocks) = match message {
            Message::Reasoning(reasoning) => match reasoning.kind {
                ReasoningKind::Thinking => (
                    "assistant",
                    vec![
                        json!({"type": "thinking", "thinking": reasoning.text, "signature": reasoning.opaque}),
                    ],
                ),
                ReasoningKind::RedactedThinking => (
                    "assistant",
                    vec![json!({"type": "redacted_thinking", "data": reasoning.opaque})],
                ),
                // Another API's reasoning means nothing here.
                ReasoningKind::OpenAiReasoning => continue,
            },
            Message::User { text } => ("user", vec![json!({"type": "text", "text": text})]),
            Message::Assistant { text, calls } => {
                let mut blocks = Vec::new();
                if !text.is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for call in calls {
                    // The API wants an object; arguments that were not one
                    // were already answered with an error result.
                    let input = serde_json::from_str::<Value>(&call.arguments)
                        .ok()
                        .filter(Value::is_object)
                        .unwrap_or_else(|| json!({}));
                    blocks.push(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}));
                }
                ("assistant", blocks)
            }
            Message::ToolResult {
                call_id,
                content,
                is_error,
                ..
            } => (
                "user",
                vec![
                    json!({"type": "tool_result", "tool_use_id": call_id, "content": content, "is_error": is_error}),
                ],
            ),
            Message::Image {
                call_id,
                media_type,
                base64,
            } => {
                // Inside its tool's result: tool_result blocks must come
                // first in a user message, so an image block of its own
                // between two results would be refused.
                let image = json!({"type": "image", "source": {"type": "base64", "media_type": media_type, "data": base64}});
                let result = messages
                    .last_mut()
                    .filter(|(role, _)| *role == "user")
                    .and_then(|(_, blocks)| {
                        blocks.iter_mut().rev().find(|b| {
                            b["type"] == "tool_result" && b["tool_use_id"] == call_id.as_str()
                        })
                    });
                match result {
                    Some(result) => {
                        let text = result["content"].take();
                        result["content"] = json!([{"type": "text", "text": text}, image]);
                        continue;
                    }
                    None => ("user", vec![image]),
                }
            }
        };
        if blocks.is_empty() {
            continue;
        }
        match messages.last_mut() {
            Some((last, existing)) if *last == role => existing.extend(blocks),
            _ => messages.push((role, blocks)),
        }
    }
    let mut messages: Vec<Value> = messages
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();
    let mut tools: Vec<Value> = request
        .tools
        .iter()
        .map(|tool| json!({"name": tool.name, "description": tool.description, "input_schema": tool.parameters}))
        .collect();
    let mut system = json!([{"type": "text", "text": request.system}]);
    if options.prompt_cache {
        // Three breakpoints of the four allowed: the tools, the system
        // prompt, and the end of the conversation, which moves forward with
        // every call; the cache finds the longest prefix an earlier call
        // wrote, so each call reads what the one before it wrote.
        if let Some(last) = tools.last_mut() {
            last["cache_control"] = ephemeral();
        }
        system[0]["cache_control"] = ephemeral();
        if let Some(block) = messages.last_mut().and_then(|m| {
            m["content"].as_array_mut().and_then(|blocks| {
                blocks
                    .iter_mut()
                    .rev()
                    .find(|b| !matches!(b["type"].as_str(), Some("thinking" | "redacted_thinking")))
            })
        }) {
            block["cache_control"] = ephemeral();
        }
    }
    let mut body = json!({
        "model": request.model,
        "messages": messages,
    });
    if !request.system.is_empty() {
        body["system"] = system;
    }
    if !tools.is_empty() {
        body["tools"] = Value::Array(std::mem::take(&mut tools));
    }
    if let Some(budget) = options.thinking_budget {
        body["thinking"] = json!({"type": "enabled", "budget_tokens": budget});
    }
    body
}

fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

/// The answer of `count_tokens`.
#[derive(Debug, Deserialize)]
pub(crate) struct Counted {
    pub(crate) input_tokens: u64,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type")]
enum Event {
    #[serde(rename = "message_start")]
    MessageStart { message: StartMessage },
    #[serde(rename = "content_block_start")]
    BlockStart { index: usize, content_block: Block },
    #[serde(rename = "content_block_delta")]
    BlockDelta { index: usize, delta: BlockDelta },
    #[serde(rename = "content_block_stop")]
    BlockStop { index: usize },
    #[serde(rename = "message_delta")]
    MessageDelta {
        delta: MessageDeltaBody,
        #[serde(default)]
        usage: Option<WireUsage>,
    },
    #[serde(rename = "message_stop")]
    MessageStop,
    #[serde(rename = "ping")]
    Ping,
    #[serde(rename = "error")]
    Error { error: Value },
    #[serde(other)]
    Unknown,
}

#[derive(Debug, Deserialize)]
struct StartMessage {
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type")]
enum Block {
    #[serde(rename = "tool_use")]
    ToolUse { id: String, name: String },
    #[serde(rename = "thinking")]
    Thinking {
        #[serde(default)]
        thinking: String,
    },
    #[serde(rename = "redacted_thinking")]
    RedactedThinking { data: String },
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type")]
enum BlockDelta {
    #[serde(rename = "text_delta")]
    Text { text: String },
    #[serde(rename = "input_json_delta")]
    InputJson { partial_json: String },
    #[serde(rename = "thinking_delta")]
    Thinking { thinking: String },
    #[serde(rename = "signature_delta")]
    Signature { signature: String },
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize)]
struct MessageDeltaBody {
    #[serde(default)]
    stop_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct WireUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    cache_creation_input_tokens: u64,
    #[serde(default)]
    cache_read_input_tokens: u64,
}

fn stop_reason(reason: &str) -> StopReason {
    match reason {
        "end_turn" | "stop_sequence" => StopReason::EndTurn,
        "tool_use" => StopReason::ToolUse,
        "max_tokens" => StopReason::MaxTokens,
        other => StopReason::Other(other.to_owned()),
    }
}

impl WireUsage {
    fn usage(&self) -> Usage {
        Usage {
            // Cached prompt tokens are still tokens of the context.
            input_tokens: self.input_tokens
                + self.cache_creation_input_tokens
                + self.cache_read_input_tokens,
            output_tokens: self.output_tokens,
            cache_read_tokens: self.cache_read_input_tokens,
            cache_write_tokens: self.cache_creation_input_tokens,
        }
    }
}

/// Assembles a streamed turn.
#[derive(Debug, Default)]
pub(crate) struct StreamState {
    calls: BTreeMap<usize, ToolCall>,
    thinking: BTreeMap<usize, Reasoning>,
    usage: Usage,
    stop: Option<StopReason>,
}

impl StreamState {
    pub(crate) fn feed(
        &mut self,
        instance: &str,
        event: &SseEvent,
        out: &mut VecDeque<StreamEvent>,
    ) -> Result<Flow, ProviderError> {
        match parse::<Event>(instance, &event.data)? {
            Event::MessageStart { message } => {
                if let Some(usage) = message.usage {
                    let output = self.usage.output_tokens;
                    self.usage = usage.usage();
                    self.usage.output_tokens = output;
                }
            }
            Event::BlockStart {
                index,
                content_block: Block::ToolUse { id, name },
            } => {
                self.calls.insert(
                    index,
                    ToolCall {
                        id,
                        name,
                        arguments: String::new(),
                    },
                );
            }
            Event::BlockStart {
                index,
                content_block: Block::Thinking { thinking },
            } => {
                if !thinking.is_empty() {
                    out.push_back(StreamEvent::Thinking(thinking.clone()));
                }
                self.thinking.insert(
                    index,
                    reasoning(ReasoningKind::Thinking, thinking, String::new()),
                );
            }
            Event::BlockStart {
                index,
                content_block: Block::RedactedThinking { data },
            } => {
                self.thinking.insert(
                    index,
                    reasoning(ReasoningKind::RedactedThinking, String::new(), data),
                );
            }
            Event::BlockStart { .. } | Event::Ping | Event::Unknown => {}
            Event::BlockDelta { index, delta } => match delta {
                BlockDelta::Text { text } => out.push_back(StreamEvent::Text(text)),
                BlockDelta::InputJson { partial_json } => {
                    if let Some(call) = self.calls.get_mut(&index) {
                        call.arguments.push_str(&partial_json);
                    }
                }
                BlockDelta::Thinking { thinking } => {
                    if let Some(block) = self.thinking.get_mut(&index) {
                        block.text.push_str(&thinking);
                    }
                    out.push_back(StreamEvent::Thinking(thinking));
                }
                BlockDelta::Signature { signature } => {
                    if let Some(block) = self.thinking.get_mut(&index) {
                        block.opaque.push_str(&signature);
                    }
                }
                BlockDelta::Other => {}
            },
            Event::BlockStop { index } => {
                if let Some(block) = self.thinking.remove(&index) {
                    out.push_back(StreamEvent::Reasoning(block));
                }
                if let Some(mut call) = self.calls.remove(&index) {
                    if call.arguments.trim().is_empty() {
                        "{}".clone_into(&mut call.arguments);
                    }
                    out.push_back(StreamEvent::ToolCall(call));
                }
            }
            Event::MessageDelta { delta, usage } => {
                if let Some(reason) = delta.stop_reason {
                    self.stop = Some(stop_reason(&reason));
                }
                if let Some(usage) = usage {
                    self.usage.output_tokens = usage.output_tokens;
                }
            }
            Event::MessageStop => {
                self.finish(instance, out)?;
                return Ok(Flow::Done);
            }
            Event::Error { error } => return Err(remote(instance, &error)),
        }
        Ok(Flow::More)
    }

    /// Called at `message_stop` or at a clean end of the body.
    pub(crate) fn finish(
        &mut self,
        instance: &str,
        out: &mut VecDeque<StreamEvent>,
    ) -> Result<(), ProviderError> {
        if self.stop.is_some() {
            out.push_back(StreamEvent::Usage(self.usage));
        }
        end_turn(
            self.stop.take(),
            instance,
            "message_delta gave a stop_reason",
            out,
        )
    }
}

#[derive(Debug, Deserialize)]
struct WholeMessage {
    #[serde(default)]
    content: Vec<WholeBlock>,
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type")]
enum WholeBlock {
    #[serde(rename = "text")]
    Text { text: String },
    #[serde(rename = "tool_use")]
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    #[serde(rename = "thinking")]
    Thinking {
        #[serde(default)]
        thinking: String,
        #[serde(default)]
        signature: String,
    },
    #[serde(rename = "redacted_thinking")]
    RedactedThinking { data: String },
    #[serde(other)]
    Other,
}

/// A whole `message` object (a request with `stream: false`).
pub(crate) fn whole(instance: &str, body: &str) -> Result<VecDeque<StreamEvent>, ProviderError> {
    let message: WholeMessage = parse(instance, body)?;
    if let Some(error) = message.error {
        return Err(remote(instance, &error));
    }
    let mut out = VecDeque::new();
    for block in message.content {
        match block {
            WholeBlock::Text { text } => out.push_back(StreamEvent::Text(text)),
            WholeBlock::ToolUse { id, name, input } => {
                // A string input is what the model wrote when it was not an
                // object; keep its text so the tool layer can report it.
                let arguments = match input {
                    Value::String(text) => text,
                    other => other.to_string(),
                };
                out.push_back(StreamEvent::ToolCall(ToolCall {
                    id,
                    name,
                    arguments,
                }));
            }
            WholeBlock::Thinking {
                thinking,
                signature,
            } => out.push_back(StreamEvent::Reasoning(reasoning(
                ReasoningKind::Thinking,
                thinking,
                signature,
            ))),
            WholeBlock::RedactedThinking { data } => out.push_back(StreamEvent::Reasoning(
                reasoning(ReasoningKind::RedactedThinking, String::new(), data),
            )),
            WholeBlock::Other => {}
        }
    }
    out.push_back(StreamEvent::Usage(
        message.usage.unwrap_or_default().usage(),
    ));
    let Some(reason) = message.stop_reason else {
        return Err(ProviderError::Malformed {
            instance: instance.to_owned(),
            detail: "the message has no stop_reason".to_owned(),
            excerpt: super::error::excerpt(body),
        });
    };
    out.push_back(StreamEvent::Stop(stop_reason(&reason)));
    Ok(out)
}

fn reasoning(kind: ReasoningKind, text: String, opaque: String) -> Reasoning {
    Reasoning {
        kind,
        text,
        opaque,
        id: String::new(),
    }
}
