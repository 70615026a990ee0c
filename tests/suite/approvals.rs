//! Approvals end to end: a real `chock run` whose policy says ask waits on
//! its approve.sock, and `chock approve` (a second real process) answers.
//! The log of each is folded and checked.

use std::path::Path;
use std::process::Child;

use chock_log::fold::Status;
use chock_log::{SessionId, StateDir, fold_log};
use chock_testkit::{FakeModel, TempProject, Turn};

use super::kit::{
    approve, approve_saying, ask_write_project, assert_asks, assert_success, fake_model, finish,
    first_of, log_values, only_log, run_session, start_daemon, start_session, wait_for_pending,
    workspace_file, write_x,
};

/// Starts a session in `state` whose model writes x.txt under an ask rule:
/// the project, the running `chock run` and its model.
fn start_asking_session(state: &Path) -> (TempProject, Child, FakeModel) {
    let project = ask_write_project();
    let fake = fake_model(state, [write_x("w1").into(), Turn::text("Done.").into()]);
    let child = start_session(state, project.path(), "write x.txt");
    (project, child, fake)
}

#[test]
fn an_ask_waits_and_a_yes_through_chock_approve_runs_the_call() {
    let state = tempfile::tempdir().unwrap();
    let (project, child, fake) = start_asking_session(state.path());
    let (id, log, folded) = wait_for_pending(state.path());
    assert_eq!(folded.state.status, Status::WaitingForApproval);
    assert_asks(&folded, "call.write_file", "write_file");
    assert!(
        !project.join("x.txt").exists(),
        "nothing runs before the answer"
    );

    approve_saying(
        state.path(),
        id.as_str(),
        "maybe\ny\n",
        &["please answer y or n", "allowed call.write_file"],
    );

    finish(child);
    assert_eq!(workspace_file(&log, "x.txt").as_deref(), Some("x"));
    let events = log_values(&log);
    let request = first_of(&events, "approval.request");
    let answer = first_of(&events, "approval.answer");
    assert_eq!(request["action"], "call.write_file");
    assert_eq!(answer["request_id"], request["request_id"]);
    assert_eq!(answer["answer"], "yes");
    assert!(events.iter().any(|e| e["type"] == "tool.call"));
    let folded = fold_log(&log).unwrap();
    assert!(folded.state.pending_approvals.is_empty());
    assert!(matches!(folded.state.status, Status::Ended { .. }));
    assert_eq!(fake.requests().len(), 2);
    assert!(
        !StateDir::at(state.path()).approve_socket(&id).exists(),
        "the socket goes with the session"
    );
}

#[test]
fn a_no_through_chock_approve_refuses_and_names_the_rule_that_would_allow_it() {
    let state = tempfile::tempdir().unwrap();
    let (project, child, fake) = start_asking_session(state.path());
    let (id, log, _) = wait_for_pending(state.path());
    approve_saying(
        state.path(),
        id.as_str(),
        "n\n",
        &["refused call.write_file"],
    );
    finish(child);
    assert!(
        !project.join("x.txt").exists(),
        "the refused call did not run"
    );
    let events = log_values(&log);
    assert_eq!(first_of(&events, "approval.answer")["answer"], "no");
    assert!(!events.iter().any(|e| e["type"] == "tool.call"));
    let result = fake.requests()[1].json()["messages"][3]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        result.starts_with("call.write_file was refused"),
        "{result}"
    );
    assert!(result.contains("to permit it"), "{result}");
    assert!(result.contains("call.write_file"), "{result}");
    assert!(fold_log(&log).unwrap().state.pending_approvals.is_empty());
}

#[test]
fn approve_names_an_unknown_session_and_one_with_nothing_pending() {
    let state = tempfile::tempdir().unwrap();
    let unknown = SessionId::new();
    let out = approve(state.path(), unknown.as_str(), "y\n");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(unknown.as_str()), "{stderr}");

    // A finished session: nothing pending, and the log is left as it was.
    let project = TempProject::git();
    let _fake = fake_model(state.path(), [Turn::text("Hi.").into()]);
    let run = run_session(state.path(), project.path(), "hi");
    assert!(run.status.success());
    let log = only_log(state.path());
    let id = log.parent().unwrap().file_name().unwrap().to_string_lossy();
    let before = std::fs::read(&log).unwrap();
    let out = approve(state.path(), &id, "y\n");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("nothing to approve"), "{stderr}");
    assert_eq!(std::fs::read(&log).unwrap(), before);
}

#[test]
fn approve_says_so_when_nobody_listens_on_the_socket() {
    let state = tempfile::tempdir().unwrap();
    let (_project, mut child, _fake) = start_asking_session(state.path());
    let (id, log, _) = wait_for_pending(state.path());
    // The session dies without an ending: its log still says pending, and
    // its socket file is left with nobody behind it.
    child.kill().unwrap();
    child.wait().unwrap();
    let out = approve(state.path(), id.as_str(), "y\n");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("nothing is listening"), "{stderr}");
    assert_eq!(fold_log(&log).unwrap().state.pending_approvals.len(), 1);
}

#[tokio::test(flavor = "current_thread")]
async fn a_yes_through_the_daemons_answer_verb_runs_the_call() {
    let state = tempfile::tempdir().unwrap();
    let (daemon, address) = start_daemon(state.path());
    let (project, child, _fake) = start_asking_session(state.path());
    let (id, log, folded) = wait_for_pending(state.path());
    let request = folded.state.pending_approvals[0].request_id.clone();
    let client = chock_control::Client::new(address);
    let canonical = project.path().canonicalize().unwrap();
    let wrong = client
        .answer(&canonical, id.as_str(), "999", chock_control::Answer::Yes)
        .await;
    assert!(wrong.is_err(), "an answer to no pending request is refused");
    client
        .answer(
            &canonical,
            id.as_str(),
            &request,
            chock_control::Answer::Yes,
        )
        .await
        .unwrap();
    let run = child.wait_with_output().unwrap();
    drop(daemon);
    assert_success(&run);
    assert_eq!(workspace_file(&log, "x.txt").as_deref(), Some("x"));
    let events = log_values(&log);
    assert_eq!(first_of(&events, "approval.answer")["answer"], "yes");
    assert!(fold_log(&log).unwrap().state.pending_approvals.is_empty());
}

#[test]
fn another_user_who_reaches_approve_sock_is_refused_and_the_question_stays_open() {
    use std::os::unix::fs::PermissionsExt;
    let state = tempfile::tempdir().unwrap();
    let (project, child, _fake) = start_asking_session(state.path());
    let (id, log, folded) = wait_for_pending(state.path());
    let request = folded.state.pending_approvals[0].request_id.clone();
    // Open every directory on the way and the socket itself, so the peer's
    // uid is the only thing that can refuse.
    let socket = StateDir::at(state.path()).approve_socket(&id);
    let mut dir = socket.parent();
    while let Some(d) = dir.filter(|d| d.starts_with(state.path())) {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
        dir = d.parent();
    }
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o666)).unwrap();

    let reply = chock_testkit::exchange_as_other_user(&socket, &format!("answer {request} yes\n"));
    assert!(reply.starts_with("error "), "{reply}");
    assert!(reply.contains("uid"), "{reply}");
    assert!(
        reply.contains("the user this session runs as") && !reply.contains("daemon"),
        "a session's socket speaks for the session: {reply}"
    );
    let folded = fold_log(&log).unwrap();
    assert_eq!(folded.state.status, Status::WaitingForApproval);
    assert!(
        !log_values(&log)
            .iter()
            .any(|e| e["type"] == "approval.answer"),
        "a refused peer's answer is not recorded"
    );
    assert!(!project.join("x.txt").exists());

    // The person's own answer still reaches it.
    let out = approve(state.path(), id.as_str(), "n\n");
    assert_success(&out);
    finish(child);
    assert_eq!(
        first_of(&log_values(&log), "approval.answer")["answer"],
        "no"
    );
}
