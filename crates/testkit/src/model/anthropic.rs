//! A turn in Anthropic Messages form: `message_start` (with the input
//! usage), a `ping`, one text content block (`content_block_start`,
//! `text_delta` pieces, `content_block_stop`), one `tool_use` block per call
//! (its input streamed as `input_json_delta` pieces), `message_delta` with
//! `stop_reason` and the output usage, `message_stop`; or one `message`
//! object when the request did not stream.

use serde_json::{Value, json};

use super::http::Options;
use super::{Turn, pieces};

const ID: &str = "msg_fake";

fn stop_reason(turn: &Turn) -> &'static str {
    turn.why_it_stopped("max_tokens", "end_turn", "tool_use")
}

fn event(name: &str, data: &Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

pub(super) fn frames(turn: &Turn, options: &Options) -> Vec<String> {
    let mut out = vec![event(
        "message_start",
        &json!({
            "type": "message_start",
            "message": {
                "id": ID,
                "type": "message",
                "role": "assistant",
                "model": options.model,
                "content": [],
                "stop_reason": null,
                "stop_sequence": null,
                "usage": usage(turn, 1),
            },
        }),
    )];
    out.push(event("ping", &json!({"type": "ping"})));
    let mut index = 0;
    for (thinking, signature) in &turn.thinking {
        let mut deltas: Vec<Value> = pieces(thinking, turn.piece_len)
            .into_iter()
            .map(|piece| json!({"type": "thinking_delta", "thinking": piece}))
            .collect();
        deltas.push(json!({"type": "signature_delta", "signature": signature}));
        content_block(
            &mut out,
            index,
            &json!({"type": "thinking", "thinking": "", "signature": ""}),
            deltas,
            |delta| delta,
        );
        index += 1;
    }
    if !turn.text.is_empty() {
        content_block(
            &mut out,
            index,
            &json!({"type": "text", "text": ""}),
            pieces(&turn.text, turn.piece_len),
            |piece| json!({"type": "text_delta", "text": piece}),
        );
        index += 1;
    }
    for call in &turn.calls {
        content_block(
            &mut out,
            index,
            &json!({"type": "tool_use", "id": call.id, "name": call.name, "input": {}}),
            pieces(&call.arguments, turn.piece_len),
            |piece| json!({"type": "input_json_delta", "partial_json": piece}),
        );
        index += 1;
    }
    out.push(event(
        "message_delta",
        &json!({"type": "message_delta",
                "delta": {"stop_reason": stop_reason(turn), "stop_sequence": null},
                "usage": {"output_tokens": turn.output_tokens}}),
    ));
    out.push(event("message_stop", &json!({"type": "message_stop"})));
    out
}

/// One streamed content block at `index`: its start with `block`, a
/// `content_block_delta` for each piece as `delta` renders it, its stop.
fn content_block<T>(
    out: &mut Vec<String>,
    index: usize,
    block: &Value,
    pieces: Vec<T>,
    delta: impl Fn(T) -> Value,
) {
    out.push(event(
        "content_block_start",
        &json!({"type": "content_block_start", "index": index, "content_block": block}),
    ));
    for piece in pieces {
        out.push(event(
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": index, "delta": delta(piece)}),
        ));
    }
    out.push(event(
        "content_block_stop",
        &json!({"type": "content_block_stop", "index": index}),
    ));
}

/// The usage object: `input_tokens` is the uncached part, as the API
/// reports it.
fn usage(turn: &Turn, output_tokens: u64) -> Value {
    json!({
        "input_tokens": turn.input_tokens.saturating_sub(turn.cache_read + turn.cache_write),
        "cache_creation_input_tokens": turn.cache_write,
        "cache_read_input_tokens": turn.cache_read,
        "output_tokens": output_tokens,
    })
}

pub(super) fn whole(turn: &Turn, options: &Options) -> Value {
    let mut content = Vec::new();
    for (thinking, signature) in &turn.thinking {
        content.push(json!({"type": "thinking", "thinking": thinking, "signature": signature}));
    }
    if !turn.text.is_empty() {
        content.push(json!({"type": "text", "text": turn.text}));
    }
    for call in &turn.calls {
        // Arguments scripted as invalid JSON travel as a string so the
        // client still sees exactly what was scripted.
        let input = serde_json::from_str::<Value>(&call.arguments)
            .unwrap_or_else(|_| Value::from(call.arguments.clone()));
        content.push(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}));
    }
    json!({
        "id": ID,
        "type": "message",
        "role": "assistant",
        "model": options.model,
        "content": content,
        "stop_reason": stop_reason(turn),
        "stop_sequence": null,
        "usage": usage(turn, turn.output_tokens),
    })
}
