//! The `openai` kind: Chat Completions, as OpenAI, Ollama, llama.cpp's
//! server and vLLM speak it. The request asks for a stream with
//! `stream_options.include_usage` so that usage arrives as a last chunk
//! with empty `choices`; tool calls arrive as fragments keyed by `index` and
//! are handed on only once the turn says it is finished, when their
//! arguments are whole. `usage.prompt_tokens_details.cached_tokens`, where
//! a server reports it, is recorded as the prompt tokens read from its
//! cache.

use std::collections::{BTreeMap, VecDeque};

use serde::Deserialize;
use serde_json::{Value, json};

use super::config::WireOptions;
use super::error::{ProviderError, excerpt};
use super::http::SseEvent;
use super::types::{Message, ModelRequest, StopReason, StreamEvent, ToolCall, Usage};

/// Images held back until the tool results are over, as one user message.
fn flush_images(images: &mut Vec<Value>, messages: &mut Vec<Value>) {
    if !images.is_empty() {
        messages.push(json!({"role": "user", "content": std::mem::take(images)}));
    }
}

/// The JSON body for `POST {base_url}/chat/completions`.
///
/// The body is a pure function of the conversation, and a message once sent
/// is rendered the same way in every later call, so consecutive calls of a
/// session share a byte-identical prefix: what automatic prefix caching
/// (OpenAI, vLLM, llama.cpp) depends on.
pub(crate) fn body(request: &ModelRequest<'_>, options: &WireOptions) -> Value {
    let (stream, max_tokens) = (options.stream, options.max_tokens);
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    // Chat Completions takes an image only in a user message, and a user
    // message may not come between an assistant's tool calls and their
    // results: images wait until the run of tool results is over.
    let mut images: Vec<Value> = Vec::new();
    for message in request.messages {
        if !matches!(message, Message::ToolResult { .. } | Message::Image { .. }) {
            flush_images(&mut images, &mut messages);
        }
        messages.push(match message {
            // Chat Completions has no place for reasoning sent back.
            Message::Reasoning(_) => continue,
            Message::User { text } => json!({"role": "user", "content": text}),
            Message::Assistant { text, calls } => {
                let mut out = json!({
                    "role": "assistant",
                    "content": if text.is_empty() { Value::Null } else { Value::from(text.as_str()) },
                });
                if !calls.is_empty() {
                    out["tool_calls"] = calls
                        .iter()
                        .map(|call| {
                            json!({
                                "id": call.id,
                                "type": "function",
                                "function": {"name": call.name, "arguments": call.arguments},
                            })
                        })
                        .collect();
                }
                out
            }
            Message::ToolResult {
                call_id, content, ..
            } => json!({"role": "tool", "tool_call_id": call_id, "content": content}),
            Message::Image {
                call_id,
                media_type,
                base64,
            } => {
                images.push(json!({"type": "text", "text": format!("The image from tool call {call_id}:")}));
                images.push(json!({"type": "image_url", "image_url": {"url": format!("data:{media_type};base64,{base64}")}}));
                continue;
            }
        });
    }
    flush_images(&mut images, &mut messages);
    let mut body = json!({
        "model": request.model,
        "messages": messages,
        "stream": stream,
    });
    if stream {
        body["stream_options"] = json!({"include_usage": true});
    }
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|tool| {
                json!({"type": "function", "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                }})
            })
            .collect();
    }
    if let Some(max_tokens) = max_tokens {
        body["max_tokens"] = json!(max_tokens);
    }
    if let Some(effort) = options.reasoning_effort {
        body["reasoning_effort"] = json!(effort.as_str());
    }
    body
}

#[derive(Debug, Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Option<Vec<Choice>>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct Choice {
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    message: Option<Delta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<CallDelta>>,
}

#[derive(Debug, Deserialize)]
struct CallDelta {
    #[serde(default)]
    index: Option<usize>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionDelta>,
}

#[derive(Debug, Deserialize)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
}

#[derive(Debug, Deserialize)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

fn stop_reason(reason: &str) -> StopReason {
    match reason {
        "stop" => StopReason::EndTurn,
        "tool_calls" | "function_call" => StopReason::ToolUse,
        "length" => StopReason::MaxTokens,
        other => StopReason::Other(other.to_owned()),
    }
}

/// Whether the stream has more to say.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    More,
    Done,
}

/// Ends a streamed turn with the stop reason it gave, or, when none came,
/// with the error for a body that ended before `awaited`.
pub(crate) fn end_turn(
    stop: Option<StopReason>,
    instance: &str,
    awaited: &str,
    out: &mut VecDeque<StreamEvent>,
) -> Result<(), ProviderError> {
    let Some(stop) = stop else {
        return Err(ProviderError::Cut {
            instance: instance.to_owned(),
            detail: format!("the body ended before {awaited}"),
        });
    };
    out.push_back(StreamEvent::Stop(stop));
    Ok(())
}

/// Assembles a streamed turn.
#[derive(Debug, Default)]
pub(crate) struct StreamState {
    calls: BTreeMap<usize, ToolCall>,
    stop: Option<StopReason>,
}

impl StreamState {
    pub(crate) fn feed(
        &mut self,
        instance: &str,
        event: &SseEvent,
        out: &mut VecDeque<StreamEvent>,
    ) -> Result<Flow, ProviderError> {
        if event.data.trim() == "[DONE]" {
            // `[DONE]` is an explicit end: a server that never sent a
            // finish_reason still finished, with or without tool calls.
            if self.stop.is_none() {
                self.stop = Some(if self.calls.is_empty() {
                    StopReason::EndTurn
                } else {
                    StopReason::ToolUse
                });
                self.flush_calls(out);
            }
            self.finish(instance, out)?;
            return Ok(Flow::Done);
        }
        let chunk: Chunk = parse(instance, &event.data)?;
        if let Some(error) = chunk.error {
            return Err(remote(instance, &error));
        }
        for choice in chunk.choices.unwrap_or_default() {
            if let Some(delta) = choice.delta.or(choice.message) {
                self.delta(instance, delta, out)?;
            }
            if let Some(reason) = choice.finish_reason {
                self.stop = Some(stop_reason(&reason));
                self.flush_calls(out);
            }
        }
        if let Some(usage) = chunk.usage {
            out.push_back(StreamEvent::Usage(Usage {
                input_tokens: usage.prompt_tokens,
                output_tokens: usage.completion_tokens,
                cache_read_tokens: usage
                    .prompt_tokens_details
                    .and_then(|details| details.cached_tokens)
                    .unwrap_or(0),
                cache_write_tokens: 0,
            }));
        }
        Ok(Flow::More)
    }

    fn delta(
        &mut self,
        instance: &str,
        delta: Delta,
        out: &mut VecDeque<StreamEvent>,
    ) -> Result<(), ProviderError> {
        if let Some(text) = delta.content.filter(|text| !text.is_empty()) {
            out.push_back(StreamEvent::Text(text));
        }
        for (position, call) in delta.tool_calls.unwrap_or_default().into_iter().enumerate() {
            let index = call.index.unwrap_or(position);
            let entry = self.calls.entry(index).or_insert_with(|| ToolCall {
                id: String::new(),
                name: String::new(),
                arguments: String::new(),
            });
            if let Some(id) = call.id {
                entry.id = id;
            }
            let Some(function) = call.function else {
                continue;
            };
            if let Some(name) = function.name {
                entry.name.push_str(&name);
            }
            match function.arguments {
                None | Some(Value::Null) => {}
                Some(Value::String(piece)) => entry.arguments.push_str(&piece),
                // Some servers send the arguments as an object, not a string.
                Some(Value::Object(object)) => {
                    entry.arguments.push_str(&Value::Object(object).to_string());
                }
                Some(other) => {
                    return Err(ProviderError::Malformed {
                        instance: instance.to_owned(),
                        detail: "tool call arguments are neither a string nor an object".to_owned(),
                        excerpt: excerpt(&other.to_string()),
                    });
                }
            }
        }
        Ok(())
    }

    /// Called at `[DONE]` or at a clean end of the body: the turn is whole
    /// only if a `finish_reason` arrived.
    pub(crate) fn finish(
        &mut self,
        instance: &str,
        out: &mut VecDeque<StreamEvent>,
    ) -> Result<(), ProviderError> {
        end_turn(self.stop.take(), instance, "a finish_reason", out)
    }

    fn flush_calls(&mut self, out: &mut VecDeque<StreamEvent>) {
        for (index, mut call) in std::mem::take(&mut self.calls) {
            if call.id.is_empty() {
                call.id = format!("call_{index}");
            }
            out.push_back(StreamEvent::ToolCall(call));
        }
    }
}

/// A whole `chat.completion` object (a request with `stream: false`).
pub(crate) fn whole(instance: &str, body: &str) -> Result<VecDeque<StreamEvent>, ProviderError> {
    let mut state = StreamState::default();
    let mut out = VecDeque::new();
    let event = SseEvent {
        event: String::new(),
        data: body.to_owned(),
    };
    state.feed(instance, &event, &mut out)?;
    state.finish(instance, &mut out)?;
    Ok(out)
}

pub(crate) fn parse<T: serde::de::DeserializeOwned>(
    instance: &str,
    data: &str,
) -> Result<T, ProviderError> {
    serde_json::from_str(data).map_err(|err| ProviderError::Malformed {
        instance: instance.to_owned(),
        detail: err.to_string(),
        excerpt: excerpt(data),
    })
}

pub(crate) fn remote(instance: &str, error: &Value) -> ProviderError {
    let message = error["message"]
        .as_str()
        .map_or_else(|| excerpt(&error.to_string()), str::to_owned);
    ProviderError::Remote {
        instance: instance.to_owned(),
        message,
    }
}
