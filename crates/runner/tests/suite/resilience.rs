//! Providers against the failures and features of real APIs, on the fake
//! model: retries (429 with retry-after, 529, 503, a reset before the first
//! byte, a stream cut after tokens), prompt caching (breakpoints, cache
//! usage, a byte-stable prefix), the Responses API with reasoning items,
//! Anthropic thinking sent back with tool results, and the settings an
//! instance may not combine.

use std::path::Path;
use std::time::{Duration, Instant};

use chock_runner::config::{HttpProviderConfig, ProviderConfig, ReasoningEffort};
use chock_runner::provider::{Message, Provider, ProviderError, Reasoning, ReasoningKind};
use chock_runner::turn::{TurnEnd, TurnLimits};
use chock_testkit::{FakeModel, Reply, TempProject, Turn};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::turn::{Recorded, turn, turn_with};
use super::{BOTH, Kind, http_config, provider_with, write_args};

/// One turn over `kind` with the default limits: its end, conversation
/// and steps.
async fn one_turn(kind: Kind, fake: &FakeModel) -> (TurnEnd, Vec<Message>, Vec<String>) {
    turn(
        kind,
        fake,
        &TempProject::git(),
        Recorded::default(),
        TurnLimits::default(),
    )
    .await
}

fn bodies(fake: &FakeModel) -> Vec<Value> {
    fake.requests()
        .iter()
        .filter(|r| !r.path.ends_with("count_tokens"))
        .map(chock_testkit::RecordedRequest::json)
        .collect()
}

#[tokio::test]
async fn a_429_with_retry_after_is_waited_out_and_the_call_made_again() {
    let fake = FakeModel::with([Reply::rate_limited("0.3"), Turn::text("fine now").into()]);
    let started = Instant::now();
    let (end, _, steps) = one_turn(Kind::Anthropic, &fake).await;
    assert!(matches!(end, TurnEnd::Done), "{end:?}");
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "retry-after was honoured"
    );
    assert_eq!(
        steps,
        vec![
            "wait: rate limited by fake, retrying in 0.3 s (1 of 6)",
            "assistant \"fine now\" []",
        ]
    );
    assert_eq!(fake.requests().len(), 2);
}

#[tokio::test]
async fn a_529_and_a_503_back_off_and_then_succeed() {
    for (reply, said) in [
        (Reply::overloaded(), "fake is overloaded (HTTP 529)"),
        (
            Reply::error(503, "down for a moment"),
            "fake answered HTTP 503",
        ),
    ] {
        let fake = FakeModel::with([reply, Turn::text("back").into()]);
        let (end, _, steps) = one_turn(Kind::Anthropic, &fake).await;
        assert!(matches!(end, TurnEnd::Done), "{end:?}");
        let waited: f64 = steps[0]
            .strip_prefix(&format!("wait: {said}, retrying in "))
            .and_then(|rest| rest.strip_suffix(" s (1 of 6)"))
            .and_then(|secs| secs.parse().ok())
            .unwrap_or_else(|| panic!("{steps:?}"));
        assert!(
            (0.5..=1.0).contains(&waited),
            "the first backoff lies between half a second and a second: {steps:?}"
        );
        assert_eq!(steps[1], "assistant \"back\" []");
    }
}

#[tokio::test]
async fn a_reset_before_the_first_byte_and_a_cut_before_the_first_token_are_retried() {
    for kind in BOTH {
        let fake = FakeModel::with([
            Reply::Reset,
            Reply::Cut {
                turn: Turn::text("never"),
                after: 0,
            },
            Reply::refuse(429, &[("retry-after", "0")], "{}"),
            Turn::text("made it").into(),
        ]);
        let (end, _, steps) = one_turn(kind, &fake).await;
        assert!(matches!(end, TurnEnd::Done), "{kind:?}: {end:?}");
        assert!(
            steps[0].starts_with("wait: cannot reach fake, retrying in"),
            "{steps:?}"
        );
        assert!(
            steps[1].starts_with(
                "wait: the answer from fake broke off before its first token, retrying in"
            ),
            "{steps:?}"
        );
        assert_eq!(
            steps[2],
            "wait: rate limited by fake, retrying in 0 s (3 of 6)"
        );
        assert_eq!(steps[3], "assistant \"made it\" []");
    }
}

#[tokio::test]
async fn a_retried_call_costs_no_second_tool_run() {
    let project = TempProject::git();
    let fake = FakeModel::with([
        Turn::text("")
            .call("w", "write_file", &write_args("once.txt", "1\n"))
            .into(),
        Reply::rate_limited("0"),
        Turn::text("done").into(),
    ]);
    let (end, conversation, steps) = turn(
        Kind::OpenAi,
        &fake,
        &project,
        Recorded::default(),
        TurnLimits::default(),
    )
    .await;
    assert!(matches!(end, TurnEnd::Done), "{end:?}");
    let runs = steps.iter().filter(|s| s.starts_with("write_file")).count();
    assert_eq!(runs, 1, "{steps:?}");
    assert_eq!(
        conversation.len(),
        4,
        "user, call, result, answer: {conversation:?}"
    );
    // The retried request is the same request.
    let bodies = bodies(&fake);
    assert_eq!(bodies[1], bodies[2]);
}

#[tokio::test]
async fn a_provider_that_rate_limits_for_ever_is_bounded_by_count_and_says_both() {
    let fake = FakeModel::with((0..4).map(|_| Reply::rate_limited("0.05")));
    let http = HttpProviderConfig {
        retries: Some(2),
        ..http_config(Kind::Anthropic, &fake)
    };
    let provider = provider_with(Kind::Anthropic, http);
    let (end, _, steps) = turn_with(
        &provider,
        &TempProject::git(),
        Recorded::default(),
        TurnLimits::default(),
    )
    .await;
    assert_eq!(steps.len(), 2, "{steps:?}");
    let TurnEnd::Provider(err) = end else {
        panic!("{end:?}")
    };
    let said = err.to_string();
    assert!(
        said.starts_with("provider 'fake' still failed after 2 retries and 0.1 s of waiting: provider 'fake' answered HTTP 429:"),
        "{said}"
    );
    assert!(
        said.contains(".retries and .retry_wait_secs in config.zon"),
        "{said}"
    );
    assert_eq!(fake.requests().len(), 3);
}

#[tokio::test]
async fn the_total_wait_bounds_retries_and_a_huge_retry_after_is_refused_at_once() {
    let fake = FakeModel::with([Reply::rate_limited("86400")]);
    let http = HttpProviderConfig {
        retry_wait_secs: Some(30),
        ..http_config(Kind::Anthropic, &fake)
    };
    let provider = provider_with(Kind::Anthropic, http);
    let started = Instant::now();
    let (end, _, steps) = turn_with(
        &provider,
        &TempProject::git(),
        Recorded::default(),
        TurnLimits::default(),
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "it did not wait a day"
    );
    assert!(steps.is_empty(), "{steps:?}");
    let said = match end {
        TurnEnd::Provider(err) => err.to_string(),
        other => panic!("{other:?}"),
    };
    assert!(
        said.contains("still failed after 0 retries and 0 s of waiting (the server asked to wait 1440 min 0 s, more than the 30 s left of .retry_wait_secs)"),
        "{said}"
    );
}

#[tokio::test]
async fn a_retry_after_that_is_not_a_number_or_negative_is_said_and_backed_off() {
    for (raw, why) in [
        ("soon", "is neither seconds nor a date"),
        ("-5", "is not a wait (negative, or too large to be one)"),
    ] {
        let fake = FakeModel::with([Reply::rate_limited(raw), Turn::text("ok").into()]);
        let (end, _, steps) = one_turn(Kind::OpenAi, &fake).await;
        assert!(matches!(end, TurnEnd::Done), "{end:?}");
        assert!(
            steps[0].ends_with(&format!(
                "(1 of 6); its retry-after '{raw}' {why}, so the wait is chosen here"
            )),
            "{steps:?}"
        );
    }
}

#[tokio::test]
async fn an_error_that_is_not_worth_retrying_ends_the_turn_at_once() {
    let fake = FakeModel::with([Reply::error(401, "bad key"), Turn::text("never").into()]);
    let (end, _, steps) = one_turn(Kind::Anthropic, &fake).await;
    assert!(steps.is_empty());
    assert!(
        matches!(
            end,
            TurnEnd::Provider(ProviderError::Status { status: 401, .. })
        ),
        "{end:?}"
    );
    assert_eq!(fake.remaining(), 1);
}

#[tokio::test]
async fn anthropic_requests_carry_cache_breakpoints_and_usage_keeps_cache_reads_and_writes() {
    let fake = FakeModel::with([
        Turn::text("")
            .call("r", "list_directory", &json!({}))
            .usage(3000, 10)
            .cache(0, 2900)
            .into(),
        Turn::text("done").usage(3100, 5).cache(2900, 150).into(),
    ]);
    let project = TempProject::git();
    let provider = provider_with(Kind::Anthropic, http_config(Kind::Anthropic, &fake));
    let (end, _, _) = turn_with(
        &provider,
        &project,
        Recorded::default(),
        TurnLimits::default(),
    )
    .await;
    assert!(matches!(end, TurnEnd::Done), "{end:?}");
    let second = &bodies(&fake)[1];
    let ephemeral = json!({"type": "ephemeral"});
    assert_eq!(second["system"][0]["cache_control"], ephemeral);
    let tools = second["tools"].as_array().unwrap();
    assert_eq!(tools.last().unwrap()["cache_control"], ephemeral);
    assert!(
        tools[..tools.len() - 1]
            .iter()
            .all(|t| t.get("cache_control").is_none())
    );
    let messages = second["messages"].as_array().unwrap();
    let last = messages.last().unwrap()["content"].as_array().unwrap();
    assert_eq!(
        last.last().unwrap()["cache_control"],
        ephemeral,
        "the growing prefix ends in a breakpoint"
    );
    let marks = second.to_string().matches("cache_control").count();
    assert_eq!(marks, 3, "three of the four breakpoints the API allows");
}

#[tokio::test]
async fn cache_usage_is_read_from_every_wire() {
    for kind in [Kind::OpenAi, Kind::Anthropic, Kind::Responses] {
        let fake = FakeModel::with([Turn::text("hi").usage(2000, 7).cache(1536, 64).into()]);
        let provider = provider_with(kind, http_config(kind, &fake));
        let turn = super::ask(&provider).await.unwrap();
        let usage = turn.usage.unwrap();
        assert_eq!(
            (usage.input_tokens, usage.cache_read_tokens),
            (2000, 1536),
            "{kind:?}"
        );
        let written = match kind {
            Kind::Anthropic => 64,
            Kind::OpenAi | Kind::Responses => 0,
        };
        assert_eq!(usage.cache_write_tokens, written, "{kind:?}");
    }
}

/// The messages of a body as JSON texts, with Anthropic's breakpoint
/// markers taken out (the API does not count them as part of the prefix).
fn message_texts(body: &Value) -> Vec<String> {
    let key = if body.get("input").is_some() {
        "input"
    } else {
        "messages"
    };
    body[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let mut m = m.clone();
            for block in m["content"].as_array_mut().into_iter().flatten() {
                if let Some(block) = block.as_object_mut() {
                    block.remove("cache_control");
                }
            }
            m.to_string()
        })
        .collect()
}

#[tokio::test]
async fn the_request_prefix_is_byte_identical_across_the_calls_of_a_session() {
    for kind in [Kind::OpenAi, Kind::Anthropic, Kind::Responses] {
        let fake = FakeModel::with([
            Turn::text("Writing.")
                .call("w", "write_file", &write_args("a.txt", "a\n"))
                .into(),
            Turn::text("")
                .call("r", "read_file", &json!({"path": "a.txt"}))
                .call("l", "list_directory", &json!({}))
                .into(),
            Turn::text("done").into(),
        ]);
        let (end, _, _) = one_turn(kind, &fake).await;
        assert!(matches!(end, TurnEnd::Done), "{kind:?}: {end:?}");
        let bodies = bodies(&fake);
        for pair in bodies.windows(2) {
            let (before, after) = (message_texts(&pair[0]), message_texts(&pair[1]));
            assert_eq!(
                before[..],
                after[..before.len()],
                "{kind:?}: the earlier messages changed"
            );
            for field in ["tools", "system", "instructions", "model"] {
                assert_eq!(pair[0][field], pair[1][field], "{kind:?}: {field} changed");
            }
        }
    }
}

#[tokio::test]
async fn responses_streams_carry_reasoning_items_back_with_the_function_calls() {
    let fake = FakeModel::with([
        Turn::text("")
            .reasoning("rs_1", "I should look first.", "enc-1")
            .call("call_1", "list_directory", &json!({}))
            .into(),
        Turn::text("Listed.").into(),
    ]);
    let http = HttpProviderConfig {
        reasoning_effort: Some(ReasoningEffort::High),
        ..http_config(Kind::Responses, &fake)
    };
    let provider = provider_with(Kind::Responses, http);
    let (end, conversation, _) = turn_with(
        &provider,
        &TempProject::git(),
        Recorded::default(),
        TurnLimits::default(),
    )
    .await;
    assert!(matches!(end, TurnEnd::Done), "{end:?}");
    assert_eq!(
        conversation[1],
        Message::Reasoning(Reasoning {
            kind: ReasoningKind::OpenAiReasoning,
            text: "I should look first.".into(),
            opaque: "enc-1".into(),
            id: "rs_1".into(),
        })
    );
    let requests = fake.requests();
    assert_eq!(requests[0].path, "/v1/responses");
    let second = requests[1].json();
    assert_eq!(second["store"], false);
    assert!(
        second.get("previous_response_id").is_none(),
        "the log is the truth"
    );
    assert_eq!(
        second["reasoning"],
        json!({"effort": "high", "summary": "auto"})
    );
    assert_eq!(second["include"], json!(["reasoning.encrypted_content"]));
    let input = second["input"].as_array().unwrap();
    let kinds: Vec<&str> = input.iter().map(|i| i["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "message",
            "reasoning",
            "function_call",
            "function_call_output"
        ]
    );
    assert_eq!(
        input[1],
        json!({"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "I should look first."}], "encrypted_content": "enc-1"})
    );
    assert_eq!(input[3]["call_id"], "call_1");
}

#[tokio::test]
async fn a_responses_item_of_an_unknown_type_is_kept_and_not_sent_back() {
    let fake = FakeModel::with([
        Turn::text("")
            .extra_item(json!({"type": "web_search_call", "id": "ws_1", "status": "completed"}))
            .call("c", "list_directory", &json!({}))
            .into(),
        Turn::text("ok").into(),
    ]);
    let provider = provider_with(Kind::Responses, http_config(Kind::Responses, &fake));
    let turn = super::ask(&provider).await.unwrap();
    assert_eq!(turn.unknown.len(), 1);
    assert_eq!(turn.unknown[0].kind, "web_search_call");
    assert_eq!(turn.calls.len(), 1);
    let (end, _, _) = turn_with(
        &provider,
        &TempProject::git(),
        Recorded::default(),
        TurnLimits::default(),
    )
    .await;
    assert!(matches!(end, TurnEnd::Done), "{end:?}");
    let sent = fake.requests().last().unwrap().body.clone();
    assert!(!sent.contains("web_search_call"), "{sent}");
}

#[tokio::test]
async fn a_responses_whole_body_gives_the_same_turn_as_its_stream() {
    let turn = || {
        Turn::text("Hello.").reasoning("rs_9", "brief", "enc").call(
            "c9",
            "read_file",
            &json!({"path": "x"}),
        )
    };
    let fake = FakeModel::with([turn().into(), turn().into()]);
    let streamed = super::ask(&provider_with(
        Kind::Responses,
        http_config(Kind::Responses, &fake),
    ))
    .await
    .unwrap();
    let whole = super::ask(&provider_with(
        Kind::Responses,
        HttpProviderConfig {
            stream: Some(false),
            ..http_config(Kind::Responses, &fake)
        },
    ))
    .await
    .unwrap();
    assert_eq!(streamed, whole);
    assert_eq!(streamed.reasoning.len(), 1);
}

#[tokio::test]
async fn anthropic_thinking_is_asked_for_and_sent_back_with_the_tool_results() {
    let fake = FakeModel::with([
        Turn::text("Looking.")
            .thinking("The directory first.", "sig-1")
            .call("t1", "list_directory", &json!({}))
            .into(),
        Turn::text("Seen.").into(),
    ]);
    let http = HttpProviderConfig {
        thinking_budget: Some(2048),
        ..http_config(Kind::Anthropic, &fake)
    };
    let provider = provider_with(Kind::Anthropic, http);
    let (end, _, steps) = turn_with(
        &provider,
        &TempProject::git(),
        Recorded::default(),
        TurnLimits::default(),
    )
    .await;
    // The fake refuses, as the API does, a tool-use turn sent back without
    // its thinking.
    assert!(matches!(end, TurnEnd::Done), "{end:?} {steps:?}");
    let bodies = bodies(&fake);
    assert_eq!(
        bodies[0]["thinking"],
        json!({"type": "enabled", "budget_tokens": 2048})
    );
    assert_eq!(bodies[0]["max_tokens"], 2048 + 8192);
    let assistant = &bodies[1]["messages"][1];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(
        assistant["content"][0],
        json!({"type": "thinking", "thinking": "The directory first.", "signature": "sig-1"})
    );
    assert_eq!(assistant["content"][1]["type"], "text");
    assert_eq!(assistant["content"][2]["type"], "tool_use");
}

#[tokio::test]
async fn the_fake_refuses_a_tool_use_turn_whose_thinking_was_dropped() {
    // What the API does, and why thinking is kept: the same history sent
    // without the thinking block is refused.
    let fake = FakeModel::with([Turn::text("never").into()]);
    let http = HttpProviderConfig {
        thinking_budget: Some(1024),
        max_tokens: Some(4096),
        ..http_config(Kind::Anthropic, &fake)
    };
    let provider = provider_with(Kind::Anthropic, http);
    let messages = vec![
        Message::User { text: "go".into() },
        Message::Assistant {
            text: String::new(),
            calls: vec![chock_runner::provider::ToolCall {
                id: "t".into(),
                name: "list_directory".into(),
                arguments: "{}".into(),
            }],
        },
        Message::ToolResult {
            call_id: "t".into(),
            name: "list_directory".into(),
            content: "a.txt".into(),
            is_error: false,
        },
    ];
    let request = chock_runner::provider::ModelRequest {
        model: "m",
        system: "",
        messages: &messages,
        tools: &[],
    };
    let err = provider.start(&request).await.unwrap_err();
    assert!(
        err.to_string().contains("must start with a thinking block"),
        "{err}"
    );
}

#[test]
fn settings_an_instance_would_not_act_on_are_refused_with_what_to_do() {
    let build = |config: ProviderConfig| {
        Provider::with_env("x", &config, Path::new("/"), |_| None)
            .unwrap_err()
            .to_string()
    };
    let http = || HttpProviderConfig {
        base_url: "http://127.0.0.1:1/v1".into(),
        ..HttpProviderConfig::default()
    };
    assert_eq!(
        build(ProviderConfig::OpenAi(HttpProviderConfig {
            thinking_budget: Some(2048),
            ..http()
        })),
        "provider 'x': .thinking_budget is Anthropic's extended thinking and .kind = .openai has none; set .reasoning_effort instead; change the instance in config.zon"
    );
    assert_eq!(
        build(ProviderConfig::Anthropic(HttpProviderConfig {
            thinking_budget: Some(500),
            ..http()
        })),
        "provider 'x': .thinking_budget = 500 is below the API's least budget, 1024; change the instance in config.zon"
    );
    assert_eq!(
        build(ProviderConfig::Anthropic(HttpProviderConfig {
            thinking_budget: Some(4096),
            max_tokens: Some(4096),
            ..http()
        })),
        "provider 'x': .max_tokens = 4096 must be larger than .thinking_budget = 4096, which it includes; change the instance in config.zon"
    );
    assert_eq!(
        build(ProviderConfig::Anthropic(HttpProviderConfig {
            reasoning_effort: Some(ReasoningEffort::Low),
            ..http()
        })),
        "provider 'x': .reasoning_effort is OpenAI's; an anthropic instance thinks with .thinking_budget; change the instance in config.zon"
    );
    assert_eq!(
        build(ProviderConfig::OpenAiResponses(HttpProviderConfig {
            prompt_cache: Some(false),
            ..http()
        })),
        "provider 'x': .prompt_cache = false does nothing for .kind = .openai_responses, whose server caches prefixes by itself; remove it; change the instance in config.zon"
    );
}

#[tokio::test]
async fn prompt_cache_false_sends_no_breakpoints() {
    let fake = FakeModel::with([Turn::text("a").into()]);
    let http = HttpProviderConfig {
        prompt_cache: Some(false),
        ..http_config(Kind::Anthropic, &fake)
    };
    super::ask(&provider_with(Kind::Anthropic, http))
        .await
        .unwrap();
    assert!(!fake.requests()[0].body.contains("cache_control"));
}

#[tokio::test]
async fn count_tokens_counts_a_request_where_the_api_offers_it() {
    let fake = FakeModel::start();
    let anthropic = provider_with(Kind::Anthropic, http_config(Kind::Anthropic, &fake));
    let openai = provider_with(Kind::OpenAi, http_config(Kind::OpenAi, &fake));
    let messages = vec![Message::User {
        text: "x".repeat(4000),
    }];
    let request = chock_runner::provider::ModelRequest {
        model: "m",
        system: "be brief",
        messages: &messages,
        tools: &[],
    };
    let counted = anthropic.count_tokens(&request).await.unwrap().unwrap();
    assert!((1000..1100).contains(&counted), "{counted}");
    assert_eq!(fake.requests()[0].path, "/v1/messages/count_tokens");
    let body = fake.requests()[0].json();
    assert!(body.get("max_tokens").is_none() && body.get("stream").is_none());
    assert!(anthropic.counts_tokens());
    assert_eq!(openai.count_tokens(&request).await.unwrap(), None);
    assert!(!openai.counts_tokens());
}

#[tokio::test]
async fn chat_completions_send_the_reasoning_effort_and_no_reasoning_back() {
    let fake = FakeModel::with([Turn::text("ok").into()]);
    let http = HttpProviderConfig {
        reasoning_effort: Some(ReasoningEffort::Minimal),
        ..http_config(Kind::OpenAi, &fake)
    };
    let provider = provider_with(Kind::OpenAi, http);
    let messages = vec![
        Message::User { text: "a".into() },
        Message::Reasoning(Reasoning {
            kind: ReasoningKind::Thinking,
            text: "private".into(),
            opaque: "sig".into(),
            id: String::new(),
        }),
        Message::Assistant {
            text: "b".into(),
            calls: vec![],
        },
        Message::User { text: "c".into() },
    ];
    super::ask_with(&provider, &messages).await.unwrap();
    let body = fake.requests()[0].json();
    assert_eq!(body["reasoning_effort"], "minimal");
    assert!(!body.to_string().contains("private"), "{body}");
    assert_eq!(
        body["messages"].as_array().unwrap().len(),
        4,
        "system, user, assistant, user"
    );
}

#[tokio::test]
async fn redacted_thinking_and_whole_bodies_keep_what_anthropic_needs_back() {
    let fake = FakeModel::with([
        Reply::Frames(vec![
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"x\",\"stop_reason\":null,\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n".to_owned(),
            "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"redacted_thinking\",\"data\":\"opaque-bytes\"}}\n\n".to_owned(),
            "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n".to_owned(),
            "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":3}}\n\n".to_owned(),
            "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n".to_owned(),
        ]),
        Turn::text("whole").thinking("thought whole", "sig-w").into(),
    ]);
    let streamed = super::ask(&provider_with(
        Kind::Anthropic,
        http_config(Kind::Anthropic, &fake),
    ))
    .await
    .unwrap();
    assert_eq!(
        streamed.reasoning,
        vec![Reasoning {
            kind: ReasoningKind::RedactedThinking,
            text: String::new(),
            opaque: "opaque-bytes".into(),
            id: String::new(),
        }]
    );
    let whole = super::ask(&provider_with(
        Kind::Anthropic,
        HttpProviderConfig {
            stream: Some(false),
            ..http_config(Kind::Anthropic, &fake)
        },
    ))
    .await
    .unwrap();
    assert_eq!(whole.reasoning[0].text, "thought whole");
    assert_eq!(whole.reasoning[0].opaque, "sig-w");
    // Sent back, redacted thinking goes as its data.
    let fake = FakeModel::with([Turn::text("ok").into()]);
    let provider = provider_with(Kind::Anthropic, http_config(Kind::Anthropic, &fake));
    let messages = vec![
        Message::User { text: "a".into() },
        Message::Reasoning(streamed.reasoning[0].clone()),
        Message::Assistant {
            text: "b".into(),
            calls: vec![],
        },
        Message::User { text: "c".into() },
    ];
    super::ask_with(&provider, &messages).await.unwrap();
    let body = fake.requests()[0].json();
    assert_eq!(
        body["messages"][1]["content"][0],
        json!({"type": "redacted_thinking", "data": "opaque-bytes"})
    );
}
