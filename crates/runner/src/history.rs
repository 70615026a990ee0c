//! The conversation between the log and the provider. The log keeps every
//! tool output whole and tool arguments as JSON; a model call wants the
//! provider's [`Message`]s, with outputs cut for the model and arguments as
//! the text the model sent. Converting in both directions here keeps the
//! session's own turns and a session continued from its log sending the
//! same conversation.

use chock_log::event::{Json, Reasoning as LogReasoning, ToolCall as LogCall, ToolResult};
use chock_log::fold::Message as Folded;
use chock_log::{LogWriter, WriteError};

use crate::provider::{Message, Reasoning, ReasoningKind, ToolCall};
use chock_tools::{MODEL_LIMIT_CHARS, truncate};

/// A model's tool call as the log stores it. Arguments that are not JSON
/// (the model is allowed to be wrong) are kept as a JSON string holding the
/// text, so nothing the model said is lost.
pub(crate) fn to_log_call(call: &ToolCall) -> LogCall {
    LogCall {
        id: call.id.clone(),
        name: call.name.clone(),
        arguments: log_arguments(&call.arguments),
    }
}

/// A provider's usage as the log keeps it.
pub(crate) fn to_log_usage(usage: crate::provider::Usage) -> chock_log::event::Usage {
    chock_log::event::Usage {
        input_tokens: usage.input_tokens,
        output_tokens: usage.output_tokens,
        cache_read_tokens: usage.cache_read_tokens,
        cache_write_tokens: usage.cache_write_tokens,
    }
}

/// A piece of reasoning as the log keeps it.
pub(crate) fn to_log_reasoning(reasoning: &Reasoning) -> LogReasoning {
    LogReasoning {
        kind: reasoning.kind.as_str().to_owned(),
        text: reasoning.text.clone(),
        opaque: reasoning.opaque.clone(),
        id: reasoning.id.clone(),
    }
}

/// A piece of reasoning from the log; `None` for a kind this version does
/// not know, which stays in the log and is never sent.
fn from_log_reasoning(logged: &LogReasoning) -> Option<Reasoning> {
    Some(Reasoning {
        kind: ReasoningKind::from_name(&logged.kind)?,
        text: logged.text.clone(),
        opaque: logged.opaque.clone(),
        id: logged.id.clone(),
    })
}

/// The `tool.call` of `call` about to run; `session` is the subagent a
/// spawn starts.
pub(crate) fn call_event(
    call: &ToolCall,
    session: Option<chock_log::SessionId>,
) -> chock_log::event::ToolCallEvent {
    chock_log::event::ToolCallEvent {
        call_id: call.id.clone(),
        tool: call.name.clone(),
        arguments: log_arguments(&call.arguments),
        session,
    }
}

/// Arguments text as log JSON (see [`to_log_call`]).
pub(crate) fn log_arguments(arguments: &str) -> Json {
    Json::parse(arguments.to_owned())
        .or_else(|_| Json::from_value(arguments))
        .unwrap_or_default()
}

/// The text the model sent, from log JSON: a JSON string is the raw text of
/// arguments that were not an object.
fn model_arguments(arguments: &Json) -> String {
    match serde_json::from_str::<String>(arguments.get()) {
        Ok(raw) => raw,
        Err(_) => arguments.get().to_owned(),
    }
}

/// The folded conversation as provider messages.
pub(crate) fn from_fold(folded: &[Folded]) -> Vec<Message> {
    let mut out = Vec::with_capacity(folded.len());
    for message in folded {
        if let Folded::Assistant { reasoning, .. } = message {
            out.extend(
                reasoning
                    .iter()
                    .filter_map(from_log_reasoning)
                    .map(Message::Reasoning),
            );
        }
        out.push(match message {
            Folded::Summary { text, .. } => Message::User {
                text: format!("A summary of the conversation so far:\n\n{text}"),
            },
            Folded::User { text, .. } => Message::User { text: text.clone() },
            Folded::Assistant {
                text, tool_calls, ..
            } => Message::Assistant {
                text: text.clone(),
                calls: tool_calls
                    .iter()
                    .map(|call| ToolCall {
                        id: call.id.clone(),
                        name: call.name.clone(),
                        arguments: model_arguments(&call.arguments),
                    })
                    .collect(),
            },
            Folded::ToolResult {
                call_id,
                ok,
                output,
                ..
            } => Message::ToolResult {
                call_id: call_id.clone(),
                name: tool_name(&out, call_id),
                content: truncate(output, MODEL_LIMIT_CHARS),
                is_error: !ok,
            },
        });
    }
    out
}

fn tool_name(so_far: &[Message], call_id: &str) -> String {
    so_far
        .iter()
        .rev()
        .find_map(|message| match message {
            Message::Assistant { calls, .. } => calls
                .iter()
                .find(|call| call.id == call_id)
                .map(|call| call.name.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

/// The calls cut off (with the previous owner, or by the person) get their
/// result, `text`: not run again, because their effect is unknown.
pub(crate) fn answer_cut_calls(
    writer: &mut LogWriter,
    conversation: &mut Vec<Message>,
    cut: Vec<(String, String)>,
    text: &str,
) -> Result<(), WriteError> {
    for (call_id, name) in cut {
        writer.append(ToolResult {
            call_id: call_id.clone(),
            ok: false,
            output: text.to_owned(),
            truncated: false,
            diff: None,
        })?;
        conversation.push(Message::ToolResult {
            call_id,
            name,
            content: text.to_owned(),
            is_error: true,
        });
    }
    Ok(())
}

/// The calls of the newest assistant message that have no result.
pub(crate) fn unanswered_calls(conversation: &[Folded]) -> Vec<(String, String)> {
    let Some(at) = conversation
        .iter()
        .rposition(|m| matches!(m, Folded::Assistant { .. }))
    else {
        return Vec::new();
    };
    let Folded::Assistant { tool_calls, .. } = &conversation[at] else {
        return Vec::new();
    };
    tool_calls
        .iter()
        .filter(|call| {
            !conversation[at..]
                .iter()
                .any(|m| matches!(m, Folded::ToolResult { call_id, .. } if *call_id == call.id))
        })
        .map(|call| (call.id.clone(), call.name.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chock_log::EventId;

    fn call(id: &str) -> LogCall {
        LogCall {
            id: id.to_owned(),
            name: "write_file".to_owned(),
            arguments: Json::default(),
        }
    }

    #[test]
    fn only_the_newest_calls_without_a_result_were_cut_off() {
        let conversation = vec![
            Folded::User {
                event_id: EventId(1),
                text: "go".into(),
            },
            Folded::Assistant {
                event_id: EventId(2),
                text: String::new(),
                tool_calls: vec![call("a"), call("b"), call("c")],
                reasoning: vec![],
            },
            Folded::ToolResult {
                event_id: EventId(3),
                call_id: "a".into(),
                ok: true,
                output: String::new(),
            },
        ];
        assert_eq!(
            unanswered_calls(&conversation),
            vec![
                ("b".to_owned(), "write_file".to_owned()),
                ("c".to_owned(), "write_file".to_owned())
            ]
        );
        assert!(unanswered_calls(&conversation[..1]).is_empty());
    }

    #[test]
    fn arguments_that_are_not_json_survive_the_log() {
        for raw in [r#"{"path":"a"}"#, "{\"path\": ", "not json at all"] {
            let logged = log_arguments(raw);
            assert_eq!(model_arguments(&logged), raw);
        }
    }
}
