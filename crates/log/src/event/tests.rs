use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::id::SessionId;

fn at() -> Timestamp {
    Timestamp::parse("2026-11-29T19:27:36.123Z").unwrap()
}

fn round_trip(body: EventBody) {
    let event = Event {
        id: EventId(7),
        at: at(),
        body,
    };
    let line = event.to_line().unwrap();
    assert_eq!(line.last(), Some(&b'\n'));
    let text = std::str::from_utf8(&line).unwrap();
    assert!(
        text.starts_with("{\"id\":7,\"at\":\"2026-11-29T19:27:36.123Z\",\"type\":"),
        "{text}"
    );
    let back = Event::parse(&line[..line.len() - 1]).unwrap();
    assert_eq!(back, event);
}

#[test]
fn every_known_type_round_trips() {
    let bodies: Vec<EventBody> = vec![
        SessionOpen {
            session_id: SessionId::parse("20261129-192736-123-7f3a9c1e").unwrap(),
            project: "/p".into(),
            model: "m".into(),
            pid: 42,
            chock_version: "0.1.0".into(),
            parent: None,
        }
        .into(),
        UserMessage {
            text: "hi \"there\"\n".into(),
        }
        .into(),
        AssistantMessage {
            text: "ok".into(),
            tool_calls: vec![ToolCall {
                id: "c1".into(),
                name: "run_command".into(),
                arguments: Json::parse(r#"{"argv":["ls"]}"#).unwrap(),
            }],
            usage: Usage {
                input_tokens: 10,
                output_tokens: 3,
                ..Default::default()
            },
            model: Some("m2".into()),
            reasoning: vec![Reasoning {
                kind: "thinking".into(),
                text: "first the list".into(),
                opaque: "sig".into(),
                id: String::new(),
            }],
            unknown_items: vec![Json::parse(r#"{"type":"web_search_call"}"#).unwrap()],
        }
        .into(),
        ToolCallEvent {
            call_id: "c1".into(),
            tool: "run_command".into(),
            arguments: Json::parse("{}").unwrap(),
            session: None,
        }
        .into(),
        Decision {
            action: "exec.ls".into(),
            decision: "allow".into(),
            layer: "default".into(),
            rule: ".exec = .allow".into(),
            call_id: None,
        }
        .into(),
        ApprovalRequest {
            request_id: "r1".into(),
            action: "exec.rm".into(),
            question: "run rm?".into(),
            kind: RequestKind::Approval,
        }
        .into(),
        ApprovalAnswer {
            request_id: "r1".into(),
            answer: Answer::No,
            by: "terminal".into(),
            text: None,
        }
        .into(),
        Review {
            action: "call.write_file".into(),
            call_id: Some("c1".into()),
            reviewer: "fake/m".into(),
            approved: false,
            reason: "writes outside the task".into(),
            usage: Usage {
                input_tokens: 10,
                output_tokens: 2,
                ..Default::default()
            },
        }
        .into(),
        Promise {
            promise_id: 1,
            rules: vec![PromiseRule {
                action: "call.write_file".into(),
                decision: "deny".into(),
            }],
            reason: "read only from here".into(),
        }
        .into(),
        PromiseRelease { promise_id: 1 }.into(),
        Grant {
            action: "exec.path.cargo".into(),
            request_id: "9".into(),
        }
        .into(),
        ToolResult {
            call_id: "c1".into(),
            ok: true,
            output: "a\nb".into(),
            truncated: false,
            diff: None,
        }
        .into(),
        PlanUpdate {
            items: vec![PlanItem {
                text: "x".into(),
                status: PlanStatus::InProgress,
            }],
        }
        .into(),
        TitleSet { title: "t".into() }.into(),
        Compaction {
            summary: "s".into(),
            up_to: EventId(5),
            usage: None,
            tokens: Some(24_000),
            counted_by: Some("count_tokens".into()),
        }
        .into(),
        WorkspaceOpen {
            dir: "/w".into(),
            commit: "abc".into(),
            branch: Some("chock/x".into()),
            ..Default::default()
        }
        .into(),
        WorkspaceApply {
            commit: None,
            target: "main".into(),
        }
        .into(),
        BackgroundStart {
            job_id: "j1".into(),
            kind: "command".into(),
            command: "sleep 1".into(),
        }
        .into(),
        BackgroundEnd {
            job_id: "j1".into(),
            status: "done".into(),
            exit_code: Some(0),
        }
        .into(),
        SubagentEnd {
            session: SessionId::parse("20261202-050002-100-00000005").unwrap(),
            call_id: "s1".into(),
            background: true,
            reason: EndReason::Crashed,
            tokens: 12,
            text: "ended crashed".into(),
        }
        .into(),
        Handover {
            to: "daemon".into(),
        }
        .into(),
        Notice {
            subject: "sandbox".into(),
            text: "commands run in a sandbox with namespaces".into(),
        }
        .into(),
        TurnEnd {}.into(),
        SessionEnd {
            reason: EndReason::Handover,
            detail: "d".into(),
        }
        .into(),
    ];
    assert_eq!(bodies.len(), KNOWN_TYPES.len());
    for body in bodies {
        round_trip(body);
    }
}

#[test]
fn a_question_and_its_text_answer_round_trip_and_an_approval_leaves_kind_out() {
    round_trip(
        ApprovalRequest {
            request_id: "r2".into(),
            action: "ask_user".into(),
            question: "which port?".into(),
            kind: RequestKind::Question,
        }
        .into(),
    );
    round_trip(
        ApprovalAnswer {
            request_id: "r2".into(),
            answer: Answer::Yes,
            by: "terminal".into(),
            text: Some("8080".into()),
        }
        .into(),
    );
    let plain = Event {
        id: EventId(1),
        at: at(),
        body: ApprovalRequest::default().into(),
    };
    let line = String::from_utf8(plain.to_line().unwrap()).unwrap();
    assert!(!line.contains("kind"), "{line}");
    let newer: ApprovalRequest =
        serde_json::from_value(json!({"request_id": "1", "kind": "poll"})).unwrap();
    assert_eq!(newer.kind, RequestKind::Unknown);
}

#[test]
fn body_without_fields_is_a_plain_envelope() {
    let event = Event {
        id: EventId(1),
        at: at(),
        body: TurnEnd {}.into(),
    };
    assert_eq!(
        String::from_utf8(event.to_line().unwrap()).unwrap(),
        "{\"id\":1,\"at\":\"2026-11-29T19:27:36.123Z\",\"type\":\"turn.end\"}\n"
    );
}

#[test]
fn unknown_type_keeps_all_its_fields() {
    let line =
        r#"{"id":3,"at":"2026-11-29T19:27:36.123Z","type":"future.thing","a":1,"b":{"c":[true]}}"#;
    let event = Event::parse(line.as_bytes()).unwrap();
    let EventBody::Unknown { type_name, fields } = &event.body else {
        panic!("{event:?}");
    };
    assert_eq!(type_name, "future.thing");
    assert_eq!(
        Value::Object(fields.clone()),
        json!({"a": 1, "b": {"c": [true]}})
    );
    let again = event.to_line().unwrap();
    assert_eq!(std::str::from_utf8(&again).unwrap().trim_end(), line);
}

#[test]
fn unknown_fields_are_ignored_and_missing_optional_ones_default() {
    let line = r#"{"id":2,"at":"2026-11-29T19:27:36Z","type":"tool.result","call_id":"c","new_field":[1,2]}"#;
    let event = Event::parse(line.as_bytes()).unwrap();
    assert_eq!(
        event.body,
        EventBody::ToolResult(ToolResult {
            call_id: "c".into(),
            ..ToolResult::default()
        })
    );
}

#[test]
fn envelope_keys_may_come_in_any_order() {
    for line in [
        r#"{"type":"title.set","title":"x","at":"2026-11-29T19:27:36Z","id":9}"#,
        r#"{"title":"x","id":9,"type":"title.set","at":"2026-11-29T19:27:36Z"}"#,
        r#"{"at":"2026-11-29T19:27:36Z","title":"x","type":"title.set","id":9}"#,
    ] {
        let event = Event::parse(line.as_bytes()).unwrap();
        assert_eq!(event.id, EventId(9), "{line}");
        assert_eq!(
            event.body,
            EventBody::TitleSet(TitleSet { title: "x".into() }),
            "{line}"
        );
    }
}

#[test]
fn unknown_enum_values_do_not_fail_the_event() {
    let line = r#"{"id":1,"at":"2026-11-29T19:27:36Z","type":"session.end","reason":"paused"}"#;
    let event = Event::parse(line.as_bytes()).unwrap();
    assert_eq!(
        event.body,
        EventBody::SessionEnd(SessionEnd {
            reason: EndReason::Unknown("paused".to_owned()),
            detail: String::new()
        })
    );
}

#[test]
fn malformed_envelopes_are_errors() {
    for line in [
        r#"{"at":"2026-11-29T19:27:36Z","type":"turn.end"}"#,
        r#"{"id":1,"type":"turn.end"}"#,
        r#"{"id":1,"at":"2026-11-29T19:27:36Z"}"#,
        r#"{"id":1,"id":2,"at":"2026-11-29T19:27:36Z","type":"turn.end"}"#,
        r#"{"id":-1,"at":"2026-11-29T19:27:36Z","type":"turn.end"}"#,
        r#"{"id":1,"at":"yesterday","type":"turn.end"}"#,
        r#"{"id":1,"at":"2026-11-29T19:27:36Z","type":"tool.result"}"#,
        r#"[1,2]"#,
    ] {
        assert!(Event::parse(line.as_bytes()).is_err(), "{line}");
    }
}

#[test]
fn durability_policy_is_the_documented_one() {
    let bodies = [
        EventBody::from(TurnEnd {}),
        ApprovalRequest::default().into(),
        ApprovalAnswer {
            request_id: "r".into(),
            answer: Answer::Yes,
            by: String::new(),
            text: None,
        }
        .into(),
        SessionEnd {
            reason: EndReason::Done,
            detail: String::new(),
        }
        .into(),
        Handover::default().into(),
        WorkspaceOpen::default().into(),
        WorkspaceApply::default().into(),
        BackgroundStart::default().into(),
        BackgroundEnd::default().into(),
        Compaction::default().into(),
    ];
    let durable: Vec<&str> = bodies
        .iter()
        .filter(|b| !b.is_durable())
        .map(EventBody::type_name)
        .collect();
    assert!(durable.is_empty(), "not durable: {durable:?}");
    for body in [
        EventBody::from(UserMessage::default()),
        AssistantMessage::default().into(),
        ToolResult::default().into(),
        ToolCallEvent::default().into(),
        Decision::default().into(),
        PlanUpdate::default().into(),
        TitleSet::default().into(),
    ] {
        assert!(!body.is_durable(), "{} should not fsync", body.type_name());
    }
}
