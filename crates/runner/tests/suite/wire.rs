//! What the providers put on the wire: the request shape each API expects,
//! the key in the right header and nowhere else.

use std::path::Path;

use chock_runner::config::ProviderConfig;
use chock_runner::provider::{Message, Provider, ProviderError, ToolCall};
use chock_testkit::{FakeModel, Turn};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::{Kind, answer, ask, ask_with, http_config, plain_request, provider};

fn history() -> Vec<Message> {
    vec![
        Message::User {
            text: "read two files".into(),
        },
        Message::Assistant {
            text: "Reading.".into(),
            calls: vec![
                ToolCall {
                    id: "c1".into(),
                    name: "read_file".into(),
                    arguments: r#"{"path":"a"}"#.into(),
                },
                ToolCall {
                    id: "c2".into(),
                    name: "read_file".into(),
                    arguments: r#"{"path":"b"}"#.into(),
                },
            ],
        },
        Message::ToolResult {
            call_id: "c1".into(),
            name: "read_file".into(),
            content: "A".into(),
            is_error: false,
        },
        Message::ToolResult {
            call_id: "c2".into(),
            name: "read_file".into(),
            content: "no such file".into(),
            is_error: true,
        },
    ]
}

async fn send_history(kind: Kind) -> serde_json::Value {
    let fake = FakeModel::with([Turn::text("ok").into()]);
    ask_with(&provider(kind, &fake), &history()).await.unwrap();
    fake.requests()[0].json()
}

#[tokio::test]
async fn openai_requests_use_chat_completions_shapes() {
    let body = send_history(Kind::OpenAi).await;
    assert_eq!(
        body,
        json!({
            "model": "test-model",
            "stream": true,
            "stream_options": {"include_usage": true},
            "messages": [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "read two files"},
                {"role": "assistant", "content": "Reading.", "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"a\"}"}},
                    {"id": "c2", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"b\"}"}},
                ]},
                {"role": "tool", "tool_call_id": "c1", "content": "A"},
                {"role": "tool", "tool_call_id": "c2", "content": "no such file"},
            ],
            "tools": [{"type": "function", "function": {
                "name": "read_file",
                "description": "Read a file",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
            }}],
        })
    );
}

#[tokio::test]
async fn anthropic_requests_merge_tool_results_into_one_user_message_with_cache_breakpoints() {
    let body = send_history(Kind::Anthropic).await;
    assert_eq!(
        body,
        json!({
            "model": "test-model",
            "max_tokens": 8192,
            "stream": true,
            "system": [{"type": "text", "text": "be brief", "cache_control": {"type": "ephemeral"}}],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "read two files"}]},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Reading."},
                    {"type": "tool_use", "id": "c1", "name": "read_file", "input": {"path": "a"}},
                    {"type": "tool_use", "id": "c2", "name": "read_file", "input": {"path": "b"}},
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "c1", "content": "A", "is_error": false},
                    {"type": "tool_result", "tool_use_id": "c2", "content": "no such file", "is_error": true,
                     "cache_control": {"type": "ephemeral"}},
                ]},
            ],
            "tools": [{
                "name": "read_file",
                "description": "Read a file",
                "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
                "cache_control": {"type": "ephemeral"},
            }],
        })
    );
}

#[tokio::test]
async fn the_key_goes_in_each_api_s_own_header() {
    let fake = FakeModel::with([Turn::text("a").into(), Turn::text("b").into()]);
    ask(&provider(Kind::OpenAi, &fake)).await.unwrap();
    ask(&provider(Kind::Anthropic, &fake)).await.unwrap();
    let requests = fake.requests();
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert_eq!(
        requests[0].header("authorization"),
        Some("Bearer sk-test-secret")
    );
    assert_eq!(requests[0].header("x-api-key"), None);
    assert_eq!(requests[1].path, "/v1/messages");
    assert_eq!(requests[1].header("x-api-key"), Some("sk-test-secret"));
    assert_eq!(requests[1].header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(requests[1].header("authorization"), None);
}

#[test]
fn a_missing_key_names_the_variable_and_the_key_never_shows_in_debug() {
    let fake = FakeModel::start();
    let config = ProviderConfig::Anthropic(http_config(Kind::Anthropic, &fake));
    let err = Provider::with_env("claude", &config, Path::new("/"), |_| None).unwrap_err();
    assert!(matches!(err, ProviderError::MissingKey { .. }));
    assert_eq!(
        err.to_string(),
        "provider 'claude' reads its API key from $TEST_KEY, which is not set: export TEST_KEY or change .key_env in config.zon"
    );
    let provider = Provider::with_env("claude", &config, Path::new("/"), |_| {
        Some("sk-very-secret".into())
    })
    .unwrap();
    let debug = format!("{provider:?}");
    assert!(!debug.contains("sk-very-secret"), "{debug}");
    assert!(debug.contains("<redacted>"), "{debug}");
}

#[tokio::test]
async fn the_testkit_config_zon_drives_a_provider_end_to_end() {
    use chock_runner::config::Config;
    use chock_testkit::Wire;
    for wire in [Wire::OpenAi, Wire::Anthropic] {
        let fake = FakeModel::with([Turn::text("configured").into()]);
        let path = Path::new("config.zon");
        let config = Config::parse(path, &fake.config_zon(wire, "tiny")).unwrap();
        let chosen = config.choose(None, path).unwrap();
        assert_eq!((chosen.instance, chosen.model), ("fake", "tiny"));
        let provider = Provider::new(chosen.instance, chosen.provider, Path::new("/")).unwrap();
        let messages = [Message::User { text: "hi".into() }];
        let turn = answer(&provider, &plain_request(chosen.model, &messages))
            .await
            .unwrap();
        assert_eq!(turn.text, "configured", "{wire:?}");
        assert_eq!(fake.requests()[0].json()["model"], "tiny");
    }
}
