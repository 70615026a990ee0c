//! `chock run` as a person runs it: a config.zon naming the fake model, a
//! real git project, a real state directory; the log is folded afterwards.

use std::path::Path;
use std::process::Output;

use chock_log::event::EndReason;
use chock_log::fold::Status;
use chock_log::fold_log;
use chock_testkit::{FakeModel, Reply, TempProject, Turn, Wire};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::chock;
use super::kit::{
    assert_ended, assert_success, failed, fake_model, interrupt, log_values, of_call, only_log,
    project_with, rules_zon, run_session, start_session, write_config, write_x,
};

fn run(state: &Path, project: &Path, message: &str, extra: &[&str]) -> Output {
    chock(state)
        .arg("run")
        .args(extra)
        .arg(project)
        .arg(message)
        .output()
        .unwrap()
}

/// A session of a fresh project whose model, configured as `model` over
/// `wire`, answers `replies`: its output, and its state dir.
fn session(wire: Wire, model: &str, replies: Vec<Reply>) -> (Output, tempfile::TempDir) {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let fake = FakeModel::with(replies);
    write_config(state.path(), &fake.config_zon(wire, model));
    let out = run_session(state.path(), project.path(), "hi");
    (out, state)
}

#[test]
fn a_session_edits_a_file_and_its_log_folds_to_done() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    project.write("greeting.txt", "hello\n");
    project.commit_all("a greeting");
    let fake = FakeModel::with([
        Turn::text("Changing the greeting.")
            .call(
                "e1",
                "edit_file",
                &json!({"path": "greeting.txt", "old_text": "hello", "new_text": "hello, world"}),
            )
            .into(),
        Turn::text("The greeting now says hello, world.").into(),
    ]);
    write_config(state.path(), &fake.config_zon(Wire::OpenAi, "tiny"));
    let out = run(state.path(), project.path(), "greet the world", &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Changing the greeting.\nThe greeting now says hello, world.\n"
    );
    assert!(stderr.contains("ended: done"), "{stderr}");
    // The edit is made in the session's workspace, not in the project.
    assert_eq!(project.read("greeting.txt"), "hello\n");
    let folded = fold_log(&only_log(state.path())).unwrap();
    let workspace = folded.state.workspace.as_ref().unwrap();
    assert_eq!(
        std::fs::read_to_string(workspace.dir.join("greeting.txt")).unwrap(),
        "hello, world\n"
    );
    assert_eq!(
        folded.state.status,
        Status::Ended {
            reason: EndReason::Done,
            detail: String::new()
        }
    );
    assert_eq!(folded.state.model.as_deref(), Some("fake/tiny"));
    let first = &fake.requests()[0].json();
    assert_eq!(first["model"], "tiny");
    assert_eq!(first["messages"][1]["content"], "greet the world");
}

#[test]
fn model_overrides_the_config_for_one_session() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let fake = FakeModel::with([Turn::text("hi").into()]);
    write_config(
        state.path(),
        &fake.config_zon(Wire::Anthropic, "default-model"),
    );
    let out = run(
        state.path(),
        project.path(),
        "hi",
        &["--model", "fake/other-model"],
    );
    assert_success(&out);
    assert_eq!(fake.requests()[0].json()["model"], "other-model");
}

#[test]
fn a_provider_error_status_ends_with_exit_1_and_a_clear_ending_in_the_log() {
    let (out, state) = session(Wire::OpenAi, "m", vec![Reply::error(400, "overloaded")]);
    let stderr = failed(&out);
    assert!(
        stderr.contains("ended: error: provider 'fake' answered HTTP 400: overloaded"),
        "{stderr}"
    );
    assert_ended(&only_log(state.path()), EndReason::Error);
}

#[test]
fn a_cut_stream_ends_with_exit_1_and_says_the_stream_broke_off() {
    // Cut after its first text: a stream cut before any token is retried.
    let cut = Reply::Cut {
        turn: Turn::text("half an answer"),
        after: 4,
    };
    let (out, _state) = session(Wire::Anthropic, "m", vec![cut]);
    let stderr = failed(&out);
    assert!(
        stderr.contains("broke off before the turn ended"),
        "{stderr}"
    );
}

#[test]
fn with_no_provider_configured_the_error_shows_the_block_to_write() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let out = run_session(state.path(), project.path(), "hi");
    let config = state.path().join("config/chock/config.zon");
    assert_eq!(
        failed(&out),
        format!(
            "chock: no model provider is configured: write this to {} (or pass --model instance/model naming one):

.{{
    .providers = .{{
        .local = .{{ .kind = .openai, .base_url = \"http://127.0.0.1:11434/v1\" }},
    }},
    .model = \"local/qwen2.5-coder\",
}}

",
            config.display()
        )
    );
    assert!(
        !state.path().join("sessions").exists(),
        "no session was started"
    );
}

#[test]
fn a_config_with_a_mistake_names_its_line() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    write_config(state.path(), ".{\n    .model = 5,\n}\n");
    let stderr = failed(&run_session(state.path(), project.path(), "hi"));
    assert!(stderr.contains("config.zon: line 2, column 14"), "{stderr}");
}

#[test]
fn ctrl_c_during_a_slow_answer_ends_the_session_interrupted() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let fake = fake_model(
        state.path(),
        [Turn::text("slow")
            .delay(std::time::Duration::from_secs(30))
            .into()],
    );
    let child = start_session(state.path(), project.path(), "hi");
    fake.wait_for_requests(1, std::time::Duration::from_secs(20));
    interrupt(&child);
    let stderr = failed(&child.wait_with_output().unwrap());
    assert!(
        stderr.contains("ended: interrupted: interrupted by the person; the turn was abandoned"),
        "{stderr}"
    );
    assert_ended(&only_log(state.path()), EndReason::Interrupted);
}

#[test]
fn a_script_provider_runs_a_whole_session_offline() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    project.write(
        "demo.script",
        concat!(
            "# write a file, then say so\n",
            "{\"text\": \"Writing hello.txt.\", \"tool_calls\": [{\"name\": \"write_file\", \"arguments\": {\"path\": \"hello.txt\", \"content\": \"hello\\n\"}}]}\n",
            "{\"text\": \"hello.txt says hello.\"}\n",
        ),
    );
    project.commit_all("a demo script");
    write_config(
        state.path(),
        ".{\n    .providers = .{ .demo = .{ .kind = .script, .path = \"demo.script\" } },\n    .model = \"demo/script\",\n}\n",
    );
    let out = run_session(state.path(), project.path(), "say hello");
    assert_success(&out);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Writing hello.txt.\nhello.txt says hello.\n"
    );
    let folded = fold_log(&only_log(state.path())).unwrap();
    // Written in the session's workspace, not in the project.
    assert!(!project.join("hello.txt").exists());
    let workspace = folded.state.workspace.as_ref().unwrap();
    assert_eq!(
        std::fs::read_to_string(workspace.dir.join("hello.txt")).unwrap(),
        "hello\n"
    );
    assert_eq!(folded.state.model.as_deref(), Some("demo/script"));
    assert_eq!(folded.state.conversation.len(), 4);
}

#[test]
fn a_deny_rule_refuses_the_call_records_the_decision_and_tells_the_model() {
    let state = tempfile::tempdir().unwrap();
    let project = project_with(&[("call.write_file", "deny")]);
    let fake = fake_model(
        state.path(),
        [
            write_x("w1").into(),
            Turn::text("I may not write files here.").into(),
        ],
    );
    let out = run_session(state.path(), project.path(), "write x.txt");
    assert_success(&out);
    assert!(
        !project.join("x.txt").exists(),
        "the refused call did not run"
    );
    let events = log_values(&only_log(state.path()));
    // The first decision is workspace.integrate, read at session start.
    let decision = of_call(&events, "decision", "w1").unwrap();
    assert_eq!(decision["action"], "call.write_file");
    assert_eq!(decision["decision"], "deny");
    assert_eq!(decision["layer"], "project");
    assert_eq!(decision["call_id"], "w1");
    assert!(
        events.iter().all(|e| e["type"] != "tool.call"),
        "a refused call is not a tool.call"
    );
    let second = fake.requests()[1].json();
    let result = second["messages"][3]["content"].as_str().unwrap();
    assert!(
        result.starts_with("call.write_file is denied by the policy."),
        "{result}"
    );
}

#[test]
fn a_model_the_policy_refuses_is_not_used_and_no_session_starts() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    project.write_chock_zon(&rules_zon(&[("provider.fake", "deny")]));
    let fake = fake_model(state.path(), []);
    let stderr = failed(&run_session(state.path(), project.path(), "hi"));
    assert!(
        stderr.starts_with("chock: the policy does not let this session use the model 'fake/m'"),
        "{stderr}"
    );
    assert!(stderr.contains("provider.fake"), "{stderr}");
    assert!(fake.requests().is_empty());
    assert!(!state.path().join("sessions").exists());
}
