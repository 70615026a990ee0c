//! A turn in OpenAI Chat Completions form: `chat.completion.chunk` events
//! (role first, then `delta.content` pieces, then each tool call as a first
//! delta carrying index, id and name followed by argument pieces, then the
//! `finish_reason`, then a usage chunk with empty `choices` when the request
//! set `stream_options.include_usage`, then `data: [DONE]`), or one
//! `chat.completion` object when the request did not stream.

use serde_json::{Value, json};

use super::http::Options;
use super::{Turn, pieces};

const ID: &str = "chatcmpl-fake";

fn finish_reason(turn: &Turn) -> &'static str {
    turn.why_it_stopped("length", "stop", "tool_calls")
}

fn usage(turn: &Turn) -> Value {
    json!({
        "prompt_tokens": turn.input_tokens,
        "completion_tokens": turn.output_tokens,
        "total_tokens": turn.input_tokens + turn.output_tokens,
        "prompt_tokens_details": {"cached_tokens": turn.cache_read},
    })
}

fn chunk(options: &Options, delta: Value, finish: Option<&str>) -> String {
    let body = json!({
        "id": ID,
        "object": "chat.completion.chunk",
        "created": 0,
        "model": options.model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    });
    format!("data: {body}\n\n")
}

pub(super) fn frames(turn: &Turn, options: &Options) -> Vec<String> {
    let mut out = vec![chunk(
        options,
        json!({"role": "assistant", "content": ""}),
        None,
    )];
    for piece in pieces(&turn.text, turn.piece_len) {
        out.push(chunk(options, json!({"content": piece}), None));
    }
    for (index, call) in turn.calls.iter().enumerate() {
        out.push(chunk(
            options,
            json!({"tool_calls": [{
                "index": index,
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": ""},
            }]}),
            None,
        ));
        for piece in pieces(&call.arguments, turn.piece_len) {
            out.push(chunk(
                options,
                json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                None,
            ));
        }
    }
    out.push(chunk(options, json!({}), Some(finish_reason(turn))));
    if options.include_usage {
        let body = json!({
            "id": ID,
            "object": "chat.completion.chunk",
            "created": 0,
            "model": options.model,
            "choices": [],
            "usage": usage(turn),
        });
        out.push(format!("data: {body}\n\n"));
    }
    out.push("data: [DONE]\n\n".to_owned());
    out
}

pub(super) fn whole(turn: &Turn, options: &Options) -> Value {
    let mut message = json!({
        "role": "assistant",
        "content": if turn.text.is_empty() { Value::Null } else { Value::from(turn.text.clone()) },
    });
    if !turn.calls.is_empty() {
        message["tool_calls"] = turn
            .calls
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
    json!({
        "id": ID,
        "object": "chat.completion",
        "created": 0,
        "model": options.model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason(turn)}],
        "usage": usage(turn),
    })
}
