//! `chock detach` end to end: a real `chock run` in the foreground, a real
//! `chock daemon` (started as tests/suite/daemon_run.rs does), and the real
//! `chock detach` between them. Only the model is the testkit's fake, slowed
//! down so that an ask arrives while a model call is still streaming.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use chock_log::event::EndReason;
use chock_log::fold::Status;
use chock_log::{SessionId, StateDir, fold_log};
use chock_testkit::{FakeModel, Reply, TempProject, Turn, wait_for};
use serde_json::{Value, json};

use super::chock;
use super::kit::{self, log_values as events};
use super::kit::{ask_write_project, write_x};

const WITHIN: Duration = Duration::from_secs(60);
/// A pause before each streamed event of a slow model call: long enough
/// that an ask sent once the session is up arrives before the call ends.
const SLOW: Duration = Duration::from_millis(700);
/// A process killed and reaped when the test ends, however it ends.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `chock daemon` on the state directory's own socket.
fn start_daemon(state: &Path) -> Reaped {
    let mut child = chock(state)
        .arg("daemon")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let first = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .next()
        .expect("a 'listening on' line")
        .unwrap();
    assert!(first.starts_with("listening on unix:"), "{first}");
    Reaped(child)
}

/// `chock run` in the foreground, as a person starts it.
fn start_session(state: &Path, project: &TempProject, message: &str) -> Reaped {
    Reaped(
        chock(state)
            .arg("run")
            .arg(project.path())
            .arg(message)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    )
}

/// A daemon, and a session of `project` started with `message` against a
/// fake model answering `replies`, once it listens for handovers: the
/// state directory, the model, the daemon, the session, its id and its log.
fn start_both(
    project: &TempProject,
    replies: impl IntoIterator<Item = Reply>,
    message: &str,
) -> (
    tempfile::TempDir,
    FakeModel,
    Reaped,
    Reaped,
    SessionId,
    PathBuf,
) {
    let state = tempfile::tempdir().unwrap();
    let fake = kit::fake_model(state.path(), replies);
    let daemon = start_daemon(state.path());
    let session = start_session(state.path(), project, message);
    let (id, log) = wait_for_listening(state.path());
    (state, fake, daemon, session, id, log)
}

/// Waits until the session at `log` waits for an approval.
fn wait_for_approval(log: &Path) {
    wait_for(WITHIN, "the session to wait for an approval", || {
        (fold_log(log).ok()?.state.status == Status::WaitingForApproval).then_some(())
    });
}

/// The newest session whose process is up and listening for handovers.
fn wait_for_listening(state: &Path) -> (SessionId, PathBuf) {
    let dir = StateDir::at(state);
    wait_for(WITHIN, "a session listening on handover.sock", || {
        let entries = std::fs::read_dir(state.join("sessions")).ok()?;
        let mut ids: Vec<SessionId> = entries
            .flatten()
            .filter_map(|e| SessionId::parse(&e.file_name().to_string_lossy()).ok())
            .filter(|id| dir.handover_socket(id).exists())
            .collect();
        ids.sort();
        let id = ids.pop()?;
        let log = dir.log_path(&id);
        Some((id, log))
    })
}

fn detach(state: &Path, dir: &Path) -> Command {
    let mut cmd = chock(state);
    cmd.arg("detach").current_dir(dir).stdin(Stdio::null());
    cmd
}

fn types(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

fn count(events: &[Value], kind: &str) -> usize {
    events.iter().filter(|e| e["type"] == kind).count()
}

fn exit_code(child: &mut Reaped) -> Option<i32> {
    let status = wait_for(WITHIN, "the process to exit", || {
        child.0.try_wait().unwrap()
    });
    status.code()
}

fn stderr_of(child: &mut Reaped) -> String {
    let mut text = String::new();
    if let Some(mut err) = child.0.stderr.take() {
        err.read_to_string(&mut text).unwrap();
    }
    text
}

/// Lines of a child's stderr as they come, read on a thread of their own.
/// `chock detach <id>` started and left running, with its stderr read line
/// by line as it comes.
fn detach_in_background(
    state: &Path,
    dir: &Path,
    id: &SessionId,
) -> (Reaped, mpsc::Receiver<String>) {
    let mut child = Reaped(
        detach(state, dir)
            .arg(id.as_str())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let lines = stderr_lines(&mut child);
    (child, lines)
}

fn stderr_lines(child: &mut Reaped) -> mpsc::Receiver<String> {
    let (send, lines) = mpsc::channel();
    let err = child.0.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            if send.send(line).is_err() {
                break;
            }
        }
    });
    lines
}

fn wait_for_line(lines: &mpsc::Receiver<String>, part: &str) -> String {
    loop {
        let line = lines
            .recv_timeout(WITHIN)
            .unwrap_or_else(|_| panic!("no stderr line with '{part}'"));
        if line.contains(part) {
            return line;
        }
    }
}

/// A model call that asks for one tool, streamed slowly.
fn slow_call(id: &str) -> Reply {
    Turn::text("")
        .call(id, "list_directory", &json!({"path": "."}))
        .delay(SLOW)
        .into()
}

/// Asserts that the session exited 0 in its own process with no handover
/// in its log; returns the log's events.
fn assert_stayed(session: &mut Reaped, log: &Path) -> Vec<Value> {
    assert_eq!(exit_code(session), Some(0), "{}", stderr_of(session));
    let all = events(log);
    assert_eq!(count(&all, "handover"), 0, "{:?}", types(&all));
    all
}

fn ended(log: &Path) -> Option<EndReason> {
    match fold_log(log).ok()?.state.status {
        Status::Ended { reason, .. } => Some(reason),
        _ => None,
    }
}

#[test]
fn detach_hands_over_at_the_turn_boundary_and_the_daemon_carries_on() {
    let project = TempProject::git();
    let (state, fake, _daemon, mut session, id, log) = start_both(
        &project,
        [slow_call("c1"), Turn::text("All done.").into()],
        "look around",
    );

    // No id: the newest session of the project in the current directory.
    let out = detach(state.path(), project.path()).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_eq!(stdout.lines().count(), 1, "one line of result: {stdout}");
    assert!(
        stdout.starts_with(&format!(
            "handed session {} over to the daemon at unix:",
            id.as_str()
        )),
        "{stdout}"
    );
    assert!(
        stderr.contains("waiting for its next turn boundary"),
        "progress while waiting: {stderr}"
    );
    assert!(stderr.contains("s left)"), "{stderr}");

    assert_eq!(
        exit_code(&mut session),
        Some(8),
        "a session that handed over exits 8"
    );
    let said = stderr_of(&mut session);
    assert!(said.contains("handed over"), "{said}");

    wait_for(WITHIN, "the adopted session to end", || {
        (ended(&log) == Some(EndReason::Done)).then_some(())
    });
    let all = events(&log);
    let kinds = types(&all);
    let handover_at = kinds.iter().position(|k| *k == "handover").unwrap();
    assert_eq!(count(&all, "handover"), 1, "{kinds:?}");
    assert_eq!(kinds[handover_at - 1], "turn.end", "{kinds:?}");
    assert_eq!(
        kinds[handover_at - 2],
        "tool.result",
        "after the whole call: {kinds:?}"
    );
    let first_end = &all[handover_at + 1];
    assert_eq!(first_end["type"], "session.end");
    assert_eq!(first_end["reason"], "handover");
    // The daemon's child carries on: a new owner, the same checkout, and no
    // message added.
    let opens: Vec<&Value> = all.iter().filter(|e| e["type"] == "session.open").collect();
    assert_eq!(opens.len(), 2, "{kinds:?}");
    assert_ne!(opens[0]["pid"], opens[1]["pid"]);
    let workspaces: Vec<&Value> = all
        .iter()
        .filter(|e| e["type"] == "workspace.open")
        .collect();
    assert_eq!(workspaces.len(), 2);
    assert_eq!(workspaces[0]["dir"], workspaces[1]["dir"]);
    assert_eq!(workspaces[0]["commit"], workspaces[1]["commit"]);
    assert_eq!(count(&all, "user.message"), 1, "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"session.end"));
    // The second model call is the conversation carried on: the first
    // call's result, and nothing new from the person.
    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    let messages = requests[1].json()["messages"].as_array().unwrap().clone();
    assert!(
        messages
            .iter()
            .any(|m| m["role"] == "tool" && m["tool_call_id"] == "c1"),
        "{messages:?}"
    );
    assert_eq!(
        messages.iter().filter(|m| m["role"] == "user").count(),
        1,
        "{messages:?}"
    );
    // The adopted run removes its sockets as it ends, after its ending.
    let socket = StateDir::at(state.path()).handover_socket(&id);
    wait_for(WITHIN, "handover.sock to be removed", || {
        (!socket.exists()).then_some(())
    });
}

#[test]
fn a_client_gone_before_the_confirm_leaves_the_session_running_and_its_log_untouched() {
    let project = TempProject::git();
    let (state, fake, _daemon, mut session, id, log) = start_both(
        &project,
        [
            slow_call("c1"),
            slow_call("c2"),
            Turn::text("Finished.").into(),
        ],
        "look twice",
    );

    // A real `chock detach` interrupted while it waits for the boundary.
    let (mut first, lines) = detach_in_background(state.path(), project.path(), &id);
    wait_for_line(&lines, "waiting for its next turn boundary");
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&first.0),
        rustix::process::Signal::INT,
    )
    .unwrap();
    assert_eq!(exit_code(&mut first), None, "killed by SIGINT");

    // A client that hears `ready` and goes away without confirming: what
    // Ctrl-C between ready and confirm leaves behind.
    let socket = StateDir::at(state.path()).handover_socket(&id);
    let mut raw = UnixStream::connect(&socket).unwrap();
    raw.set_read_timeout(Some(WITHIN)).unwrap();
    raw.write_all(b"handover\n").unwrap();
    let mut ready = String::new();
    BufReader::new(&raw).read_line(&mut ready).unwrap();
    assert!(ready.starts_with("ready "), "{ready}");
    drop(raw);

    let all = assert_stayed(&mut session, &log);
    let kinds = types(&all);
    assert_eq!(count(&all, "session.open"), 1, "{kinds:?}");
    assert_eq!(count(&all, "session.end"), 1, "{kinds:?}");
    assert_eq!(ended(&log), Some(EndReason::Done));
    assert_eq!(fake.requests().len(), 3, "every model call was made once");
}

#[test]
fn a_daemon_gone_between_the_proving_and_the_confirm_is_named_and_nothing_stops() {
    let project = TempProject::git();
    let (state, _fake, mut daemon, mut session, id, log) = start_both(
        &project,
        [slow_call("c1"), Turn::text("Finished.").into()],
        "look",
    );

    let (mut detaching, lines) = detach_in_background(state.path(), project.path(), &id);
    // Proved and asked: it is waiting for the boundary.
    wait_for_line(&lines, "waiting for its next turn boundary");
    daemon.0.kill().unwrap();
    daemon.0.wait().unwrap();
    let said = wait_for_line(&lines, "went away");
    assert_eq!(exit_code(&mut detaching), Some(1));
    assert!(
        said.contains(&format!(
            "the daemon at unix:{}",
            state.path().join("daemon.sock").display()
        )),
        "{said}"
    );
    assert!(
        said.contains("the session carries on here, unchanged"),
        "{said}"
    );

    assert_stayed(&mut session, &log);
    assert_eq!(ended(&log), Some(EndReason::Done));
}

#[test]
fn at_the_wait_bound_detach_says_what_the_session_holds_and_leaves_it_running() {
    let project = ask_write_project();
    let (state, _fake, _daemon, mut session, id, log) = start_both(
        &project,
        [write_x("w1").into(), Turn::text("Done.").into()],
        "write x.txt",
    );
    wait_for_approval(&log);
    let before = std::fs::read(&log).unwrap();

    let out = detach(state.path(), project.path())
        .args([id.as_str(), "--wait", "1"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "session {} did not reach a turn boundary within 1 s (it waits for a person to answer approval request",
            id.as_str()
        )),
        "{stderr}"
    );
    assert!(stderr.contains("it holds no background work"), "{stderr}");
    assert!(stderr.contains("it keeps running, unchanged"), "{stderr}");
    assert_eq!(std::fs::read(&log).unwrap(), before, "the log is unchanged");

    // Nothing was taken: the session answers its approval and finishes.
    let socket = StateDir::at(state.path()).approve_socket(&id);
    let request = fold_log(&log).unwrap().state.pending_approvals[0]
        .request_id
        .clone();
    let mut raw = UnixStream::connect(&socket).unwrap();
    raw.set_read_timeout(Some(WITHIN)).unwrap();
    raw.write_all(format!("answer {request} no\n").as_bytes())
        .unwrap();
    let mut reply = String::new();
    BufReader::new(&raw).read_line(&mut reply).unwrap();
    assert_eq!(reply, "ok\n");
    assert_stayed(&mut session, &log);
}

/// A stand-in that answers every greeting with another protocol number.
fn other_protocol(dir: &Path) -> PathBuf {
    let path = dir.join("other.sock");
    let listener = UnixListener::bind(&path).unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut line = String::new();
            let _ = BufReader::new(&stream).read_line(&mut line);
            let _ = (&stream).write_all(b"ok chock-control 99\n");
        }
    });
    path
}

#[test]
fn bad_inputs_are_one_line_errors_and_never_stop_the_session() {
    let state = tempfile::tempdir().unwrap();
    let project = ask_write_project();
    let write = || -> Reply { write_x("w1").into() };
    let _fake = kit::fake_model(
        state.path(),
        [
            Turn::text("Hi.").into(),
            Reply::error(400, "no"),
            write(),
            write(),
        ],
    );
    let dir = StateDir::at(state.path());

    // An ended session (done), and one that ended with an error.
    let mut done = start_session(state.path(), &project, "say hi");
    assert_eq!(exit_code(&mut done), Some(0));
    let (done_id, _) = newest(state.path());
    let mut failed = start_session(state.path(), &project, "fail");
    assert_eq!(exit_code(&mut failed), Some(1));
    let (failed_id, _) = newest(state.path());
    assert_ne!(done_id, failed_id);

    // A session running in the foreground, waiting on an approval.
    let mut session = start_session(state.path(), &project, "write x.txt");
    let (id, log) = wait_for_listening(state.path());
    wait_for_approval(&log);
    let before = std::fs::read(&log).unwrap();
    let fails = |args: &[&str], code: i32, wanted: &str| {
        let out = detach(state.path(), project.path())
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
        assert!(stderr.contains(wanted), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
        if code == 1 {
            assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
        }
    };

    // With no daemon listening: refused, saying to start one, the cause
    // said once.
    fails(&[id.as_str()], 1, "start one with 'chock daemon'");
    let out = detach(state.path(), project.path())
        .arg(id.as_str())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr)
        .replace(&state.path().display().to_string(), "[state]")
        .replace(id.as_str(), "[session]");
    insta::assert_snapshot!("detach_with_no_daemon", said);
    fails(
        &["20261129-192736-123-7f3a9c1e"],
        1,
        "no session 20261129-192736-123-7f3a9c1e",
    );
    fails(&["not-an-id"], 1, "not-an-id");
    fails(
        &[done_id.as_str()],
        1,
        &format!(
            "session {} has ended (done): there is nothing to hand over",
            done_id.as_str()
        ),
    );
    fails(
        &[failed_id.as_str()],
        1,
        &format!(
            "keeps its workspace {}",
            dir.workspace_dir(&failed_id).display()
        ),
    );
    fails(&[failed_id.as_str()], 1, "`chock workspace show");
    fails(
        &[id.as_str(), "--daemon", "unix:/x", "--port", "7"],
        2,
        "cannot be used with",
    );
    let other = other_protocol(state.path());
    fails(
        &[
            id.as_str(),
            "--daemon",
            &format!("unix:{}", other.display()),
        ],
        1,
        "protocol mismatch",
    );

    // A daemon of another state directory, named with --port: it cannot
    // see the session, so the session is not asked.
    let elsewhere = tempfile::tempdir().unwrap();
    let mut other_daemon = Reaped(
        chock(elsewhere.path())
            .args(["daemon", "--host", "127.0.0.1", "--port", "0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let port = BufReader::new(other_daemon.0.stdout.take().unwrap())
        .lines()
        .map_while(Result::ok)
        .find_map(|line| {
            line.strip_prefix("listening on 127.0.0.1:")
                .map(str::to_owned)
        })
        .expect("a TCP listener line");
    fails(
        &[id.as_str(), "--port", &port],
        1,
        &format!(
            "the daemon at 127.0.0.1:{port} does not see session {}",
            id.as_str()
        ),
    );
    drop(other_daemon);

    // A session the daemon started is the daemon's already.
    let _daemon = start_daemon(state.path());
    let started = chock_control::Client::new(chock_control::Address::default_for(state.path()));
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let owned = runtime
        .block_on(started.start(project.path(), "write x.txt"))
        .unwrap();
    let owned_log = PathBuf::from(&owned.log);
    wait_for(
        WITHIN,
        "the daemon's session to wait for an approval",
        || (fold_log(&owned_log).ok()?.state.status == Status::WaitingForApproval).then_some(()),
    );
    fails(
        &[owned.session.as_str()],
        1,
        &format!("session {} is already owned by the daemon", owned.session),
    );

    // Through all of it the foreground session was never asked.
    assert_eq!(std::fs::read(&log).unwrap(), before);
    assert!(session.0.try_wait().unwrap().is_none(), "still running");
    assert!(dir.handover_socket(&id).exists());

    // The daemon's session outlives the daemon by design: end it here, or
    // it waits for its approval after the test is gone.
    let pid = fold_log(&owned_log).unwrap().state.owner_pid.unwrap();
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(pid as i32).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
}

/// The newest session of the state directory, listening or not.
fn newest(state: &Path) -> (SessionId, PathBuf) {
    let mut ids: Vec<SessionId> = std::fs::read_dir(state.join("sessions"))
        .unwrap()
        .flatten()
        .filter_map(|e| SessionId::parse(&e.file_name().to_string_lossy()).ok())
        .collect();
    ids.sort();
    let id = ids.pop().unwrap();
    let log = StateDir::at(state).log_path(&id);
    (id, log)
}

#[test]
fn the_adopted_session_asks_over_the_same_approve_sock_and_chock_approve_answers() {
    let project = ask_write_project();
    let (state, _fake, _daemon, mut session, id, log) = start_both(
        &project,
        [
            slow_call("c1"),
            write_x("w1").into(),
            Turn::text("Written.").into(),
        ],
        "write x.txt",
    );
    let out = detach(state.path(), project.path())
        .arg(id.as_str())
        .output()
        .unwrap();
    kit::assert_success(&out);
    assert_eq!(exit_code(&mut session), Some(8));

    // The daemon's child asks; `chock approve` reaches it on the socket
    // beside the same log.
    wait_for(WITHIN, "the adopted session to ask", || {
        let state = fold_log(&log).ok()?.state;
        (state.status == Status::WaitingForApproval).then_some(())
    });
    kit::assert_success(&kit::approve(state.path(), id.as_str(), "y\n"));
    wait_for(WITHIN, "the adopted session to end", || {
        (ended(&log) == Some(EndReason::Done)).then_some(())
    });
    let all = events(&log);
    let answer = kit::first_of(&all, "approval.answer");
    assert_eq!(answer["answer"], "yes");
    let handover_at = all.iter().position(|e| e["type"] == "handover").unwrap();
    let asked_at = all
        .iter()
        .position(|e| e["type"] == "approval.request")
        .unwrap();
    assert!(asked_at > handover_at, "asked by the adopted run");
    let workspace = all.iter().find(|e| e["type"] == "workspace.open").unwrap()["dir"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        std::fs::read_to_string(Path::new(&workspace).join("x.txt")).unwrap(),
        "x",
        "written in the workspace that moved"
    );
}

#[test]
fn a_session_holding_a_background_command_hands_over_after_the_command_is_recorded_ended() {
    let project = kit::project_with(&[("exec.path.sleep", "allow"), ("call.job_output", "allow")]);
    let (state, _fake, _daemon, mut session, id, log) = start_both(
        &project,
        [
            Turn::text("")
                .call(
                    "b1",
                    "run_command",
                    &json!({"command": ["sleep", "8"], "background": true}),
                )
                .into(),
            slow_call("c2"),
            Turn::text("")
                .call("o1", "job_output", &json!({"job": "1", "wait_secs": 60}))
                .into(),
            Turn::text("Slept.").into(),
            Turn::text("Nothing more.").into(),
        ],
        "sleep in the background",
    );
    wait_for(WITHIN, "the background job to start", || {
        (fold_log(&log).ok()?.state.background.len() == 1).then_some(())
    });

    let out = detach(state.path(), project.path())
        .arg(id.as_str())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("waiting for its background work to end")
            && stderr.contains("holds 1 background command"),
        "the counts are named while it waits: {stderr}"
    );
    assert_eq!(
        exit_code(&mut session),
        Some(8),
        "{}",
        stderr_of(&mut session)
    );
    wait_for(WITHIN, "the adopted session to end", || {
        (ended(&log) == Some(EndReason::Done)).then_some(())
    });
    let all = events(&log);
    let kinds = types(&all);
    let job_end = kinds.iter().position(|k| *k == "background.end").unwrap();
    let handover = kinds.iter().position(|k| *k == "handover").unwrap();
    assert!(
        job_end < handover,
        "handed over after the job was recorded: {kinds:?}"
    );
    assert_eq!(
        all[job_end]["status"], "done",
        "the job ran to its end, not killed"
    );
    assert_eq!(count(&all, "background.end"), 1, "{kinds:?}");
    assert_eq!(count(&all, "handover"), 1, "{kinds:?}");
}

#[test]
fn another_user_who_reaches_handover_sock_is_refused_and_nothing_changes() {
    use std::os::unix::fs::PermissionsExt as _;
    let state = tempfile::tempdir().unwrap();
    let project = ask_write_project();
    let _fake = kit::fake_model(state.path(), [write_x("w1").into()]);
    let session = start_session(state.path(), &project, "write x.txt");
    let (id, log) = wait_for_listening(state.path());
    wait_for_approval(&log);
    let before = std::fs::read(&log).unwrap();
    // Open every directory on the way and the socket itself, so the peer's
    // uid is the only thing that can refuse.
    let socket = StateDir::at(state.path()).handover_socket(&id);
    let mut dir = socket.parent();
    while let Some(d) = dir.filter(|d| d.starts_with(state.path())) {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
        dir = d.parent();
    }
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o666)).unwrap();
    let reply = chock_testkit::exchange_as_other_user(&socket, "handover\n");
    let mut session = session;
    assert!(reply.starts_with("error refused: uid "), "{reply}");
    assert!(
        reply.contains("the user this session runs as") && !reply.contains("daemon"),
        "a session's socket speaks for the session: {reply}"
    );
    assert_eq!(std::fs::read(&log).unwrap(), before, "the log is unchanged");
    assert!(session.0.try_wait().unwrap().is_none(), "still running");
}

#[test]
fn a_handover_another_process_took_first_is_not_reported_as_the_daemons() {
    let state = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let project_dir = project.path().canonicalize().unwrap();
    let project_text = project_dir.display().to_string();
    let id = chock_testkit::S1;
    // A log that ends with a handover nobody took yet.
    let mut log = chock_testkit::LiveLog::create(state.path(), id, &project_text);
    log.append("user.message", r#""text":"hi""#);
    log.append(
        "session.end",
        r#""reason":"handover","detail":"to the daemon""#,
    );
    drop(log);
    let session_dir = StateDir::at(state.path()).session_dir(&SessionId::parse(id).unwrap());
    // The daemon's child waits a second before it takes the lock.
    std::fs::write(session_dir.join("adopt-delay"), "1").unwrap();
    let fake = chock_testkit::StandIn::EndsOnRelease.install(state.path());
    let mut daemon = chock(state.path())
        .arg("daemon")
        .arg("--run-exe")
        .arg(&fake)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let first = BufReader::new(daemon.stdout.take().unwrap())
        .lines()
        .next()
        .unwrap()
        .unwrap();
    assert!(first.starts_with("listening on unix:"), "{first}");
    let _daemon = Reaped(daemon);
    let detach = detach(state.path(), &project_dir)
        .arg(id)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A person's `chock run --continue` takes the log first.
    std::thread::sleep(Duration::from_millis(400));
    let _theirs = chock_testkit::LiveLog::adopt(state.path(), id, &project_text);
    let out = detach.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(!stdout.contains("handed session"), "{stdout}");
    assert!(
        stderr.contains(&format!(
            "session {id} has handed itself over, but process {} took it before the daemon",
            std::process::id()
        )) && stderr.contains("it carries on in that process, not in the daemon"),
        "{stderr}"
    );
}

#[test]
fn a_session_handed_to_the_daemon_has_its_mcp_servers_started_again_there() {
    use super::mcp_session::{call, mcp_zon, notices, result_text, time_server};
    let project = super::mcp_session::project(&mcp_zon(
        &[("time", time_server(""))],
        &[("mcp.time.tool.*", "allow")],
    ));
    let (state, _fake, _daemon, mut session, _id, log) = start_both(
        &project,
        [
            slow_call("c1"),
            call(
                "c2",
                "mcp__time__get_current_time",
                json!({"timezone": "UTC"}),
            ),
            Turn::text("All done.").into(),
        ],
        "what time is it",
    );
    let out = detach(state.path(), project.path()).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        exit_code(&mut session),
        Some(8),
        "{}",
        stderr_of(&mut session)
    );
    wait_for(WITHIN, "the adopted session to end", || {
        (ended(&log) == Some(EndReason::Done)).then_some(())
    });
    let all = events(&log);
    let started = notices(&all)
        .iter()
        .filter(|n| n.starts_with("the MCP server time started"))
        .count();
    assert_eq!(
        started, 2,
        "the first owner and the daemon's child each start it"
    );
    // The call after the handover went to the server the daemon's child
    // started.
    let handover_at = all.iter().position(|e| e["type"] == "handover").unwrap();
    let call_at = all
        .iter()
        .position(|e| e["type"] == "tool.call" && e["call_id"] == "c2")
        .unwrap();
    assert!(call_at > handover_at);
    let (text, ok) = result_text(&all, "c2");
    assert!(ok, "{text}");
}
