//! A turn in OpenAI Responses API form: `response.created`, then each
//! reasoning item (`response.output_item.added`, summary text deltas,
//! `response.output_item.done` with its `encrypted_content`), any extra
//! items as given, the message (`response.output_text.delta` pieces), each
//! function call (`response.function_call_arguments.delta` pieces and its
//! whole item), and `response.completed` with the usage; or one `response`
//! object when the request did not stream.

use serde_json::{Value, json};

use super::http::Options;
use super::{Turn, pieces};

const ID: &str = "resp_fake";

fn event(name: &str, mut data: Value, sequence: &mut u64) -> String {
    data["type"] = json!(name);
    data["sequence_number"] = json!(*sequence);
    *sequence += 1;
    format!("event: {name}\ndata: {data}\n\n")
}

fn usage(turn: &Turn) -> Value {
    json!({
        "input_tokens": turn.input_tokens,
        "input_tokens_details": {"cached_tokens": turn.cache_read},
        "output_tokens": turn.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": turn.input_tokens + turn.output_tokens,
    })
}

/// The turn's output items, whole, in order.
fn items(turn: &Turn) -> Vec<Value> {
    let mut out = Vec::new();
    for (id, summary, encrypted) in &turn.reasoning {
        out.push(json!({
            "type": "reasoning",
            "id": id,
            "summary": [{"type": "summary_text", "text": summary}],
            "encrypted_content": encrypted,
        }));
    }
    out.extend(turn.extra_items.iter().cloned());
    if !turn.text.is_empty() {
        out.push(json!({
            "type": "message",
            "id": "msg_fake",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": turn.text, "annotations": []}],
        }));
    }
    for call in &turn.calls {
        out.push(json!({
            "type": "function_call",
            "id": format!("fc_{}", call.id),
            "call_id": call.id,
            "name": call.name,
            "arguments": call.arguments,
            "status": "completed",
        }));
    }
    out
}

fn response(turn: &Turn, options: &Options, status: &str, output: Vec<Value>) -> Value {
    let mut response = json!({
        "id": ID,
        "object": "response",
        "created_at": 0,
        "model": options.model,
        "status": status,
        "output": output,
        "usage": usage(turn),
    });
    if turn.truncated {
        response["status"] = json!("incomplete");
        response["incomplete_details"] = json!({"reason": "max_output_tokens"});
    }
    response
}

pub(super) fn frames(turn: &Turn, options: &Options) -> Vec<String> {
    let mut sequence = 0;
    let mut out = vec![event(
        "response.created",
        json!({"response": response(turn, options, "in_progress", Vec::new())}),
        &mut sequence,
    )];
    for (index, item) in items(turn).into_iter().enumerate() {
        let mut added = item.clone();
        match item["type"].as_str() {
            Some("message") => added["content"] = json!([]),
            Some("function_call") => added["arguments"] = json!(""),
            Some("reasoning") => added["summary"] = json!([]),
            _ => {}
        }
        out.push(event(
            "response.output_item.added",
            json!({"output_index": index, "item": added}),
            &mut sequence,
        ));
        let item_id = item["id"].clone();
        match item["type"].as_str() {
            Some("message") => {
                for piece in pieces(&turn.text, turn.piece_len) {
                    out.push(event(
                        "response.output_text.delta",
                        json!({"output_index": index, "item_id": item_id, "content_index": 0, "delta": piece}),
                        &mut sequence,
                    ));
                }
            }
            Some("function_call") => {
                let arguments = item["arguments"].as_str().unwrap_or_default().to_owned();
                for piece in pieces(&arguments, turn.piece_len) {
                    out.push(event(
                        "response.function_call_arguments.delta",
                        json!({"output_index": index, "item_id": item_id, "delta": piece}),
                        &mut sequence,
                    ));
                }
            }
            Some("reasoning") => {
                let summary = item["summary"][0]["text"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                for piece in pieces(&summary, turn.piece_len) {
                    out.push(event(
                        "response.reasoning_summary_text.delta",
                        json!({"output_index": index, "item_id": item_id, "summary_index": 0, "delta": piece}),
                        &mut sequence,
                    ));
                }
            }
            _ => {}
        }
        out.push(event(
            "response.output_item.done",
            json!({"output_index": index, "item": item}),
            &mut sequence,
        ));
    }
    let done = if turn.truncated {
        "response.incomplete"
    } else {
        "response.completed"
    };
    out.push(event(
        done,
        json!({"response": response(turn, options, "completed", items(turn))}),
        &mut sequence,
    ));
    out
}

pub(super) fn whole(turn: &Turn, options: &Options) -> Value {
    response(turn, options, "completed", items(turn))
}
