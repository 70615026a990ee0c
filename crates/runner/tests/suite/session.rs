//! The session skeleton end to end in-process: a real log in a temporary
//! state directory, the fake model, a real project. Each log is folded and
//! checked, as a reader would see it.

use std::path::Path;

use chock_log::event::{EndReason, PlanStatus};
use chock_log::fold::Status;
use chock_log::{StateDir, fold_log};
use chock_runner::session::{SessionOutcome, SessionSetup, run_new};
use chock_runner::turn::TurnLimits;
use chock_testkit::{FakeModel, Reply, TempProject, Turn};
use pretty_assertions::assert_eq;
use serde_json::json;
use tempfile::TempDir;

use super::{BOTH, Kind, provider, write_args};

/// A session run to its end in a fresh git project and state directory.
struct Ran {
    outcome: SessionOutcome,
    /// The assistant's text as it was shown.
    shown: String,
    project: TempProject,
    /// Holds the log: it is deleted when this is dropped.
    _state: TempDir,
}

/// A session that asks `fake` to write hello.txt and runs until it ends.
async fn session(fake: &FakeModel, kind: Kind) -> Ran {
    session_until(fake, kind, std::future::pending()).await
}

/// A session like [`session`] that `interrupt` cuts short when it fires.
async fn session_until(fake: &FakeModel, kind: Kind, interrupt: impl Future<Output = ()>) -> Ran {
    let project = TempProject::git();
    let state_dir = tempfile::tempdir().unwrap();
    let provider = provider(kind, fake);
    let state = StateDir::at(state_dir.path());
    let setup = SessionSetup {
        state: &state,
        project: project.path(),
        model_label: "fake/test-model",
        model: "test-model",
        provider: &provider,
        policy: &chock_policy::Policy::shipped(),
        system: "you are a test",
        limits: TurnLimits::default(),
        search: None,
        reviewer: None,
        context_tokens: 32_768,
        foreground: false,
        say: |_| {},
        start: None,
        dev_shell: None,
        agents: None,
        style: None,
        models: None,
    };
    let mut shown = String::new();
    let outcome = run_new(
        &setup,
        "write hello.txt",
        |delta: &str| shown.push_str(delta),
        interrupt,
    )
    .await
    .unwrap();
    Ran {
        outcome,
        shown,
        project,
        _state: state_dir,
    }
}

/// The events of a session whose one turn ended before the model answered.
const UNANSWERED: [&str; 5] = [
    "session.open",
    "user.message",
    "decision",
    "turn.end",
    "session.end",
];

fn types(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .map(|line| {
            serde_json::from_str::<serde_json::Value>(line).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

#[tokio::test(flavor = "current_thread")]
async fn a_session_that_edits_a_file_is_recorded_event_by_event() {
    for kind in BOTH {
        let fake = FakeModel::with([
            Turn::text("Writing it.")
                .call("w1", "write_file", &write_args("hello.txt", "hello\n"))
                .call("t1", "set_title", &json!({"title": "Say hello"}))
                .call(
                    "p1",
                    "update_plan",
                    &json!({"items": [{"step": "write hello.txt", "status": "done"}]}),
                )
                .usage(100, 20)
                .into(),
            Turn::text("Done: hello.txt says hello.")
                .usage(150, 8)
                .into(),
        ]);
        let Ran {
            outcome,
            shown,
            project,
            _state,
        } = session(&fake, kind).await;
        assert_eq!(
            outcome.reason,
            EndReason::Done,
            "{kind:?}: {}",
            outcome.detail
        );
        assert_eq!(shown, "Writing it.Done: hello.txt says hello.");
        assert_eq!(project.read("hello.txt"), "hello\n");
        assert_eq!(
            types(&outcome.log),
            [
                "session.open",
                "user.message",
                "decision",
                "assistant.message",
                "decision",
                "tool.call",
                "tool.result",
                "tool.call",
                "tool.result",
                "title.set",
                "tool.call",
                "tool.result",
                "plan.update",
                "assistant.message",
                "turn.end",
                "session.end",
            ],
            "{kind:?}"
        );
        let folded = fold_log(&outcome.log).unwrap();
        assert!(folded.problems.is_empty());
        let state = folded.state;
        assert_eq!(state.model.as_deref(), Some("fake/test-model"));
        assert_eq!(state.title.as_deref(), Some("Say hello"));
        assert_eq!(state.plan.len(), 1);
        assert_eq!(state.plan[0].text, "write hello.txt");
        assert_eq!(state.plan[0].status, PlanStatus::Done);
        assert_eq!(
            (state.usage.input_tokens, state.usage.output_tokens),
            (250, 28)
        );
        assert_eq!(state.model_calls.len(), 2);
        assert_eq!(
            state.status,
            Status::Ended {
                reason: EndReason::Done,
                detail: String::new()
            }
        );
        assert_eq!(
            state.conversation.len(),
            6,
            "user, assistant, 3 results, assistant"
        );
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_provider_error_status_ends_the_session_with_a_clear_error_in_the_log() {
    let fake = FakeModel::with([Reply::error(400, "the model is on fire")]);
    let Ran {
        outcome, _state, ..
    } = session(&fake, Kind::OpenAi).await;
    assert_eq!(outcome.reason, EndReason::Error);
    assert_eq!(
        outcome.detail,
        "provider 'fake' answered HTTP 400: the model is on fire"
    );
    assert_eq!(types(&outcome.log), UNANSWERED);
    let folded = fold_log(&outcome.log).unwrap();
    assert_eq!(
        folded.state.status,
        Status::Ended {
            reason: EndReason::Error,
            detail: "provider 'fake' answered HTTP 400: the model is on fire".to_owned()
        }
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_cut_stream_after_a_tool_ran_keeps_the_work_and_ends_clearly() {
    let fake = FakeModel::with([
        Turn::text("")
            .call("w1", "write_file", &write_args("kept.txt", "kept\n"))
            .into(),
        // Cut after its first text: not retried, since it was shown.
        Reply::Cut {
            turn: Turn::text("never finished"),
            after: 4,
        },
    ]);
    let Ran {
        outcome,
        shown,
        project,
        _state,
    } = session(&fake, Kind::Anthropic).await;
    assert_eq!(outcome.reason, EndReason::Error);
    assert!(
        outcome
            .detail
            .starts_with("the stream from provider 'fake' broke off before the turn ended"),
        "{}",
        outcome.detail
    );
    assert_eq!(project.read("kept.txt"), "kept\n");
    assert_eq!(
        shown, "neve",
        "what arrived was shown, once: the cut answer is not asked again"
    );
    assert_eq!(fake.requests().len(), 2, "no retry after tokens arrived");
    let folded = fold_log(&outcome.log).unwrap();
    assert_eq!(
        folded.state.conversation.len(),
        3,
        "user, assistant, result survive"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn malformed_arguments_are_kept_in_the_log_verbatim() {
    let fake = FakeModel::with([
        Turn::text("")
            .raw_call("b", "read_file", "{\"path\": ")
            .into(),
        Turn::text("Sorry.").into(),
    ]);
    let Ran {
        outcome, _state, ..
    } = session(&fake, Kind::OpenAi).await;
    assert_eq!(outcome.reason, EndReason::Done);
    let log = std::fs::read_to_string(&outcome.log).unwrap();
    assert!(log.contains(r#""arguments":"{\"path\": ""#), "{log}");
    let second = fake.requests()[1].json();
    assert_eq!(
        second["messages"][2]["tool_calls"][0]["function"]["arguments"],
        "{\"path\": "
    );
}

#[tokio::test(flavor = "current_thread")]
async fn an_interrupt_during_a_slow_answer_ends_the_session_interrupted() {
    let fake = FakeModel::with([Turn::text("a very slow answer")
        .delay(std::time::Duration::from_secs(5))
        .into()]);
    // The interrupt fires once the request has reached the model.
    let interrupt = async {
        chock_testkit::wait_for_async(std::time::Duration::from_secs(10), "the request", || {
            (!fake.requests().is_empty()).then_some(())
        })
        .await;
    };
    let Ran {
        outcome, _state, ..
    } = session_until(&fake, Kind::OpenAi, interrupt).await;
    assert_eq!(outcome.reason, EndReason::Interrupted);
    assert_eq!(types(&outcome.log), UNANSWERED);
    assert_eq!(
        fold_log(&outcome.log).unwrap().state.status,
        Status::Ended {
            reason: EndReason::Interrupted,
            detail: "interrupted by the person; the turn was abandoned".to_owned()
        }
    );
}
