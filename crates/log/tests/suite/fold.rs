//! The fold, against the fixtures (golden vectors) and event by event.

use std::path::PathBuf;

use chock_log::event::{EndReason, PlanStatus, Usage, UserMessage};
use chock_log::fold::{Message, Status};
use chock_log::reader::ReadProblem;
use chock_log::{Event, EventId, SessionId, SessionRow, SessionState, Timestamp, fold_log};
use pretty_assertions::assert_eq;

use super::fixtures::{fixture, fixture_events};

#[test]
fn the_session_fixture_folds_to_its_state() {
    let folded = fold_log(&fixture("session-v1.jsonl")).unwrap();
    assert!(folded.problems.is_empty(), "{:?}", folded.problems);
    let s = folded.state;
    assert_eq!(
        s.session_id,
        Some(SessionId::parse("20261129-192736-123-7f3a9c1e").unwrap())
    );
    assert_eq!(s.project, Some(PathBuf::from("/home/ann/proj")));
    assert_eq!(s.model.as_deref(), Some("claude-sonnet"));
    assert_eq!(s.owner_pid, Some(4242));
    assert_eq!(
        s.started_at,
        Some(Timestamp::parse("2026-11-29T19:27:36.123Z").unwrap())
    );
    assert_eq!(s.title.as_deref(), Some("Fix parse_empty"));
    assert_eq!(s.status, Status::WaitingForApproval);
    assert_eq!(s.last_event_id, EventId(20));
    assert_eq!(s.turns, 2);
    assert_eq!(
        s.usage,
        Usage {
            input_tokens: 2600,
            output_tokens: 125,
            ..Default::default()
        }
    );
    let calls: Vec<(u64, &str, u64)> = s
        .model_calls
        .iter()
        .map(|c| (c.event_id.0, c.model.as_str(), c.usage.total()))
        .collect();
    assert_eq!(
        calls,
        [(4, "claude-sonnet", 1285), (11, "claude-haiku", 1440)]
    );
    let plan: Vec<(&str, PlanStatus)> =
        s.plan.iter().map(|i| (i.text.as_str(), i.status)).collect();
    assert_eq!(
        plan,
        [
            ("Reproduce the failure", PlanStatus::Done),
            ("Fix the parser", PlanStatus::InProgress),
            ("Run the whole suite", PlanStatus::Pending),
        ]
    );
    let pending: Vec<&str> = s
        .pending_approvals
        .iter()
        .map(|p| p.request_id.as_str())
        .collect();
    assert_eq!(pending, ["req_2"]);
    let jobs: Vec<&str> = s.background.iter().map(|j| j.job_id.as_str()).collect();
    assert_eq!(jobs, ["job_1"]);
    let ws = s.workspace.as_ref().unwrap();
    assert_eq!(
        (ws.commit.as_str(), ws.event_id, ws.applied),
        ("3f1c2a9", EventId(2), false)
    );
    // The compaction covered events up to 10: the summary, then what followed.
    let convo: Vec<(u64, &str)> = s
        .conversation
        .iter()
        .map(|m| match m {
            Message::Summary { event_id, .. } => (event_id.0, "summary"),
            Message::User { event_id, .. } => (event_id.0, "user"),
            Message::Assistant { event_id, .. } => (event_id.0, "assistant"),
            Message::ToolResult { event_id, .. } => (event_id.0, "tool"),
        })
        .collect();
    assert_eq!(convo, [(18, "summary"), (11, "assistant"), (15, "tool")]);
}

#[test]
fn a_handed_over_session_carries_on_and_ends() {
    let s = fold_log(&fixture("ended-v1.jsonl")).unwrap().state;
    assert_eq!(
        s.status,
        Status::Ended {
            reason: EndReason::Done,
            detail: "task finished".into()
        }
    );
    assert_eq!(s.owner_pid, Some(200));
    assert!(s.background.is_empty());
    let row = SessionRow::from_state(s.session_id.as_ref().unwrap(), &s);
    assert_eq!(row.status, "ended");
    assert_eq!(row.reason.as_ref().map(EndReason::as_str), Some("done"));
    assert_eq!(
        (row.events, row.input_tokens, row.output_tokens),
        (11, 10, 2)
    );
}

#[test]
fn status_after_a_handover_ending_is_ended_until_the_next_owner_writes() {
    let events = fixture_events("ended-v1.jsonl");
    let s = SessionState::fold(&events[..8]);
    assert_eq!(
        s.status,
        Status::Ended {
            reason: EndReason::Handover,
            detail: "handed to the daemon".into()
        }
    );
    let s = SessionState::fold(&events[..9]);
    assert_eq!(s.status, Status::Running);
}

#[test]
fn incremental_apply_equals_the_whole_fold() {
    let events = fixture_events("session-v1.jsonl");
    let mut s = SessionState::default();
    for e in &events {
        s.apply(e);
    }
    assert_eq!(s, fold_log(&fixture("session-v1.jsonl")).unwrap().state);
}

#[test]
fn a_damaged_log_folds_what_is_sound_and_reports_the_rest() {
    let folded = fold_log(&fixture("damaged-v1.jsonl")).unwrap();
    assert_eq!(folded.state.last_event_id, EventId(3));
    assert_eq!(folded.state.conversation.len(), 2);
    assert!(matches!(
        folded.problems[0],
        ReadProblem::Invalid { line: 3, .. }
    ));
    assert!(matches!(
        folded.problems[1],
        ReadProblem::OutOfOrder { line: 4, .. }
    ));
}

#[test]
fn a_log_of_many_blocks_folds_in_order_with_its_damage_reported_by_line() {
    // About 5 MiB: large enough to be parsed on several threads, with an
    // invalid line and a repeated id in the last MiB and a torn tail.
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("log.jsonl");
    let mut log = Vec::new();
    let mut events = Vec::new();
    let filler = "a person's message long enough to fill the log quickly ".repeat(4);
    for n in 1..=20_000u64 {
        let event = Event {
            id: EventId(n),
            at: Timestamp::from_unix_millis(1_800_000_000_000 + n as i64),
            body: UserMessage {
                text: format!("{n}: {filler}"),
            }
            .into(),
        };
        event.write_line(&mut log).unwrap();
        events.push(event);
        if n == 19_000 {
            log.extend_from_slice(b"{\"id\":19001,\"at\":\n");
        }
        if n == 19_500 {
            let mut again = Vec::new();
            events[499].write_line(&mut again).unwrap();
            log.extend_from_slice(&again);
        }
    }
    log.extend_from_slice(b"{\"id\":20001,\"at\":\"2027");
    assert!(log.len() > 4 << 20, "{}", log.len());
    std::fs::write(&path, &log).unwrap();

    let folded = fold_log(&path).unwrap();
    assert_eq!(folded.state, SessionState::fold(&events));
    assert!(matches!(
        folded.problems[..],
        [
            ReadProblem::Invalid { line: 19_001, .. },
            ReadProblem::OutOfOrder {
                line: 19_502,
                id: EventId(500),
                previous: EventId(19_500)
            }
        ]
    ));
}

#[test]
fn a_provider_notice_means_waiting_for_the_provider_until_the_next_event() {
    use chock_log::event::{AssistantMessage, Notice, SessionOpen};
    use chock_log::{LogWriter, RowStatus, StateDir};
    let dir = tempfile::tempdir().unwrap();
    let state = StateDir::at(dir.path());
    let id = SessionId::new();
    let mut writer = LogWriter::create(&state, &id).unwrap();
    writer
        .append(SessionOpen {
            session_id: id.clone(),
            project: "/p".into(),
            model: "fake/m".into(),
            pid: 1,
            chock_version: "0".into(),
            parent: None,
        })
        .unwrap();
    writer.append(UserMessage { text: "hi".into() }).unwrap();
    writer
        .append(Notice {
            subject: "sandbox".into(),
            text: "not about the provider".into(),
        })
        .unwrap();
    assert_eq!(
        fold_log(writer.path()).unwrap().state.status,
        Status::Running
    );
    let wait = "rate limited by fake, retrying in 12 s (2 of 6)";
    writer
        .append(Notice {
            subject: "provider".into(),
            text: wait.into(),
        })
        .unwrap();
    let s = fold_log(writer.path()).unwrap().state;
    assert_eq!(s.status, Status::WaitingForProvider(wait.into()));
    let row = SessionRow::from_state(&id, &s);
    assert_eq!(row.status, RowStatus::Retrying);
    assert_eq!(row.status.as_str(), "retrying");
    assert_eq!(row.detail.as_deref(), Some(wait));
    assert_eq!(RowStatus::from_word("retrying"), RowStatus::Retrying);
    writer.append(AssistantMessage::default()).unwrap();
    assert_eq!(
        fold_log(writer.path()).unwrap().state.status,
        Status::Running
    );
}

#[test]
fn a_subagent_folds_its_parent_and_a_background_childs_answer_into_the_conversation() {
    let path = fixture("subagent-v4.jsonl");
    let folded = fold_log(&path).unwrap();
    assert!(folded.problems.is_empty(), "{:?}", folded.problems);
    let s = folded.state;
    assert_eq!(
        s.parent,
        Some(SessionId::parse("20261202-045900-000-00000001").unwrap())
    );
    assert!(s.background.is_empty());
    let said: Vec<&str> = s
        .conversation
        .iter()
        .filter_map(|m| match m {
            Message::User { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(said.len(), 2, "{said:?}");
    assert!(said[1].ends_with("src/a.rs:3"), "{said:?}");
    let row = SessionRow::from_state(s.session_id.as_ref().unwrap(), &s);
    assert_eq!(row.parent.as_deref(), Some("20261202-045900-000-00000001"));
    // The row fold keeps the link too.
    let listed = chock_log::fold_row(&path).unwrap().state;
    assert_eq!(listed.parent, s.parent);
}
