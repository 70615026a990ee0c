//! The session's own judgement, end to end through a real `chock run` and
//! the fake model: ask_user answered through `chock approve` and on a
//! terminal, restrict_self and request_action (a promise left through
//! policy.widen, an action granted), the reviewer of agent_review and
//! agent_then_human played by the fake model, and compaction with a small
//! context window. The log of each is folded and checked.

use std::path::Path;
use std::process::{Child, Stdio};

use chock_log::event::EndReason;
use chock_log::fold::{Message, Status};
use chock_log::{SessionId, StateDir, fold_log};
use chock_testkit::{FakeModel, Reply, Turn, Wire};
use serde_json::{Value, json};

use super::kit::{
    all_of, approve, approve_saying, assert_asks, assert_ended, assert_success, call_turn,
    fake_model, finish, interrupt, log_values as events, only_log, project_with, start_session,
    wait_for_pending, workspace_file, write_config, write_x,
};
use super::{chock, on_a_terminal};

/// A session in `project` whose model answers `replies`, started on
/// `message`: the state dir, the running `chock run` and the model.
fn start(
    rules: &[(&str, &str)],
    message: &str,
    replies: impl IntoIterator<Item = Reply>,
) -> (
    tempfile::TempDir,
    chock_testkit::TempProject,
    Child,
    FakeModel,
) {
    let state = tempfile::tempdir().unwrap();
    let project = project_with(rules);
    let fake = fake_model(state.path(), replies);
    let child = start_session(state.path(), project.path(), message);
    (state, project, child, fake)
}

/// Waits for the session's question, answers it yes through `chock
/// approve` and waits for the session to end; the session's log.
fn yes_and_finish(state: &Path, child: Child) -> std::path::PathBuf {
    let (id, log, _) = wait_for_pending(state);
    answer_and_finish(state, &id, child, "y\n");
    log
}

/// Answers session `id` with `input` through `chock approve`, asserting
/// it succeeded, then waits for the session to end.
fn answer_and_finish(state: &Path, id: &SessionId, child: Child, input: &str) {
    let out = approve(state, id.as_str(), input);
    assert_success(&out);
    finish(child);
}

/// The text of the tool result the model read for `call_id` in `request`.
fn result_for(request: &Value, call_id: &str) -> String {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == call_id)
        .and_then(|m| m["content"].as_str())
        .unwrap_or_else(|| panic!("no result for {call_id} in {request}"))
        .to_owned()
}

#[test]
fn ask_user_waits_for_a_typed_answer_through_chock_approve() {
    let (state, _project, child, fake) = start(
        &[],
        "tidy up",
        [
            call_turn("q1", "ask_user", json!({"question": "which branch?"})),
            Turn::text("Thanks.").into(),
        ],
    );
    let (id, log, _) = wait_for_pending(state.path());
    let folded = fold_log(&log).unwrap();
    assert_eq!(folded.state.status, Status::WaitingForApproval);
    assert_eq!(folded.state.pending_approvals[0].question, "which branch?");

    // An empty line is asked again; the typed line is the answer.
    approve_saying(
        state.path(),
        id.as_str(),
        "\nmain please\n",
        &["which branch?", "answered the question"],
    );
    finish(child);

    let events = events(&log);
    let request = all_of(&events, "approval.request")[0];
    assert_eq!(request["kind"], "question");
    assert_eq!(request["action"], "ask_user");
    let answer = all_of(&events, "approval.answer")[0];
    assert_eq!(answer["text"], "main please");
    assert_eq!(answer["by"], "approve.sock");
    let second = fake.requests()[1].json();
    assert_eq!(
        result_for(&second, "q1"),
        "the person answered: main please"
    );
    assert!(fold_log(&log).unwrap().state.pending_approvals.is_empty());
}

#[test]
fn a_promise_binds_the_next_call_and_is_left_only_with_a_yes_to_policy_widen() {
    let (state, _project, child, fake) = start(
        &[],
        "fix it",
        [
            call_turn(
                "p1",
                "restrict_self",
                json!({"rules": [{"action": "call.write_file", "decision": "deny"}], "reason": "read only"}),
            ),
            write_x("w1").into(),
            call_turn(
                "r1",
                "request_action",
                json!({"action": "call.write_file", "reason": "the fix needs x.txt"}),
            ),
            write_x("w2").into(),
            Turn::text("Done.").into(),
        ],
    );
    let (id, log, folded) = wait_for_pending(state.path());
    // Before the yes: the promise refused the first write.
    assert!(workspace_file(&log, "x.txt").is_none());
    assert_asks(&folded, "policy.widen", "leave promise 1");
    answer_and_finish(state.path(), &id, child, "y\n");

    assert_eq!(workspace_file(&log, "x.txt").as_deref(), Some("x"));
    let requests = fake.requests();
    let refused = result_for(&requests[2].json(), "w1");
    assert!(refused.contains("call.write_file is denied"), "{refused}");
    assert!(refused.contains("promise 1"), "{refused}");
    let left = result_for(&requests[3].json(), "r1");
    assert!(left.contains("promise 1 was left"), "{left}");
    let events = events(&log);
    assert_eq!(
        all_of(&events, "promise")[0]["rules"][0]["decision"],
        "deny"
    );
    assert_eq!(all_of(&events, "promise.release")[0]["promise_id"], 1);
    let decisions: Vec<(&str, &str)> = all_of(&events, "decision")
        .iter()
        .map(|d| {
            (
                d["action"].as_str().unwrap(),
                d["decision"].as_str().unwrap(),
            )
        })
        .collect();
    for made in [
        ("call.write_file", "deny"),
        ("policy.widen", "ask"),
        ("call.write_file", "allow"),
    ] {
        assert!(decisions.contains(&made), "{decisions:?}");
    }
}

#[test]
fn request_action_asks_once_and_a_yes_grants_the_action_for_the_session() {
    let (state, _project, child, fake) = start(
        &[("call.write_file", "ask"), ("exec.path.rm", "deny")],
        "fix it",
        [
            Turn::text("")
                .call(
                    "r1",
                    "request_action",
                    &json!({"action": "exec.path.rm", "reason": "clean up"}),
                )
                .call(
                    "r2",
                    "request_action",
                    &json!({"action": "call.write_file", "reason": "write the fix"}),
                )
                .into(),
            write_x("w1").into(),
            Turn::text("Done.").into(),
        ],
    );
    let log = yes_and_finish(state.path(), child);

    assert_eq!(workspace_file(&log, "x.txt").as_deref(), Some("x"));
    let requests = fake.requests();
    let denied = result_for(&requests[1].json(), "r1");
    assert!(
        denied.contains("exec.path.rm cannot be granted"),
        "{denied}"
    );
    let granted = result_for(&requests[1].json(), "r2");
    assert!(
        granted.contains("allowed for the rest of this session"),
        "{granted}"
    );
    let events = events(&log);
    assert_eq!(
        all_of(&events, "approval.request").len(),
        1,
        "the write after the grant asks nobody"
    );
    assert_eq!(all_of(&events, "grant")[0]["action"], "call.write_file");
    let last = all_of(&events, "decision")
        .into_iter()
        .rfind(|d| d["action"] == "call.write_file")
        .unwrap();
    assert_eq!(last["decision"], "allow");
    assert_eq!(last["layer"], "grant");
}

#[test]
fn agent_review_lets_the_reviewer_refuse_with_its_reason() {
    let (state, _project, child, fake) = start(
        &[("call.write_file", "agent_review")],
        "read the code",
        [
            write_x("w1").into(),
            Turn::text("NO: writing x.txt is not part of the task.")
                .usage(50, 9)
                .into(),
            Turn::text("Understood.").into(),
        ],
    );
    finish(child);
    let log = only_log(state.path());
    assert!(workspace_file(&log, "x.txt").is_none());
    let requests = fake.requests();
    let review = requests[1].json();
    assert!(
        review["tools"].as_array().is_none_or(Vec::is_empty),
        "the reviewer is offered no tools"
    );
    let asked = review["messages"].to_string();
    assert!(
        asked.contains("read the code"),
        "the reviewer sees the task"
    );
    assert!(asked.contains("call.write_file"), "{asked}");
    let refused = result_for(&requests[2].json(), "w1");
    assert!(
        refused.contains("the reviewer the policy asks (agent_review) said no: writing x.txt is not part of the task."),
        "{refused}"
    );
    let events = events(&log);
    let review = all_of(&events, "review")[0];
    assert_eq!(review["approved"], false);
    assert_eq!(review["reviewer"], "fake/m");
    assert_eq!(review["call_id"], "w1");
    assert!(all_of(&events, "approval.request").is_empty());
    assert!(all_of(&events, "tool.call").is_empty());
    // The review's tokens count in the session's usage.
    assert!(fold_log(&log).unwrap().state.usage.input_tokens >= 50);
}

#[test]
fn agent_then_human_asks_the_person_only_after_the_reviewers_yes() {
    let (state, _project, child, fake) = start(
        &[("call.write_file", "agent_then_human")],
        "write x.txt",
        [
            write_x("w1").into(),
            Turn::text("YES - the task asks for x.txt.").into(),
            Turn::text("Done.").into(),
        ],
    );
    let (id, log, folded) = wait_for_pending(state.path());
    assert_eq!(all_of(&events(&log), "review")[0]["approved"], true);
    let question = &folded.state.pending_approvals[0].question;
    assert!(
        question.contains("the reviewer said yes: the task asks for x.txt."),
        "{question}"
    );
    answer_and_finish(state.path(), &id, child, "y\n");
    assert_eq!(workspace_file(&log, "x.txt").as_deref(), Some("x"));
    let events = events(&log);
    let answer = all_of(&events, "approval.answer")[0];
    assert_eq!(answer["answer"], "yes");
    assert_eq!(fake.requests().len(), 3);
}

#[test]
fn a_foreground_run_is_answered_on_its_terminal() {
    let state = tempfile::tempdir().unwrap();
    let project = project_with(&[("call.write_file", "ask")]);
    let _fake = fake_model(
        state.path(),
        [write_x("w1").into(), Turn::text("Done.").into()],
    );
    let mut run = chock(state.path());
    run.arg("run").arg(project.path()).arg("write x.txt");
    let out = on_a_terminal(&run, "allow it? [y/n]", "y");
    let screen = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{screen}");
    assert!(
        screen.contains("chock asks: allow call.write_file?"),
        "{screen}"
    );
    let log = only_log(state.path());
    assert_eq!(workspace_file(&log, "x.txt").as_deref(), Some("x"));
    let events = events(&log);
    assert_eq!(all_of(&events, "approval.answer")[0]["by"], "terminal");
}

#[test]
fn a_conversation_near_the_window_is_compacted_and_the_fold_starts_from_the_summary() {
    let state = tempfile::tempdir().unwrap();
    let project = project_with(&[]);
    let fake = FakeModel::with([
        write_x("w1").usage(350, 10).into(),
        Turn::text("SUMMARY: the person asked for x.txt and it was written.")
            .usage(30, 12)
            .into(),
        Turn::text("Done.").into(),
    ]);
    let config = fake
        .config_zon(Wire::OpenAi, "m")
        .replace("    .model =", "    .context_window = 400,\n    .model =");
    write_config(state.path(), &config);
    finish(start_session(state.path(), project.path(), "write x.txt"));

    let log = only_log(state.path());
    let requests = fake.requests();
    assert_eq!(requests.len(), 3);
    let summarise = requests[1].json();
    assert!(
        summarise["messages"].to_string().contains("write x.txt"),
        "the older part is what is summarised"
    );
    let after = requests[2].json();
    let first = after["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .unwrap();
    let text = first["content"].to_string();
    assert!(
        text.contains("A summary of the conversation so far"),
        "{text}"
    );
    assert!(
        text.contains("SUMMARY: the person asked for x.txt"),
        "{text}"
    );
    assert!(
        !after["messages"].to_string().contains("\"write x.txt\""),
        "the person's message was replaced by the summary"
    );
    // The call and its result are kept whole after the summary.
    assert!(result_for(&after, "w1").contains("x.txt"));

    let events = events(&log);
    let compaction = all_of(&events, "compaction")[0];
    let user = all_of(&events, "user.message")[0];
    assert_eq!(compaction["up_to"], user["id"]);
    assert_eq!(compaction["usage"]["output_tokens"], 12);
    let folded = fold_log(&log).unwrap();
    assert!(matches!(
        folded.state.conversation[0],
        Message::Summary { .. }
    ));
    assert!(matches!(folded.state.status, Status::Ended { .. }));
}

#[test]
fn a_promise_still_binds_a_session_carried_on_by_another_process() {
    let (state, _project, child, fake) = start(
        &[],
        "promise",
        [
            call_turn(
                "p1",
                "restrict_self",
                json!({"rules": [{"action": "call.*", "decision": "deny"}]}),
            ),
            Turn::text("Promised.").into(),
            write_x("w1").into(),
            Turn::text("Refused, as promised.").into(),
        ],
    );
    finish(child);
    let log = only_log(state.path());
    let id = log
        .parent()
        .unwrap()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let out = chock(state.path())
        .args(["run", "--continue", &id, "now write x.txt"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_success(&out);
    assert!(workspace_file(&log, "x.txt").is_none());
    let refused = result_for(&fake.requests()[3].json(), "w1");
    assert!(refused.contains("promise 1"), "{refused}");
}

#[test]
fn ctrl_c_while_a_question_waits_ends_the_session_interrupted() {
    let (state, _project, child, _fake) = start(
        &[],
        "tidy up",
        [call_turn(
            "q1",
            "ask_user",
            json!({"question": "which branch?"}),
        )],
    );
    let (id, log, _) = wait_for_pending(state.path());
    interrupt(&child);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("ended: interrupted"), "{stderr}");
    assert_ended(&log, EndReason::Interrupted);
    assert!(
        !StateDir::at(state.path()).approve_socket(&id).exists(),
        "the socket goes with the session"
    );
}
