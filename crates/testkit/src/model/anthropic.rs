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
                "usage": {"input_tokens": turn.input_tokens, "output_tokens": 1},
            },
        }),
    )];
    out.push(event("ping", &json!({"type": "ping"})));
    let mut index = 0;
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
fn content_block(
    out: &mut Vec<String>,
    index: usize,
    block: &Value,
    pieces: Vec<String>,
    delta: impl Fn(String) -> Value,
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

pub(super) fn whole(turn: &Turn, options: &Options) -> Value {
    let mut content = Vec::new();
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
        "usage": {"input_tokens": turn.input_tokens, "output_tokens": turn.output_tokens},
    })
}
