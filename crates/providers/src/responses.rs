//! The `openai_responses` kind: OpenAI's Responses API (`POST
//! {base_url}/responses`), which OpenAI's newer models are served through.
//!
//! The log stays the truth: every call sends the whole conversation as
//! `input` with `store: false`, never a `previous_response_id`, so a
//! session carried on by another process rebuilds its input from the log
//! alone. Reasoning items are asked for with their `encrypted_content`
//! (`include: ["reasoning.encrypted_content"]`) and sent back before the
//! function calls they led to, as the API requires of a stateless caller.
//!
//! The stream is read by event: `response.output_text.delta` and
//! `response.reasoning_summary_text.delta` pieces are handed on at once;
//! whole items arrive in `response.output_item.done` (a function call, a
//! reasoning item, or an item of a type this version does not know, which
//! is handed on as [`StreamEvent::Unknown`] to be kept in the log and never
//! sent back); `response.completed` carries the usage.

use std::collections::VecDeque;

use serde::Deserialize;
use serde_json::{Value, json};

use super::config::WireOptions;
use super::error::{ProviderError, excerpt};
use super::http::SseEvent;
use super::openai::{Flow, parse, remote};
use super::types::{
    Message, ModelRequest, Reasoning, ReasoningKind, StopReason, StreamEvent, ToolCall,
    UnknownItem, Usage,
};

/// The JSON body for `POST {base_url}/responses`.
pub(crate) fn body(request: &ModelRequest<'_>, options: &WireOptions) -> Value {
    let mut input = Vec::with_capacity(request.messages.len());
    // An image goes in a user message, after the run of tool results it
    // belongs to (as for Chat Completions).
    let mut images: Vec<Value> = Vec::new();
    let flush = |images: &mut Vec<Value>, input: &mut Vec<Value>| {
        if !images.is_empty() {
            input.push(
                json!({"type": "message", "role": "user", "content": std::mem::take(images)}),
            );
        }
    };
    for message in request.messages {
        if !matches!(message, Message::ToolResult { .. } | Message::Image { .. }) {
            flush(&mut images, &mut input);
        }
        match message {
            Message::User { text } => {
                input.push(json!({"type": "message", "role": "user", "content": text}));
            }
            Message::Reasoning(reasoning) => {
                if reasoning.kind != ReasoningKind::OpenAiReasoning {
                    continue;
                }
                let summary: Vec<Value> = if reasoning.text.is_empty() {
                    Vec::new()
                } else {
                    vec![json!({"type": "summary_text", "text": reasoning.text})]
                };
                let mut item = json!({"type": "reasoning", "id": reasoning.id, "summary": summary});
                if !reasoning.opaque.is_empty() {
                    item["encrypted_content"] = json!(reasoning.opaque);
                }
                input.push(item);
            }
            Message::Assistant { text, calls } => {
                if !text.is_empty() {
                    input.push(json!({"type": "message", "role": "assistant", "content": text}));
                }
                for call in calls {
                    input.push(json!({
                        "type": "function_call",
                        "call_id": call.id,
                        "name": call.name,
                        "arguments": call.arguments,
                    }));
                }
            }
            Message::ToolResult {
                call_id, content, ..
            } => {
                input.push(
                    json!({"type": "function_call_output", "call_id": call_id, "output": content}),
                );
            }
            Message::Image {
                call_id,
                media_type,
                base64,
            } => {
                images.push(json!({"type": "input_text", "text": format!("The image from tool call {call_id}:")}));
                images.push(json!({"type": "input_image", "detail": "auto", "image_url": format!("data:{media_type};base64,{base64}")}));
            }
        }
    }
    flush(&mut images, &mut input);
    let mut body = json!({
        "model": request.model,
        "input": input,
        "stream": options.stream,
        "store": false,
        "include": ["reasoning.encrypted_content"],
    });
    if !request.system.is_empty() {
        body["instructions"] = json!(request.system);
    }
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                    "strict": false,
                })
            })
            .collect();
    }
    if let Some(max) = options.max_tokens {
        body["max_output_tokens"] = json!(max);
    }
    if let Some(effort) = options.reasoning_effort {
        body["reasoning"] = json!({"effort": effort.as_str(), "summary": "auto"});
    }
    body
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type")]
enum Event {
    #[serde(rename = "response.output_text.delta")]
    TextDelta { delta: String },
    #[serde(rename = "response.reasoning_summary_text.delta")]
    SummaryDelta { delta: String },
    #[serde(rename = "response.output_item.done")]
    ItemDone { item: Value },
    #[serde(rename = "response.completed")]
    Completed { response: WholeResponse },
    #[serde(rename = "response.incomplete")]
    Incomplete { response: WholeResponse },
    #[serde(rename = "response.failed")]
    Failed { response: WholeResponse },
    #[serde(rename = "error")]
    Error {
        #[serde(default)]
        message: Option<String>,
        #[serde(default)]
        code: Option<Value>,
    },
    #[serde(other)]
    Other,
}

#[derive(Debug, Default, Deserialize)]
struct WholeResponse {
    #[serde(default)]
    output: Vec<Value>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    incomplete_details: Option<Value>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
struct WireUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    input_tokens_details: Option<InputDetails>,
}

#[derive(Debug, Default, Deserialize)]
struct InputDetails {
    #[serde(default)]
    cached_tokens: u64,
}

impl WireUsage {
    fn usage(&self) -> Usage {
        Usage {
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            cache_read_tokens: self
                .input_tokens_details
                .as_ref()
                .map_or(0, |details| details.cached_tokens),
            cache_write_tokens: 0,
        }
    }
}

/// Assembles a streamed turn.
#[derive(Debug, Default)]
pub(crate) struct StreamState {
    calls: usize,
    done: bool,
}

impl StreamState {
    pub(crate) fn feed(
        &mut self,
        instance: &str,
        event: &SseEvent,
        out: &mut VecDeque<StreamEvent>,
    ) -> Result<Flow, ProviderError> {
        match parse::<Event>(instance, &event.data)? {
            Event::TextDelta { delta } => out.push_back(StreamEvent::Text(delta)),
            Event::SummaryDelta { delta } => out.push_back(StreamEvent::Thinking(delta)),
            Event::ItemDone { item } => {
                if let Some(event) = item_event(instance, item, false)? {
                    self.calls += usize::from(matches!(event, StreamEvent::ToolCall(_)));
                    out.push_back(event);
                }
            }
            Event::Completed { response } | Event::Incomplete { response } => {
                out.push_back(StreamEvent::Usage(
                    response
                        .usage
                        .as_ref()
                        .map(WireUsage::usage)
                        .unwrap_or_default(),
                ));
                out.push_back(StreamEvent::Stop(stop(&response, self.calls)));
                self.done = true;
                return Ok(Flow::Done);
            }
            Event::Failed { response } => {
                return Err(remote(instance, &response.error.unwrap_or(Value::Null)));
            }
            Event::Error { message, code } => {
                let message = message
                    .or_else(|| code.map(|code| code.to_string()))
                    .unwrap_or_else(|| excerpt(&event.data));
                return Err(remote(instance, &json!({"message": message})));
            }
            Event::Other => {}
        }
        Ok(Flow::More)
    }

    /// At a clean end of the body: whole only if `response.completed` came.
    pub(crate) fn finish(
        &mut self,
        instance: &str,
        _out: &mut VecDeque<StreamEvent>,
    ) -> Result<(), ProviderError> {
        if self.done {
            return Ok(());
        }
        Err(ProviderError::Cut {
            instance: instance.to_owned(),
            detail: "the body ended before response.completed".to_owned(),
        })
    }
}

fn stop(response: &WholeResponse, calls: usize) -> StopReason {
    if let Some(details) = &response.incomplete_details {
        return match details["reason"].as_str() {
            Some("max_output_tokens") => StopReason::MaxTokens,
            Some(other) => StopReason::Other(other.to_owned()),
            None => StopReason::Other("incomplete".to_owned()),
        };
    }
    if calls > 0 {
        StopReason::ToolUse
    } else {
        StopReason::EndTurn
    }
}

/// One whole output item as a stream event; a `message` item's text only
/// when `with_text` (a streamed turn had it as deltas already).
fn item_event(
    instance: &str,
    item: Value,
    with_text: bool,
) -> Result<Option<StreamEvent>, ProviderError> {
    let text = |value: &Value| value.as_str().unwrap_or_default().to_owned();
    Ok(match item["type"].as_str().unwrap_or_default() {
        "message" => {
            if !with_text {
                return Ok(None);
            }
            let said: String = item["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|part| part["type"] == "output_text")
                .filter_map(|part| part["text"].as_str())
                .collect();
            (!said.is_empty()).then_some(StreamEvent::Text(said))
        }
        "function_call" => {
            let (Some(call_id), Some(name)) = (item["call_id"].as_str(), item["name"].as_str())
            else {
                return Err(ProviderError::Malformed {
                    instance: instance.to_owned(),
                    detail: "a function_call item without call_id or name".to_owned(),
                    excerpt: excerpt(&item.to_string()),
                });
            };
            let arguments = match &item["arguments"] {
                Value::String(arguments) if !arguments.trim().is_empty() => arguments.clone(),
                Value::String(_) | Value::Null => "{}".to_owned(),
                other => other.to_string(),
            };
            Some(StreamEvent::ToolCall(ToolCall {
                id: call_id.to_owned(),
                name: name.to_owned(),
                arguments,
            }))
        }
        "reasoning" => {
            let summary: Vec<String> = item["summary"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|part| part["text"].as_str().map(str::to_owned))
                .collect();
            Some(StreamEvent::Reasoning(Reasoning {
                kind: ReasoningKind::OpenAiReasoning,
                text: summary.join("\n\n"),
                opaque: text(&item["encrypted_content"]),
                id: text(&item["id"]),
            }))
        }
        other => Some(StreamEvent::Unknown(UnknownItem {
            kind: other.to_owned(),
            json: item.to_string(),
        })),
    })
}

/// A whole `response` object (a request with `stream: false`).
pub(crate) fn whole(instance: &str, body: &str) -> Result<VecDeque<StreamEvent>, ProviderError> {
    let response: WholeResponse = parse(instance, body)?;
    if let Some(error) = response.error.as_ref().filter(|error| !error.is_null()) {
        return Err(remote(instance, error));
    }
    let mut out = VecDeque::new();
    let mut calls = 0;
    for item in response.output.iter().cloned() {
        if let Some(event) = item_event(instance, item, true)? {
            calls += usize::from(matches!(event, StreamEvent::ToolCall(_)));
            out.push_back(event);
        }
    }
    out.push_back(StreamEvent::Usage(
        response
            .usage
            .as_ref()
            .map(WireUsage::usage)
            .unwrap_or_default(),
    ));
    out.push_back(StreamEvent::Stop(stop(&response, calls)));
    Ok(out)
}
