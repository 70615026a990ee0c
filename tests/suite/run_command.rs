//! `run_command` in a real session: the fake model asks for commands, the
//! real binary decides them at exec.*, runs them in the sandbox, and the log
//! says what happened. Each log is folded and read back.

use std::path::Path;

use chock_testkit::TempProject;
use serde_json::{Value, json};

use super::chock;
use super::kit::{
    self, approve, assert_done, assert_success, fake_model, finish, log_values, one_call_a_turn,
    only_log, project_with, run_ok, wait_for_pending, workspace_dir,
};

/// Runs one session in which the model makes `calls` (one turn each) and
/// then says it is done; returns the log's events.
fn session(state: &Path, project: &Path, calls: &[(&str, Value)]) -> Vec<Value> {
    let calls: Vec<(&str, &str, Value)> = calls
        .iter()
        .map(|(id, args)| (*id, "run_command", args.clone()))
        .collect();
    let _fake = fake_model(state, one_call_a_turn(&calls));
    run_ok(state, project, "run things");
    let log = only_log(state);
    assert_done(&log);
    log_values(&log)
}

/// [`session`] in a state directory and a project of its own.
fn fresh_session(calls: &[(&str, Value)]) -> Vec<Value> {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    session(state.path(), project.path(), calls)
}

fn of_call<'a>(events: &'a [Value], kind: &str, call: &str) -> &'a Value {
    kit::of_call(events, kind, call)
        .unwrap_or_else(|| panic!("no {kind} for {call} in {events:#?}"))
}

#[test]
fn a_command_writes_in_the_workspace_and_cannot_write_outside_it() {
    let state = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let target = outside.path().join("escaped.txt");
    let events = session(
        state.path(),
        project.path(),
        &[
            (
                "c1",
                json!({"command": ["sh", "-c", "echo made > made.txt; echo said"]}),
            ),
            (
                "c2",
                json!({"command": ["sh", "-c", format!("echo x > {}", target.display())]}),
            ),
        ],
    );
    assert_eq!(
        std::fs::read_to_string(workspace_dir(&events).join("made.txt")).unwrap(),
        "made\n"
    );
    assert!(!target.exists(), "the sandbox let a command write outside");
    let decision = of_call(&events, "decision", "c1");
    assert_eq!(decision["action"], "exec.path.sh");
    assert_eq!(decision["decision"], "allow");
    let first = of_call(&events, "tool.result", "c1");
    assert_eq!(first["ok"], true);
    let text = first["output"].as_str().unwrap();
    assert!(text.starts_with("exit status 0\n"), "{text}");
    assert!(text.contains("said"), "{text}");
    let second = of_call(&events, "tool.result", "c2");
    assert_eq!(second["ok"], false, "{second}");
    let notices: Vec<_> = events
        .iter()
        .filter(|e| {
            e["type"] == "notice" && e["subject"] != "workspace" && e["subject"] != "context"
        })
        .collect();
    assert_eq!(notices.len(), 1, "the sandbox report is logged once");
    assert_eq!(notices[0]["subject"], "sandbox");
    let jit = events
        .iter()
        .find(|e| e["type"] == "decision" && e["action"] == "sandbox.jit")
        .expect("sandbox.jit is read before the first turn");
    assert_ne!(jit["decision"], "allow");
}

#[test]
fn a_program_path_with_dot_dot_is_exec_unparsed_and_does_not_run() {
    let state = tempfile::tempdir().unwrap();
    // exec.unparsed ships no rule and so asks; a project rule refuses it
    // here, so the session does not wait for a person.
    let project = project_with(&[("exec.unparsed", "deny")]);
    let events = session(
        state.path(),
        project.path(),
        &[("u1", json!({"command": ["../x"]}))],
    );
    let decision = of_call(&events, "decision", "u1");
    assert_eq!(decision["action"], "exec.unparsed");
    assert_eq!(decision["decision"], "deny");
    let result = of_call(&events, "tool.result", "u1");
    assert_eq!(result["ok"], false);
    assert!(
        !events
            .iter()
            .any(|e| e["type"] == "tool.call" && e["call_id"] == "u1"),
        "a refused command is not a tool.call"
    );
}

#[test]
fn a_missing_program_and_a_signal_are_reported_to_the_model() {
    let events = fresh_session(&[
        ("n1", json!({"command": ["no-such-program-here"]})),
        (
            "k1",
            json!({"command": ["sh", "-c", "echo before; kill -KILL $$"]}),
        ),
    ]);
    failed_with(&events, "n1", "command not found");
    let text = failed_with(&events, "k1", "killed by SIGKILL");
    assert!(text.starts_with("killed by SIGKILL"), "{text}");
    assert!(text.contains("before"), "{text}");
}

#[test]
fn a_command_past_its_timeout_is_killed_and_says_so() {
    let events = fresh_session(&[
        ("t1", json!({"command": ["sleep", "60"], "timeout_secs": 1})),
        ("t2", json!({"command": ["true"], "timeout_secs": 100000})),
    ]);
    let slow = failed_with(&events, "t1", "timed out after 1 s");
    assert!(slow.starts_with("timed out after 1 s"), "{slow}");
    failed_with(&events, "t2", "timeout_secs must be");
}

/// The output of call `call`'s result, asserted to be an error saying
/// `says`.
fn failed_with<'e>(events: &'e [Value], call: &str, says: &str) -> &'e str {
    let result = of_call(events, "tool.result", call);
    assert_eq!(result["ok"], false, "{result}");
    let output = result["output"].as_str().unwrap();
    assert!(output.contains(says), "{result}");
    output
}

/// Copies a directory tree (files and directories only), keeping modes.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
fn the_offline_example_in_the_readme_writes_a_file_and_runs_a_command() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/hello");
    let demo = tempfile::tempdir().unwrap();
    copy_tree(&root, demo.path());
    let state = demo.path().join("state");
    let project = demo.path().join("project");
    for args in [
        &["init", "-q"][..],
        &["add", "-A"],
        &[
            "-c",
            "user.name=you",
            "-c",
            "user.email=you@example.com",
            "commit",
            "-qm",
            "start",
        ],
    ] {
        let status = std::process::Command::new("git")
            .arg("-C")
            .arg(&project)
            .args(args)
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    }
    // No terminal here: the project's ask for write_file is answered the
    // other way the README names, `chock approve`.
    let run = chock(&state)
        .env("XDG_CONFIG_HOME", demo.path().join("config"))
        .arg("run")
        .arg(demo.path().join("project"))
        .arg("greet the world")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (id, _, folded) = wait_for_pending(&state);
    assert_eq!(folded.state.pending_approvals[0].action, "call.write_file");
    let answered = approve(&state, id.as_str(), "y\n");
    assert_success(&answered);
    finish(run);
    let events = log_values(&only_log(&state));
    let answer = kit::first_of(&events, "approval.answer");
    assert_eq!(answer["answer"], "yes");
    assert_eq!(
        std::fs::read_to_string(workspace_dir(&events).join("hello.txt")).unwrap(),
        "hello, world\n"
    );
    let ran = kit::result_of(&events, "script-3-0");
    assert_eq!(ran["ok"], true, "{ran}");
    assert!(
        ran["output"]
            .as_str()
            .unwrap()
            .contains("check.sh: hello.txt is right"),
        "{ran}"
    );
    // The tour's last steps, word for word: the diff shows the file the
    // agent wrote, and apply, answered at a terminal, carries it back.
    let readme = |args: &[&str]| {
        let mut command = chock(&state);
        command
            .env("XDG_CONFIG_HOME", demo.path().join("config"))
            .args(args);
        command
    };
    assert_success(&readme(&["sessions"]).output().unwrap());
    let diff = readme(&["workspace", "diff", id.as_str()])
        .output()
        .unwrap();
    assert_success(&diff);
    let said = String::from_utf8_lossy(&diff.stderr);
    assert!(
        !said.contains("cannot"),
        "a settled workspace is looked at quietly: {said}"
    );
    let shown = String::from_utf8_lossy(&diff.stdout);
    assert!(shown.contains("hello.txt"), "{shown}");
    assert!(shown.contains("+hello, world"), "{shown}");
    let applied = super::on_a_terminal(
        &readme(&["workspace", "apply", id.as_str()]),
        "Apply? [y/N]",
        "y",
    );
    assert!(
        applied.status.success(),
        "{}",
        String::from_utf8_lossy(&applied.stdout)
    );
    assert_eq!(
        std::fs::read_to_string(project.join("hello.txt")).unwrap(),
        "hello, world\n",
        "the tour ends with hello.txt in the project"
    );
    assert_success(&readme(&["log", id.as_str()]).output().unwrap());
}

#[test]
fn a_background_jobs_start_is_logged_before_the_result_that_reports_it() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let _fake = fake_model(
        state.path(),
        one_call_a_turn(&[
            (
                "b1",
                "run_command",
                json!({"command": ["sh", "-c", "echo started"], "background": true}),
            ),
            ("j1", "job_output", json!({"job": "1", "wait_secs": 10})),
        ]),
    );
    run_ok(state.path(), project.path(), "start a job");
    let events = log_values(&only_log(state.path()));
    let at = |kind: &str, key: &str, value: &str| {
        events
            .iter()
            .position(|e| e["type"] == kind && e[key] == value)
            .unwrap_or_else(|| panic!("no {kind} with {key} {value}: {events:#?}"))
    };
    let start = at("background.start", "job_id", "1");
    let result = at("tool.result", "call_id", "b1");
    let end = at("background.end", "job_id", "1");
    assert!(
        start < result,
        "the start comes before the result that reports it"
    );
    assert!(start < end, "and before the job's end");
}
