//! Streams as particular servers really send them, frame by frame: the
//! variations between OpenAI-compatible servers and the extra events of the
//! Anthropic API that a client must read past.

use chock_runner::provider::{ProviderError, StopReason, ToolCall, Usage};
use chock_testkit::{FakeModel, Reply};
use pretty_assertions::assert_eq;

use super::{Kind, ask, provider};

fn data(json: &str) -> String {
    format!("data: {json}\n\n")
}

fn event(name: &str, json: &str) -> String {
    format!("event: {name}\ndata: {json}\n\n")
}

#[tokio::test]
async fn a_whole_tool_call_in_one_chunk_with_finish_reason_stop_is_still_a_call() {
    // Ollama sends the call whole and finishes with "stop".
    let fake = FakeModel::with([Reply::Frames(vec![
        data(
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"id":"call_x","index":0,"type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a\"}"}}]},"finish_reason":null}]}"#,
        ),
        data(
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"stop"}]}"#,
        ),
        data("[DONE]"),
    ])]);
    let turn = ask(&provider(Kind::OpenAi, &fake)).await.unwrap();
    assert_eq!(
        turn.calls,
        vec![ToolCall {
            id: "call_x".into(),
            name: "read_file".into(),
            arguments: r#"{"path":"a"}"#.into(),
        }]
    );
    assert_eq!(turn.stop, StopReason::EndTurn);
}

#[tokio::test]
async fn done_without_a_finish_reason_ends_the_turn() {
    let fake = FakeModel::with([Reply::Frames(vec![
        data(r#"{"choices":[{"index":0,"delta":{"content":"hi"}}]}"#),
        data("[DONE]"),
    ])]);
    let turn = ask(&provider(Kind::OpenAi, &fake)).await.unwrap();
    assert_eq!((turn.text.as_str(), turn.stop), ("hi", StopReason::EndTurn));
}

#[tokio::test]
async fn a_usage_chunk_with_null_choices_is_read() {
    // vLLM sends its usage chunk with "choices": null.
    let fake = FakeModel::with([Reply::Frames(vec![
        data(r#"{"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}"#),
        data(
            r#"{"choices":null,"usage":{"prompt_tokens":11,"completion_tokens":1,"total_tokens":12}}"#,
        ),
        data("[DONE]"),
    ])]);
    let turn = ask(&provider(Kind::OpenAi, &fake)).await.unwrap();
    assert_eq!(
        turn.usage,
        Some(Usage {
            input_tokens: 11,
            output_tokens: 1,
            ..Default::default()
        })
    );
}

#[tokio::test]
async fn a_body_that_ends_after_the_finish_reason_without_done_is_complete() {
    let fake = FakeModel::with([Reply::Frames(vec![data(
        r#"{"choices":[{"index":0,"delta":{"content":"fine"},"finish_reason":"stop"}]}"#,
    )])]);
    let turn = ask(&provider(Kind::OpenAi, &fake)).await.unwrap();
    assert_eq!(turn.text, "fine");
}

#[tokio::test]
async fn a_body_that_ends_before_any_finish_is_cut() {
    for kind in [Kind::OpenAi, Kind::Anthropic] {
        let fake = FakeModel::with([Reply::Frames(vec![])]);
        let err = ask(&provider(kind, &fake)).await.unwrap_err();
        assert!(
            matches!(err, ProviderError::Cut { .. }),
            "{kind:?}: {err:?}"
        );
    }
}

#[tokio::test]
async fn anthropic_thinking_blocks_are_kept_and_unknown_events_read_past() {
    let fake = FakeModel::with([Reply::Frames(vec![
        event(
            "message_start",
            r#"{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"x","stop_reason":null,"usage":{"input_tokens":5,"cache_read_input_tokens":100,"output_tokens":1}}}"#,
        ),
        event(
            "content_block_start",
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#,
        ),
        event(
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}"#,
        ),
        event(
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"abc"}}"#,
        ),
        event(
            "content_block_stop",
            r#"{"type":"content_block_stop","index":0}"#,
        ),
        event("future_event", r#"{"type":"future_event","whatever":1}"#),
        event(
            "content_block_start",
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t1","name":"read_guidance","input":{}}}"#,
        ),
        event(
            "content_block_stop",
            r#"{"type":"content_block_stop","index":1}"#,
        ),
        event(
            "message_delta",
            r#"{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":9}}"#,
        ),
        event("message_stop", r#"{"type":"message_stop"}"#),
    ])]);
    let turn = ask(&provider(Kind::Anthropic, &fake)).await.unwrap();
    assert_eq!(turn.text, "");
    assert_eq!(
        turn.calls,
        vec![ToolCall {
            id: "t1".into(),
            name: "read_guidance".into(),
            arguments: "{}".into(),
        }]
    );
    assert_eq!(
        turn.usage,
        Some(Usage {
            input_tokens: 105,
            output_tokens: 9,
            cache_read_tokens: 100,
            cache_write_tokens: 0,
        }),
        "cached prompt tokens count as input, and are told apart"
    );
    assert_eq!(
        turn.reasoning,
        vec![chock_runner::provider::Reasoning {
            kind: chock_runner::provider::ReasoningKind::Thinking,
            text: "hmm".into(),
            opaque: "abc".into(),
            id: String::new(),
        }]
    );
    assert_eq!(turn.stop, StopReason::ToolUse);
}
