//! Approvals end to end: a real `chock run` whose policy says ask waits on
//! its approve.sock, and `chock approve` (a second real process) answers.
//! The log of each is folded and checked.

use std::path::Path;
use std::process::{Child, Stdio};

use chock_log::fold::Status;
use chock_log::{SessionId, StateDir, fold_log};
use chock_testkit::{FakeModel, TempProject, Turn, Wire};

use super::chock;
use super::kit::{ASK_WRITE, write_x};
use super::kit::{approve, log_values, wait_for_pending, write_config};
use super::kit::{assert_success, finish};

/// Starts a session whose model writes x.txt under an ask rule.
fn start_asking_session(state: &Path, project: &TempProject) -> (Child, FakeModel) {
    project.write_chock_zon(ASK_WRITE);
    // A session works in a worktree of the committed tree.
    project.commit_all("an ask rule for write_file");
    let fake = FakeModel::with([write_x("w1").into(), Turn::text("Done.").into()]);
    write_config(state, &fake.config_zon(Wire::OpenAi, "m"));
    let child = chock(state)
        .arg("run")
        .arg(project.path())
        .arg("write x.txt")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    (child, fake)
}

fn of_type<'a>(events: &'a [serde_json::Value], kind: &str) -> &'a serde_json::Value {
    events.iter().find(|e| e["type"] == kind).unwrap()
}

#[test]
fn an_ask_waits_and_a_yes_through_chock_approve_runs_the_call() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let (child, fake) = start_asking_session(state.path(), &project);
    let (id, log, folded) = wait_for_pending(state.path());
    assert_eq!(folded.state.status, Status::WaitingForApproval);
    let pending = &folded.state.pending_approvals[0];
    assert_eq!(pending.action, "call.write_file");
    assert!(
        pending.question.contains("write_file"),
        "{}",
        pending.question
    );
    assert!(
        !project.join("x.txt").exists(),
        "nothing runs before the answer"
    );

    let out = approve(state.path(), id.as_str(), "maybe\ny\n");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("please answer y or n"), "{stderr}");
    assert!(stderr.contains("allowed call.write_file"), "{stderr}");

    finish(child);
    assert_eq!(workspace_file(&log, "x.txt"), "x");
    let events = log_values(&log);
    let request = of_type(&events, "approval.request");
    let answer = of_type(&events, "approval.answer");
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
    let project = TempProject::git();
    let (child, fake) = start_asking_session(state.path(), &project);
    let (id, log, _) = wait_for_pending(state.path());
    let out = approve(state.path(), id.as_str(), "n\n");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("refused call.write_file"), "{stderr}");
    finish(child);
    assert!(
        !project.join("x.txt").exists(),
        "the refused call did not run"
    );
    let events = log_values(&log);
    assert_eq!(of_type(&events, "approval.answer")["answer"], "no");
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
    let fake = FakeModel::with([Turn::text("Hi.").into()]);
    write_config(state.path(), &fake.config_zon(Wire::OpenAi, "m"));
    let run = chock(state.path())
        .arg("run")
        .arg(project.path())
        .arg("hi")
        .output()
        .unwrap();
    assert!(run.status.success());
    let id = std::fs::read_dir(state.path().join("sessions"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .file_name();
    let id = id.to_string_lossy();
    let log = StateDir::at(state.path()).log_path(&SessionId::parse(&id).unwrap());
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
    let project = TempProject::git();
    let (mut child, _fake) = start_asking_session(state.path(), &project);
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
    use std::io::BufRead as _;

    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let mut daemon = chock(state.path())
        .arg("daemon")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(daemon.stdout.take().unwrap()).lines();
    let line = lines.next().unwrap().unwrap();
    let address =
        chock_control::Address::parse(line.strip_prefix("listening on ").unwrap()).unwrap();

    let (child, _fake) = start_asking_session(state.path(), &project);
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
    let _ = daemon.kill();
    let _ = daemon.wait();
    assert_success(&run);
    assert_eq!(workspace_file(&log, "x.txt"), "x");
    let events = log_values(&log);
    assert_eq!(of_type(&events, "approval.answer")["answer"], "yes");
    assert!(fold_log(&log).unwrap().state.pending_approvals.is_empty());
}

/// A file as the session left it in its workspace (the session's git
/// worktree, not the project).
fn workspace_file(log: &Path, name: &str) -> String {
    let folded = fold_log(log).unwrap();
    let dir = folded.state.workspace.expect("a workspace.open event").dir;
    std::fs::read_to_string(dir.join(name)).unwrap()
}

#[test]
fn another_user_who_reaches_approve_sock_is_refused_and_the_question_stays_open() {
    use std::os::unix::fs::PermissionsExt;
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let (child, _fake) = start_asking_session(state.path(), &project);
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
        of_type(&log_values(&log), "approval.answer")["answer"],
        "no"
    );
}
