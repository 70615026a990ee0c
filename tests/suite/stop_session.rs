//! `chock stop` reaching Chock's own sessions: a real `chock run` whose
//! fake model asks for a command every turn, a stop written with the real
//! `chock stop` while it runs, and the refusal seen in the tool result, the
//! session's `decision` event, the machine's decision log and the session's
//! ending; then `chock resume` on a pseudo-terminal and `chock run
//! --continue` carrying the session on. The repository's `git status`
//! stays clean throughout.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use chock_log::event::EndReason;
use chock_log::{SessionId, StateDir, fold_log};
use chock_testkit::{FakeModel, Reply, Turn, wait_for};
use serde_json::{Value, json};

use super::kit::{
    assert_ended, assert_success, call_turn, failed, fake_model, log_values, of_call, result_of,
    sessions, workspace_dir,
};
use super::{Machine, git, on_a_terminal};

/// A command that says it runs (`ready` in its workspace) and waits until
/// the test puts `go` there: the session is mid-call while the test acts.
pub(super) fn held(id: &str) -> Reply {
    held_then(id, "true")
}

/// [`held`], then `then` (a shell line) once released.
fn held_then(id: &str, then: &str) -> Reply {
    let line = format!("touch ready; while [ ! -e go ]; do sleep 0.05; done; {then}");
    call_turn(id, "run_command", json!({"command": ["sh", "-c", line]}))
}

/// The model's turn that runs `echo <word>`.
fn echo(id: &str, word: &str) -> Reply {
    call_turn(id, "run_command", json!({"command": ["echo", word]}))
}

/// A model on `m` whose first call is [`held`] and whose second, `c2`, runs
/// `echo`, then says it is done.
pub(super) fn held_then_echo(m: &Machine) -> FakeModel {
    fake_model(
        &m.state(),
        [
            held("c1"),
            echo("c2", "refused"),
            Turn::text("Done.").into(),
        ],
    )
}

/// `chock run . work` in `repo` as a person on `m`, started in the
/// background with its output piped.
pub(super) fn start(m: &Machine, repo: &Path) -> Child {
    m.chock(repo)
        .args(["run", ".", "work"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The only session on `m` once its held command runs: its id, log and
/// workspace.
pub(super) fn wait_held(m: &Machine) -> (SessionId, PathBuf, PathBuf) {
    let state = m.state();
    wait_for(Duration::from_secs(30), "the held command", || {
        let id = sessions(&state).into_iter().next()?;
        let log = StateDir::at(&state).log_path(&id);
        // The session's directory comes before its log, and a line may be
        // half written: read what is there, as it is.
        let text = std::fs::read_to_string(&log).ok()?;
        let events: Vec<Value> = text
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect();
        events
            .iter()
            .any(|e| e["type"] == "workspace.open")
            .then_some(())?;
        let workspace = workspace_dir(&events);
        workspace
            .join("ready")
            .exists()
            .then_some((id, log, workspace))
    })
}

/// Lets the held command finish.
pub(super) fn release(workspace: &Path) {
    std::fs::write(workspace.join("go"), "").unwrap();
}

/// `git status --porcelain` of `repo`, untracked files included, asserted
/// empty.
fn assert_clean(repo: &Path, when: &str) {
    let status = git(repo, &["status", "--porcelain", "--untracked-files=all"]);
    assert!(
        status.trim().is_empty(),
        "git status {when} a stop: {status}"
    );
}

/// The session's `decision` events for call `call`.
fn decisions_for<'a>(events: &'a [Value], call: &str) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|e| e["type"] == "decision" && e["call_id"] == call)
        .collect()
}

/// Asserts that the stop refused call `call`: its result is the stop's
/// refusal (saying `says`), a `decision` names the stop as its rule, and
/// the call never ran (no `tool.call`).
pub(super) fn assert_call_stopped(events: &[Value], call: &str, says: &str) {
    let result = result_of(events, call);
    let content = result["output"].as_str().unwrap();
    assert!(content.starts_with("stopped: "), "{content}");
    assert!(content.contains(says), "{content}");
    assert_eq!(result["ok"], false);
    let stop = decisions_for(events, call)
        .into_iter()
        .find(|d| d["layer"] == "stop")
        .unwrap_or_else(|| panic!("no decision names the stop: {events:#?}"));
    assert_eq!(stop["decision"], "deny");
    assert!(
        stop["rule"].as_str().unwrap().starts_with("the stop "),
        "{stop}"
    );
    assert!(
        of_call(events, "tool.call", call).is_none(),
        "a stopped call does not run"
    );
}

/// The decision log's `block` lines that Chock's sessions wrote.
fn session_blocks(m: &Machine) -> Vec<Value> {
    m.decisions_from("session")
        .into_iter()
        .filter(|line| line["type"] == "block")
        .collect()
}

/// `chock resume` in `repo`, the repository's name typed at its prompt.
fn resume_on_a_terminal(m: &Machine, repo: &Path) -> Output {
    let mut command = m.chock(repo);
    command.arg("resume");
    on_a_terminal(&command, "to resume agents", "shop")
}

#[test]
fn a_stop_written_mid_session_refuses_the_next_call_and_resume_then_continue_carry_it_on() {
    let (m, repo) = Machine::with_shop();
    let fake = fake_model(
        &m.state(),
        [
            held("c1"),
            echo("c2", "refused"),
            echo("c3", "carried"),
            Turn::text("Done.").into(),
        ],
    );
    assert_clean(&repo, "before");
    let child = start(&m, &repo);
    let (id, log, workspace) = wait_held(&m);
    m.ok(&repo, &["stop", "--reason", "reviewing the migration"]);
    assert_clean(&repo, "during");
    release(&workspace);
    let out = child.wait_with_output().unwrap();
    let stderr = failed(&out);
    assert!(
        stderr.contains("ended: stopped: stopped: reviewing the migration"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("chock run --continue {}", id.as_str())),
        "{stderr}"
    );

    let events = log_values(&log);
    assert!(result_of(&events, "c1")["ok"] == true);
    assert_call_stopped(
        &events,
        "c2",
        "reviewing the migration (stopped by ada@example.org at ",
    );
    assert_ended(&log, EndReason::Stopped);
    assert_eq!(
        fake.requests().len(),
        2,
        "no model call after the refusal: a stopped session ends its turn"
    );
    let blocks = session_blocks(&m);
    assert_eq!(blocks.len(), 1, "{blocks:?}");
    assert_eq!(blocks[0]["reason"], "stopped");
    assert_eq!(blocks[0]["agent"], "chock");
    assert_eq!(blocks[0]["action"], "exec.path.echo");
    assert!(
        blocks[0]["detail"]
            .as_str()
            .unwrap()
            .contains("reviewing the migration"),
        "{blocks:?}"
    );
    assert!(workspace.is_dir(), "the workspace is kept");
    assert_clean(&repo, "after the session of");

    let resumed = resume_on_a_terminal(&m, &repo);
    assert!(
        resumed.status.success(),
        "{}",
        String::from_utf8_lossy(&resumed.stdout)
    );
    assert_clean(&repo, "after the resume of");
    let carried = m.run(&repo, &["run", "--continue", id.as_str(), "go on"]);
    assert_success(&carried);
    let events = log_values(&log);
    assert_eq!(result_of(&events, "c3")["ok"], true);
    assert!(
        result_of(&events, "c3")["output"]
            .as_str()
            .unwrap()
            .contains("carried")
    );
    assert_ended(&log, EndReason::Done);
    assert_clean(&repo, "after carrying on from");
}

#[test]
fn a_stop_in_force_refuses_a_new_session_and_a_continue_before_the_model_is_called() {
    let (m, repo) = Machine::with_shop();
    let fake = fake_model(&m.state(), [Turn::text("Hello.").into()]);
    assert_success(&m.run(&repo, &["run", ".", "hi"]));
    let id = sessions(&m.state()).remove(0);
    let log = StateDir::at(m.state()).log_path(&id);
    let before = std::fs::read(&log).unwrap();
    m.ok(&repo, &["stop", "--reason", "freeze"]);

    let fresh = m.run(&repo, &["run", ".", "more"]);
    let stderr = failed(&fresh);
    assert!(stderr.contains("stopped: freeze (stopped by"), "{stderr}");
    assert!(stderr.contains("the session was not started"), "{stderr}");
    assert_eq!(sessions(&m.state()).len(), 1, "no new session exists");

    let carried = m.run(&repo, &["run", "--continue", id.as_str(), "more"]);
    let stderr = failed(&carried);
    assert!(stderr.contains("stopped: freeze (stopped by"), "{stderr}");
    assert!(
        stderr.contains(&format!("chock run --continue {}", id.as_str())),
        "{stderr}"
    );
    assert_eq!(std::fs::read(&log).unwrap(), before, "the log is untouched");
    assert_eq!(fake.requests().len(), 1, "the model was not called again");
    assert_clean(&repo, "while refusing sessions under");
}

#[test]
fn a_stop_for_another_agent_does_not_reach_a_session_and_one_for_chock_does() {
    let (m, repo) = Machine::with_shop();
    let _fake = fake_model(
        &m.state(),
        [echo("c1", "still"), Turn::text("Done.").into()],
    );
    m.ok(
        &repo,
        &["stop", "--agent", "codex", "--reason", "codex only"],
    );
    assert_success(&m.run(&repo, &["run", ".", "work"]));
    let id = sessions(&m.state()).remove(0);
    let events = log_values(&StateDir::at(m.state()).log_path(&id));
    assert_eq!(result_of(&events, "c1")["ok"], true);

    let (m, repo) = Machine::with_shop();
    let fake = fake_model(&m.state(), [Turn::text("Hello.").into()]);
    m.ok(
        &repo,
        &["stop", "--agent", "chock", "--reason", "chock only"],
    );
    let stderr = failed(&m.run(&repo, &["run", ".", "work"]));
    assert!(
        stderr.contains("stopped: chock only (stopped for chock by"),
        "{stderr}"
    );
    assert!(fake.requests().is_empty());
}

#[test]
fn a_session_waiting_on_an_approval_does_not_run_the_call_when_a_stop_arrives_even_on_yes() {
    let (m, repo) = Machine::with_shop();
    std::fs::write(
        repo.join("chock.zon"),
        super::kit::rules_zon(&[("call.write_file", "ask")]),
    )
    .unwrap();
    git(&repo, &["add", "chock.zon"]);
    git(&repo, &["commit", "-qm", "rules"]);
    let _fake = fake_model(
        &m.state(),
        [
            call_turn("w1", "write_file", json!({"path": "x.txt", "content": "x"})),
            Turn::text("Done.").into(),
        ],
    );
    let child = start(&m, &repo);
    let id = super::kit::wait_for_question(&m.state(), "call.write_file");
    m.ok(&repo, &["stop", "--reason", "not now"]);
    let answered = super::kit::approve(&m.state(), id.as_str(), "y\n");
    assert_success(&answered);
    let out = child.wait_with_output().unwrap();
    failed(&out);
    let log = StateDir::at(m.state()).log_path(&id);
    let events = log_values(&log);
    assert_call_stopped(&events, "w1", "not now");
    assert_ended(&log, EndReason::Stopped);
    assert!(
        !workspace_dir(&events).join("x.txt").exists(),
        "the write never ran"
    );
}

/// A way a stop file can be bad: what the refusal says, and how to make it.
type BadStop = (&'static str, fn(&Path));

#[test]
fn a_bad_stop_file_written_mid_session_refuses_with_its_reason_and_the_log_stays_whole() {
    let mut bad: Vec<BadStop> = vec![
        ("cannot be parsed", |file| {
            std::fs::write(file, r#"{"version": 1, "scope": "re"#).unwrap();
        }),
        ("is a directory", |file| std::fs::create_dir(file).unwrap()),
        ("is a symlink", |file| {
            std::os::unix::fs::symlink("/nonexistent/stop.json", file).unwrap();
        }),
    ];
    // Root reads a file whatever its mode: the unreadable stop is tried
    // where the suite runs unprivileged (the test below).
    if !rustix::process::geteuid().is_root() {
        bad.push(("cannot be read", |file| {
            std::fs::write(file, r#"{"version": 1, "scope": "repo"}"#).unwrap();
            std::fs::set_permissions(file, std::os::unix::fs::PermissionsExt::from_mode(0o000))
                .unwrap();
        }));
    }
    for (says, make) in bad {
        let (m, repo) = Machine::with_shop();
        let _fake = held_then_echo(&m);
        let child = start(&m, &repo);
        let (_, log, workspace) = wait_held(&m);
        std::fs::create_dir_all(repo.join(".chock")).unwrap();
        make(&repo.join(".chock/stop.json"));
        release(&workspace);
        failed(&child.wait_with_output().unwrap());
        let events = log_values(&log);
        assert_call_stopped(&events, "c2", says);
        assert_call_stopped(&events, "c2", "so every agent is refused");
        let folded = fold_log(&log).unwrap();
        assert!(folded.problems.is_empty(), "{says}: {:?}", folded.problems);
        assert_ended(&log, EndReason::Stopped);
    }
}

#[test]
fn a_connection_a_command_opens_after_a_stop_is_refused_and_the_session_ends_stopped() {
    let (m, repo) = Machine::with_shop();
    let port = super::run_network::origin("hello from the origin");
    std::fs::write(
        repo.join("chock.zon"),
        super::kit::rules_zon(super::run_network::RULES),
    )
    .unwrap();
    git(&repo, &["add", "chock.zon"]);
    git(&repo, &["commit", "-qm", "network rules"]);
    let curl = format!("curl -sS --max-time 20 http://allowed.test:{port}/ || true");
    let fake = fake_model(
        &m.state(),
        [
            held_then("c1", &curl),
            echo("c2", "never"),
            Turn::text("Done.").into(),
        ],
    );
    let child = m
        .chock(&repo)
        .args(["run", ".", "use the network"])
        .env("CHOCK_NET_RESOLVE", super::run_network::RESOLVE)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (_, log, workspace) = wait_held(&m);
    m.ok(&repo, &["stop", "--reason", "no network now"]);
    release(&workspace);
    failed(&child.wait_with_output().unwrap());
    let events = log_values(&log);
    let connect = events
        .iter()
        .find(|e| e["type"] == "decision" && e["action"] == "net.connect.test.allowed")
        .unwrap_or_else(|| panic!("no decision about the connection: {events:#?}"));
    assert_eq!(connect["layer"], "stop");
    assert_eq!(connect["decision"], "deny");
    let output = result_of(&events, "c1")["output"].as_str().unwrap();
    assert!(!output.contains("hello from the origin"), "{output}");
    assert!(output.contains("no network now"), "{output}");
    assert_ended(&log, EndReason::Stopped);
    assert!(
        of_call(&events, "tool.result", "c2").is_none(),
        "the turn ended"
    );
    assert_eq!(fake.requests().len(), 1, "no model call after the stop");
    let blocks = session_blocks(&m);
    assert_eq!(
        blocks[0]["action"], "net.connect.test.allowed",
        "{blocks:?}"
    );
}

#[test]
fn a_sessions_commands_carry_chock_session_and_the_git_dispatcher_refuses_their_commit_in_a_stop() {
    let (m, repo) = Machine::with_shop();
    let _fake = fake_model(
        &m.state(),
        [
            call_turn(
                "c1",
                "run_command",
                json!({"command": ["sh", "-c", "echo \"session=$CHOCK_SESSION\""]}),
            ),
            Turn::text("Done.").into(),
        ],
    );
    assert_success(&m.run(&repo, &["run", ".", "who am i"]));
    let id = sessions(&m.state()).remove(0);
    let events = log_values(&StateDir::at(m.state()).log_path(&id));
    let said = result_of(&events, "c1")["output"].as_str().unwrap();
    assert!(said.contains(&format!("session={}", id.as_str())), "{said}");

    // A commit made with that environment, through the git dispatcher,
    // while a stop is in force.
    let sync = m.run(&repo, &["sync", "--client", "claude-code"]);
    assert_success(&sync);
    m.ok(&repo, &["stop", "--reason", "hands off"]);
    std::fs::write(repo.join("file.txt"), "changed\n").unwrap();
    git(&repo, &["add", "file.txt"]);
    let commit = commit_as(&m, &repo, id.as_str());
    assert!(!commit.status.success(), "a session's commit passed a stop");
    let stderr = String::from_utf8_lossy(&commit.stderr);
    assert!(stderr.contains("hands off"), "{stderr}");
}

/// `git commit` in `repo` from a command of session `id`: its environment
/// names the session as a session's commands do.
fn commit_as(m: &Machine, repo: &Path, id: &str) -> Output {
    let mut cmd: Command = super::git_cmd(repo);
    cmd.args(["commit", "-q", "-m", "from a session"])
        .env("PATH", super::path_with_chock())
        .env("HOME", m.home())
        .env("CHOCK_STATE_DIR", m.state())
        .env("CHOCK_SESSION", id);
    cmd.output().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_the_daemon_runs_obeys_a_stop_written_mid_session() {
    let (m, repo) = Machine::with_shop();
    let _fake = held_then_echo(&m);
    let mut command = m.chock(&repo);
    command.arg("daemon");
    let mut daemon = super::kit::Running::spawn(command);
    let client = chock_control::Client::new(daemon.address()).with_timeout(Duration::from_secs(60));
    let started = client.start(&repo, "work").await.unwrap();
    let (_, log, workspace) = tokio::task::block_in_place(|| wait_held(&m));
    assert_eq!(log, started.log);
    m.ok(&repo, &["stop", "--reason", "daemon too"]);
    release(&workspace);
    tokio::task::block_in_place(|| {
        wait_for(Duration::from_secs(30), "the session's end", || {
            let folded = fold_log(&log).ok()?;
            matches!(folded.state.status, chock_log::Status::Ended { .. }).then_some(())
        });
    });
    let events = log_values(&log);
    assert_call_stopped(&events, "c2", "daemon too");
    assert_ended(&log, EndReason::Stopped);
    drop(daemon);
}

#[test]
fn resume_where_only_the_machine_wide_stop_is_in_force_names_resume_everywhere() {
    let (m, repo) = Machine::with_shop();
    m.ok(&repo, &["stop", "--everywhere", "--reason", "all of them"]);
    let out = m.run(&repo, &["resume"]);
    let stderr = failed(&out);
    assert!(stderr.contains("the machine-wide stop is"), "{stderr}");
    assert!(stderr.contains("all of them"), "{stderr}");
    assert!(stderr.contains("chock resume --everywhere"), "{stderr}");
    assert!(!stderr.contains("nothing to resume"), "{stderr}");
}

#[test]
fn a_directory_in_place_of_a_stop_file_gets_a_hint_to_remove_it_by_hand() {
    let (m, repo) = Machine::with_shop();
    std::fs::create_dir_all(repo.join(".chock/stop.json")).unwrap();
    let screen = resume_on_a_terminal(&m, &repo);
    let shown = String::from_utf8_lossy(&screen.stdout);
    assert!(shown.contains("is a directory"), "{shown}");
    assert!(
        shown.contains(&format!(
            "removes that directory by hand (`rm -r {}`)",
            repo.join(".chock/stop.json").display()
        )),
        "{shown}"
    );
    assert!(!shown.contains("(chock resume)"), "{shown}");
    assert!(
        repo.join(".chock/stop.json").is_dir(),
        "resume removes no directory"
    );
}

#[test]
fn a_bad_stop_file_refuses_for_an_unprivileged_user_too() {
    let Some((passed, _)) =
        super::rerun_unprivileged(&["suite::stop_session::a_bad_stop_file_written_mid_session"])
    else {
        return;
    };
    assert_eq!(passed, 1, "the bad stop files were not tried unprivileged");
}

#[test]
fn a_session_detached_to_the_daemon_while_a_stop_is_written_ends_stopped_without_a_model_call() {
    use std::io::BufRead as _;
    let (m, repo) = Machine::with_shop();
    let fake = held_then_echo(&m);
    let mut command = m.chock(&repo);
    command.arg("daemon");
    let _daemon = super::kit::Running::spawn(command);
    let session = start(&m, &repo);
    let (id, log, workspace) = wait_held(&m);
    let mut detach = m
        .chock(&repo)
        .args(["detach", id.as_str()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut said = std::io::BufReader::new(detach.stderr.take().unwrap()).lines();
    let waiting = said
        .find(|line| {
            line.as_ref()
                .is_ok_and(|l| l.contains("waiting for its next turn boundary"))
        })
        .expect("detach waits for the boundary");
    assert!(waiting.is_ok());
    m.ok(&repo, &["stop", "--reason", "handed over into a stop"]);
    release(&workspace);
    assert_eq!(detach.wait().unwrap().code(), Some(0));
    assert_eq!(session.wait_with_output().unwrap().status.code(), Some(8));
    wait_for(Duration::from_secs(30), "the adopted session's end", || {
        let folded = fold_log(&log).ok()?;
        matches!(
            folded.state.status,
            chock_log::Status::Ended {
                reason: EndReason::Stopped,
                ..
            }
        )
        .then_some(())
    });
    let events = log_values(&log);
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    let handover = kinds.iter().position(|k| *k == "handover").unwrap();
    assert_eq!(
        &kinds[handover + 1..handover + 3],
        ["session.end", "session.open"]
    );
    let end = events.last().unwrap();
    assert_eq!(end["reason"], "stopped", "{kinds:?}");
    assert!(
        end["detail"]
            .as_str()
            .unwrap()
            .contains("handed over into a stop"),
        "{end}"
    );
    assert_eq!(fake.requests().len(), 1, "the daemon's run called no model");
}
