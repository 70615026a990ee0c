//! What the session tests share: the operator's config in a test's state
//! dir, finding the session a run made, and reading its log back as JSON.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use chock_log::event::EndReason;
use chock_log::fold::FoldedLog;
use chock_log::fold::Status;
use chock_log::{SessionId, StateDir, fold_log};
use chock_testkit::{FakeModel, Reply, TempProject, Turn, Wire};
use serde_json::Value;

use super::chock;

/// Writes the operator's config.zon where `chock(state)` reads it.
pub(crate) fn write_config(state: &Path, text: &str) {
    let dir = state.join("config").join("chock");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.zon"), text).unwrap();
}

/// A fake model answering `replies` in order, configured in `state` as
/// `fake/m` over the OpenAI wire.
pub(crate) fn fake_model(state: &Path, replies: impl IntoIterator<Item = Reply>) -> FakeModel {
    let fake = FakeModel::with(replies);
    write_config(state, &fake.config_zon(Wire::OpenAi, "m"));
    fake
}

/// A chock.zon whose policy holds `rules`, each an (action, decision).
pub(crate) fn rules_zon(rules: &[(&str, &str)]) -> String {
    let lines: String = rules
        .iter()
        .map(|(action, decision)| {
            format!("            .{{ .action = \"{action}\", .decision = .{decision} }},\n")
        })
        .collect();
    format!(".{{\n    .policy = .{{\n        .rules = .{{\n{lines}        }},\n    }},\n}}\n")
}

/// A git project whose committed chock.zon holds `rules` (no chock.zon
/// when there are none).
pub(crate) fn project_with(rules: &[(&str, &str)]) -> TempProject {
    let project = TempProject::git();
    if !rules.is_empty() {
        project.write_chock_zon(&rules_zon(rules));
        project.commit_all("rules");
    }
    project
}

/// `chock run <project> <message>`, run to its end.
pub(crate) fn run_session(state: &Path, project: &Path, message: &str) -> Output {
    chock(state)
        .arg("run")
        .arg(project)
        .arg(message)
        .output()
        .unwrap()
}

/// `chock run <project> <message>` started with no stdin and its output piped.
pub(crate) fn start_session(state: &Path, project: &Path, message: &str) -> Child {
    chock(state)
        .arg("run")
        .arg(project)
        .arg(message)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// `chock <args>` run to its end.
pub(crate) fn chock_out(state: &Path, args: &[&str]) -> Output {
    chock(state).args(args).output().unwrap()
}

/// Sends `child` SIGINT, as Ctrl-C on its terminal does.
pub(crate) fn interrupt(child: &Child) {
    rustix::process::kill_process(
        rustix::process::Pid::from_child(child),
        rustix::process::Signal::INT,
    )
    .unwrap();
}

/// Asserts that the session whose log is `log` folds to done, with no detail.
pub(crate) fn assert_done(log: &Path) {
    assert_eq!(
        fold_log(log).unwrap().state.status,
        Status::Ended {
            reason: EndReason::Done,
            detail: String::new()
        }
    );
}

/// Asserts that the session whose log is `log` folds to ended for `reason`.
pub(crate) fn assert_ended(log: &Path, reason: EndReason) {
    let status = fold_log(log).unwrap().state.status;
    assert!(
        matches!(&status, Status::Ended { reason: r, .. } if *r == reason),
        "{status:?}"
    );
}

/// A file as the session of `log` left it in its workspace (the session's
/// git worktree, not the project); `None` when there is no such file.
pub(crate) fn workspace_file(log: &Path, name: &str) -> Option<String> {
    let dir = fold_log(log).unwrap().state.workspace?.dir;
    std::fs::read_to_string(dir.join(name)).ok()
}

/// The sessions in `state` (none when no run has made the directory).
pub(crate) fn sessions(state: &Path) -> Vec<SessionId> {
    match std::fs::read_dir(state.join("sessions")) {
        Ok(entries) => entries
            .map(|e| SessionId::parse(&e.unwrap().file_name().to_string_lossy()).unwrap())
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// The log of the one session in `state`; panics unless there is exactly one.
pub(crate) fn only_log(state: &Path) -> PathBuf {
    let sessions = sessions(state);
    assert_eq!(sessions.len(), 1, "exactly one session: {sessions:?}");
    StateDir::at(state).log_path(&sessions[0])
}

/// A chock.zon whose one rule makes `write_file` ask.
pub(crate) const ASK_WRITE: &str = ".{\n    .policy = .{\n        .rules = .{\n            .{ .action = \"call.write_file\", .decision = .ask },\n        },\n    },\n}\n";

/// A git project whose committed chock.zon is [`ASK_WRITE`] (a session
/// works in a worktree of the committed tree).
pub(crate) fn ask_write_project() -> TempProject {
    let project = TempProject::git();
    project.write_chock_zon(ASK_WRITE);
    project.commit_all("an ask rule for write_file");
    project
}

/// A model's turn that makes one call of `tool` with `arguments`.
pub(crate) fn call_turn(id: &str, tool: &str, arguments: Value) -> Reply {
    Turn::text("").call(id, tool, &arguments).into()
}

/// The model's turn that writes `x.txt` (which [`ASK_WRITE`] makes ask).
pub(crate) fn write_x(id: &str) -> Turn {
    Turn::text("").call(
        id,
        "write_file",
        &serde_json::json!({"path": "x.txt", "content": "x"}),
    )
}

/// A fake model that runs each command with run_command (one turn each),
/// then says it is done; its config written into `state`.
pub(crate) fn commands_model(state: &Path, commands: &[(&str, &[&str])]) -> FakeModel {
    let calls: Vec<(&str, &str, Value)> = commands
        .iter()
        .map(|(id, argv)| (*id, "run_command", serde_json::json!({ "command": argv })))
        .collect();
    fake_model(state, one_call_a_turn(&calls))
}

/// A model's script that makes each (id, tool, arguments) call in a turn
/// of its own, then says it is done.
pub(crate) fn one_call_a_turn(calls: &[(&str, &str, Value)]) -> Vec<Reply> {
    let mut turns: Vec<Reply> = calls
        .iter()
        .map(|(id, tool, arguments)| call_turn(id, tool, arguments.clone()))
        .collect();
    turns.push(Turn::text("Done.").into());
    turns
}

/// `chock run <project> <message>`, asserted to succeed.
pub(crate) fn run_ok(state: &Path, project: &Path, message: &str) -> Output {
    let out = run_session(state, project, message);
    assert_success(&out);
    out
}

/// The `tool.result` of tool call `call`; panics if there is none.
pub(crate) fn result_of<'a>(events: &'a [Value], call: &str) -> &'a Value {
    of_call(events, "tool.result", call)
        .unwrap_or_else(|| panic!("no tool.result for {call} in {events:#?}"))
}

/// Asserts that a finished process succeeded, showing its stderr if not.
pub(crate) fn assert_success(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Asserts that a finished process exited 1; its stderr.
pub(crate) fn failed(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    stderr
}

/// Waits for `child` and asserts that it succeeded.
pub(crate) fn finish(child: Child) -> Output {
    let out = child.wait_with_output().unwrap();
    assert_success(&out);
    out
}

/// A log's events, each line parsed as JSON.
pub(crate) fn log_values(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// Every event of `kind`, in order.
pub(crate) fn all_of<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

/// The first event of `kind`; panics if there is none.
pub(crate) fn first_of<'a>(events: &'a [Value], kind: &str) -> &'a Value {
    events
        .iter()
        .find(|e| e["type"] == kind)
        .unwrap_or_else(|| panic!("no {kind} event in {events:#?}"))
}

/// The first event of `kind` recorded for tool call `call`.
pub(crate) fn of_call<'a>(events: &'a [Value], kind: &str, call: &str) -> Option<&'a Value> {
    events
        .iter()
        .find(|event| event["type"] == kind && event["call_id"] == call)
}

/// The session's workspace, as its first `workspace.open` names it.
pub(crate) fn workspace_dir(events: &[Value]) -> PathBuf {
    let open = events
        .iter()
        .find(|e| e["type"] == "workspace.open")
        .expect("a workspace.open event");
    PathBuf::from(open["dir"].as_str().unwrap())
}

/// A long-running chock process (a daemon, serve) whose stdout is read line
/// by line; killed when dropped.
pub(crate) struct Running {
    child: Child,
    lines: std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
}

impl Running {
    pub(crate) fn spawn(mut command: std::process::Command) -> Running {
        use std::io::BufRead as _;
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
        Running { child, lines }
    }

    /// The next line it printed.
    pub(crate) fn next_line(&mut self) -> String {
        self.lines.next().expect("a line from chock").unwrap()
    }

    /// The address of its next line, `listening on <address>`.
    pub(crate) fn listening_on(&mut self) -> String {
        let line = self.next_line();
        line.strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("not a 'listening on' line: {line}"))
            .to_owned()
    }

    /// [`Self::listening_on`], parsed.
    pub(crate) fn address(&mut self) -> chock_control::Address {
        chock_control::Address::parse(&self.listening_on()).unwrap()
    }

    /// Stops it with SIGTERM, as systemd does, and waits for it.
    pub(crate) fn terminate(&mut self) -> std::process::ExitStatus {
        rustix::process::kill_process(
            rustix::process::Pid::from_child(&self.child),
            rustix::process::Signal::TERM,
        )
        .unwrap();
        self.child.wait().unwrap()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `chock daemon` on the socket of `state`, and the address it printed.
pub(crate) fn start_daemon(state: &Path) -> (Running, chock_control::Address) {
    let mut command = chock(state);
    command.arg("daemon");
    let mut daemon = Running::spawn(command);
    let address = daemon.address();
    (daemon, address)
}

/// Waits until the only session in `state` has a pending approval.
pub(crate) fn wait_for_pending(state: &Path) -> (SessionId, PathBuf, FoldedLog) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(entries) = std::fs::read_dir(state.join("sessions")) {
            for entry in entries.flatten() {
                let id = SessionId::parse(&entry.file_name().to_string_lossy()).unwrap();
                let log = StateDir::at(state).log_path(&id);
                if let Ok(folded) = fold_log(&log)
                    && !folded.state.pending_approvals.is_empty()
                    && StateDir::at(state).approve_socket(&id).exists()
                {
                    return (id, log, folded);
                }
            }
        }
        assert!(
            Instant::now() < deadline,
            "no approval was requested in time"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Asserts that the first question `folded` waits on is about `action` and
/// says `says`.
pub(crate) fn assert_asks(folded: &FoldedLog, action: &str, says: &str) {
    let pending = &folded.state.pending_approvals[0];
    assert_eq!(pending.action, action);
    assert!(pending.question.contains(says), "{}", pending.question);
}

/// Waits until the only session in `state` asks about `action` (its first
/// pending question) and can be answered; the session.
pub(crate) fn wait_for_question(state: &Path, action: &str) -> SessionId {
    chock_testkit::wait_for(Duration::from_secs(30), "the session's question", || {
        let id = sessions(state).into_iter().next()?;
        let folded = fold_log(&StateDir::at(state).log_path(&id)).ok()?;
        let pending = folded.state.pending_approvals.first()?;
        (pending.action == action && StateDir::at(state).approve_socket(&id).exists()).then_some(id)
    })
}

/// Waits until the only session in `state` asks about `action` (its first
/// pending question), then answers with `input` through `chock approve`.
pub(crate) fn answer_pending(state: &Path, action: &str, input: &str) -> (SessionId, Output) {
    let id = wait_for_question(state, action);
    let out = approve(state, id.as_str(), input);
    (id, out)
}

/// `chock approve <session>` with `input`, asserted to succeed with a
/// stderr that says each of `says`.
pub(crate) fn approve_saying(state: &Path, session: &str, input: &str, says: &[&str]) {
    let out = approve(state, session, input);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    for said in says {
        assert!(stderr.contains(said), "{stderr}");
    }
}

/// `chock approve <session>` with `input` on its stdin.
pub(crate) fn approve(state: &Path, session: &str, input: &str) -> Output {
    let mut command = chock(state);
    command.arg("approve").arg(session);
    output_with_stdin(command, input)
}

/// `command` run to its end with `input` on its stdin and its output
/// captured.
pub(crate) fn output_with_stdin(mut command: std::process::Command, input: &str) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A refusal before reading exits without reading stdin: a broken pipe
    // here is that, not a failure.
    let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
    child.wait_with_output().unwrap()
}
