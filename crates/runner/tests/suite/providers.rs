//! Both HTTP providers against the fake model server: every reply shape a
//! real server can send, streamed and whole.

use std::time::Duration;

use chock_runner::provider::{Message, ProviderError, StopReason, StreamEvent, ToolCall, Usage};
use chock_testkit::{FakeModel, Reply, Turn};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::{BOTH, Kind, ask, http_config, plain_request, provider, provider_with};

#[tokio::test]
async fn text_arrives_in_pieces_and_whole() {
    for kind in BOTH {
        let fake = FakeModel::with([Turn::text("Hello, wörld! How are you?").pieces(3).into()]);
        let provider = provider(kind, &fake);
        let messages = [Message::User { text: "hi".into() }];
        let request = plain_request("m", &messages);
        let mut deltas = Vec::new();
        let turn = provider
            .start(&request)
            .await
            .unwrap()
            .collect(|delta| deltas.push(delta.to_owned()))
            .await
            .unwrap();
        assert_eq!(turn.text, "Hello, wörld! How are you?", "{kind:?}");
        assert_eq!(deltas.len(), 9, "{kind:?}: {deltas:?}");
        assert_eq!(turn.stop, StopReason::EndTurn, "{kind:?}");
        assert!(turn.calls.is_empty());
    }
}

#[tokio::test]
async fn tool_calls_split_across_chunks_are_assembled() {
    for kind in BOTH {
        let fake = FakeModel::with([Turn::text("Let me look.")
            .call("call_a", "read_file", &json!({"path": "src/main.rs"}))
            .call(
                "call_b",
                "list_directory",
                &json!({"path": ".", "depth": 2}),
            )
            .pieces(2)
            .into()]);
        let turn = ask(&provider(kind, &fake)).await.unwrap();
        assert_eq!(
            turn.calls,
            vec![
                ToolCall {
                    id: "call_a".into(),
                    name: "read_file".into(),
                    arguments: r#"{"path":"src/main.rs"}"#.into(),
                },
                ToolCall {
                    id: "call_b".into(),
                    name: "list_directory".into(),
                    arguments: r#"{"depth":2,"path":"."}"#.into(),
                },
            ],
            "{kind:?}"
        );
        assert_eq!(turn.text, "Let me look.");
        assert_eq!(turn.stop, StopReason::ToolUse, "{kind:?}");
    }
}

#[tokio::test]
async fn usage_is_reported() {
    for kind in BOTH {
        let fake = FakeModel::with([Turn::text("ok").usage(1234, 56).into()]);
        let turn = ask(&provider(kind, &fake)).await.unwrap();
        assert_eq!(
            turn.usage,
            Some(Usage {
                input_tokens: 1234,
                output_tokens: 56,
                ..Default::default()
            }),
            "{kind:?}"
        );
    }
}

#[tokio::test]
async fn a_turn_cut_at_the_token_limit_says_so() {
    for kind in BOTH {
        let fake = FakeModel::with([Turn::text("and then").truncated().into()]);
        let turn = ask(&provider(kind, &fake)).await.unwrap();
        assert_eq!(turn.stop, StopReason::MaxTokens, "{kind:?}");
    }
}

#[tokio::test]
async fn an_http_error_carries_its_status_and_body() {
    for kind in BOTH {
        let fake = FakeModel::with([Reply::error(
            500,
            r#"{"error":{"message":"the model fell over"}}"#,
        )]);
        let err = ask(&provider(kind, &fake)).await.unwrap_err();
        match &err {
            ProviderError::Status { status, body, .. } => {
                assert_eq!(*status, 500);
                assert!(body.contains("the model fell over"), "{body}");
            }
            other => panic!("{kind:?}: expected a status error, got {other:?}"),
        }
        assert_eq!(
            err.to_string(),
            r#"provider 'fake' answered HTTP 500: {"error":{"message":"the model fell over"}}"#
        );
    }
}

#[tokio::test]
async fn a_huge_error_body_is_cut_to_an_excerpt() {
    let fake = FakeModel::with([Reply::error(429, &"x".repeat(100_000))]);
    let err = ask(&provider(Kind::OpenAi, &fake)).await.unwrap_err();
    assert!(err.to_string().len() < 400, "{err}");
}

#[tokio::test]
async fn a_slow_stream_is_read_to_the_end() {
    for kind in BOTH {
        let fake = FakeModel::with([Turn::text("slow but sure")
            .call("c1", "read_file", &json!({"path": "a"}))
            .pieces(5)
            .delay(Duration::from_millis(20))
            .into()]);
        let turn = ask(&provider(kind, &fake)).await.unwrap();
        assert_eq!(turn.text, "slow but sure", "{kind:?}");
        assert_eq!(turn.calls.len(), 1);
    }
}

#[tokio::test]
async fn a_stream_silent_past_the_timeout_is_abandoned() {
    for kind in BOTH {
        let fake = FakeModel::with([Turn::text("too slow").delay(Duration::from_secs(3)).into()]);
        let mut http = http_config(kind, &fake);
        http.timeout_secs = Some(1);
        let err = ask(&provider_with(kind, http)).await.unwrap_err();
        assert!(
            matches!(err, ProviderError::Timeout { after, .. } if after == Duration::from_secs(1)),
            "{kind:?}: {err:?}"
        );
        assert!(err.to_string().contains("raise .timeout_secs"), "{err}");
    }
}

#[tokio::test]
async fn a_cut_stream_delivers_what_came_then_a_clear_error() {
    for kind in BOTH {
        // OpenAI: role chunk, "Part", "ial " then the cut. Anthropic:
        // message_start, ping, block start, "Part", "ial " then the cut.
        let after = match kind {
            Kind::OpenAi => 3,
            Kind::Anthropic => 5,
            Kind::Responses => panic!("run over BOTH only"),
        };
        let fake = FakeModel::with([Reply::Cut {
            turn: Turn::text("Partial answer"),
            after,
        }]);
        let provider = provider(kind, &fake);
        let messages = [Message::User { text: "hi".into() }];
        let request = plain_request("m", &messages);
        let mut stream = provider.start(&request).await.unwrap();
        let mut text = String::new();
        let err = loop {
            match stream.next().await {
                Some(Ok(StreamEvent::Text(delta))) => text.push_str(&delta),
                Some(Ok(other)) => panic!("{kind:?}: unexpected {other:?}"),
                Some(Err(err)) => break err,
                None => panic!("{kind:?}: the stream ended without an error"),
            }
        };
        assert_eq!(text, "Partial ", "{kind:?}");
        assert!(
            matches!(err, ProviderError::Cut { .. }),
            "{kind:?}: {err:?}"
        );
        assert!(stream.next().await.is_none(), "nothing follows the error");
    }
}

#[tokio::test]
async fn a_malformed_chunk_is_reported_with_an_excerpt() {
    for kind in BOTH {
        let fake = FakeModel::with([Reply::Malformed {
            turn: Turn::text("fine so far"),
            after: 2,
            raw: "{\"choices\": [oops".to_owned(),
        }]);
        let err = ask(&provider(kind, &fake)).await.unwrap_err();
        match &err {
            ProviderError::Malformed { excerpt, .. } => assert_eq!(excerpt, "{\"choices\": [oops"),
            other => panic!("{kind:?}: expected malformed, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn whole_bodies_give_the_same_turn_as_streams() {
    for kind in BOTH {
        let turn = Turn::text("all at once")
            .call("c9", "read_file", &json!({"path": "b"}))
            .usage(40, 4);
        let fake = FakeModel::with([turn.clone().into(), turn.into()]);
        let streamed = ask(&provider(kind, &fake)).await.unwrap();
        let mut http = http_config(kind, &fake);
        http.stream = Some(false);
        let whole = ask(&provider_with(kind, http)).await.unwrap();
        assert_eq!(whole, streamed, "{kind:?}");
        let requests = fake.requests();
        assert_eq!(requests[0].json()["stream"], json!(true));
        assert_eq!(requests[1].json()["stream"], json!(false));
    }
}

#[tokio::test]
async fn a_whole_body_that_is_cut_or_malformed_is_an_error() {
    for kind in BOTH {
        let fake = FakeModel::with([
            Reply::Cut {
                turn: Turn::text("half of this goes missing"),
                after: 0,
            },
            Reply::Malformed {
                turn: Turn::text("x"),
                after: 0,
                raw: "not json".to_owned(),
            },
        ]);
        let mut http = http_config(kind, &fake);
        http.stream = Some(false);
        let provider = provider_with(kind, http);
        let cut = ask(&provider).await.unwrap_err();
        assert!(
            matches!(cut, ProviderError::Cut { .. }),
            "{kind:?}: {cut:?}"
        );
        let malformed = ask(&provider).await.unwrap_err();
        assert!(
            matches!(malformed, ProviderError::Malformed { .. }),
            "{kind:?}: {malformed:?}"
        );
    }
}

#[tokio::test]
async fn an_unreachable_server_says_where_it_looked() {
    let fake = FakeModel::start();
    let http = http_config(Kind::OpenAi, &fake);
    drop(fake);
    let err = ask(&provider_with(Kind::OpenAi, http.clone()))
        .await
        .unwrap_err();
    assert!(matches!(err, ProviderError::Connect { .. }), "{err:?}");
    let message = err.to_string();
    assert!(message.contains(&http.base_url), "{message}");
    assert!(
        message.contains("check that the server is running"),
        "{message}"
    );
}

#[tokio::test]
async fn an_exhausted_fake_answers_500_naming_the_endpoint() {
    let fake = FakeModel::start();
    let err = ask(&provider(Kind::Anthropic, &fake)).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("fake model: no scripted reply left for POST /v1/messages"),
        "{err}"
    );
    assert_eq!(fake.remaining(), 0);
}

#[tokio::test]
async fn tool_arguments_that_are_not_json_reach_the_caller_verbatim() {
    for kind in BOTH {
        let fake = FakeModel::with([Turn::text("")
            .raw_call("c1", "read_file", "{\"path\": ")
            .into()]);
        let turn = ask(&provider(kind, &fake)).await.unwrap();
        assert_eq!(turn.calls[0].arguments, "{\"path\": ", "{kind:?}");
    }
}

fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").unwrap().count()
}

#[tokio::test]
async fn a_model_call_by_host_name_starts_no_thread() {
    let fake = FakeModel::with([Turn::text("one").into(), Turn::text("two").into()]);
    let mut http = http_config(Kind::OpenAi, &fake);
    http.base_url = http.base_url.replace("127.0.0.1", "localhost");
    let before = threads();
    let provider = provider_with(Kind::OpenAi, http);
    assert_eq!(ask(&provider).await.unwrap().text, "one");
    assert_eq!(ask(&provider).await.unwrap().text, "two");
    assert_eq!(
        threads(),
        before,
        "the call must stay on the runtime's thread"
    );
}

#[tokio::test]
async fn https_is_spoken_and_a_server_that_is_not_tls_is_a_clear_error() {
    use std::io::Write as _;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let _ = stream.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
    });
    let fake = FakeModel::start();
    let mut http = http_config(Kind::Anthropic, &fake);
    http.base_url = format!("https://127.0.0.1:{port}");
    let err = ask(&provider_with(Kind::Anthropic, http))
        .await
        .unwrap_err();
    server.join().unwrap();
    match &err {
        ProviderError::Connect { detail, .. } => {
            // rustls read the plain-text answer as a TLS record and refused it.
            assert!(detail.contains("received corrupt message"), "{detail}");
        }
        other => panic!("expected a connect error, got {other:?}"),
    }
}

#[tokio::test]
async fn an_error_event_inside_the_stream_is_reported_with_its_message() {
    for kind in BOTH {
        let raw = match kind {
            Kind::OpenAi => {
                r#"{"error": {"message": "context length exceeded", "type": "invalid_request_error"}}"#
            }
            Kind::Anthropic => {
                r#"{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}"#
            }
            Kind::Responses => panic!("run over BOTH only"),
        };
        let fake = FakeModel::with([Reply::Malformed {
            turn: Turn::text("so far"),
            after: 1,
            raw: raw.to_owned(),
        }]);
        let err = ask(&provider(kind, &fake)).await.unwrap_err();
        let expected = match kind {
            Kind::OpenAi => "provider 'fake' reported an error mid-stream: context length exceeded",
            Kind::Anthropic => "provider 'fake' reported an error mid-stream: Overloaded",
            Kind::Responses => panic!("run over BOTH only"),
        };
        assert_eq!(err.to_string(), expected, "{kind:?}");
    }
}
