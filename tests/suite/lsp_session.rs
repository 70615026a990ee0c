//! Language servers in a real session: python-lsp-server from PyPI with
//! its pyflakes plugin (installed by .ci/run under /opt/chock-lsp, which
//! the sandbox shows read-only) started by `chock run` in the session's
//! sandbox, told of each write, its diagnostics in the write's own result;
//! and servers that misbehave on purpose (`tests/lsp/fault_server.py`),
//! each bounded and said while the session carries on.

use chock_testkit::{TempProject, Turn};
use serde_json::{Value, json};

use super::here;
use super::kit::{all_of, assert_done, fake_model, log_values, only_log, run_ok};
use super::mcp_session::{call, offered, result_text};

pub(crate) const PYLSP: &str = "/opt/chock-lsp/venv/bin/pylsp";

/// A chock.zon naming language `servers` (each a name and the inside of
/// its struct), `rules`, and `more` top-level fields.
pub(crate) fn lsp_zon(servers: &[(&str, String)], rules: &[(&str, &str)], more: &str) -> String {
    let servers: String = servers
        .iter()
        .map(|(name, body)| format!("        .{name} = .{{ {body} }},\n"))
        .collect();
    let rules: String = rules
        .iter()
        .map(|(action, decision)| {
            format!("            .{{ .action = \"{action}\", .decision = .{decision} }},\n")
        })
        .collect();
    format!(
        ".{{\n    .lsp = .{{\n{servers}    }},\n{more}    .policy = .{{\n        .rules = .{{\n{rules}        }},\n    }},\n}}\n"
    )
}

pub(crate) fn pylsp(more: &str) -> String {
    format!(".command = .{{ \"{PYLSP}\" }}, .files = .{{ \"*.py\" }}, {more}")
}

/// A fault server in `mode`, copied into the project as `fault.py`.
fn fault(project: &TempProject, mode: &str, more: &str) -> String {
    std::fs::copy(
        here().join("lsp/fault_server.py"),
        project.path().join("fault.py"),
    )
    .unwrap();
    format!(
        ".command = .{{ \"/usr/bin/python3\", \"/workspace/fault.py\", \"{mode}\" }}, .languages = .{{ \"python\" }}, {more}"
    )
}

fn project(zon: &str) -> TempProject {
    let project = TempProject::git();
    project.write_chock_zon(zon);
    project.commit_all("servers");
    project
}

/// The texts of the session's `lsp` notices.
fn notices(events: &[Value]) -> String {
    all_of(events, "notice")
        .into_iter()
        .filter(|n| n["subject"] == "lsp")
        .map(|n| n["text"].as_str().unwrap_or_default().to_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

fn write(id: &str, path: &str, content: &str) -> chock_testkit::Reply {
    call(id, "write_file", json!({"path": path, "content": content}))
}

#[test]
fn an_edit_that_introduces_an_error_gets_pylsp_s_diagnostic_in_the_same_result() {
    let state = tempfile::tempdir().unwrap();
    let project = project(&lsp_zon(&[("pylsp", pylsp(""))], &[], ""));
    let fake = fake_model(
        state.path(),
        [
            write("w1", "app.py", "import os\n\nprint(os.getcwd())\n"),
            call(
                "e1",
                "edit_file",
                json!({"path": "app.py", "old_text": "print(os.getcwd())", "new_text": "print(os.getcwd(), missing_name)"}),
            ),
            call("d1", "diagnostics", json!({"path": "app.py"})),
            write("w2", "notes.txt", "not python\n"),
            call(
                "c1",
                "run_command",
                json!({"command": ["sh", "-c", "printf 'print(from_a_command)\\n' > app.py"]}),
            ),
            call("c2", "run_command", json!({"command": ["true"]})),
            Turn::text("done").into(),
        ],
    );
    run_ok(state.path(), project.path(), "edit app.py");
    let log = only_log(state.path());
    assert_done(&log);
    let events = log_values(&log);
    let said = notices(&events);
    assert!(
        said.contains("the language server pylsp started in the sandbox for *.py"),
        "{said}"
    );
    let decision = events
        .iter()
        .find(|e| e["type"] == "decision" && e["action"] == "lsp.pylsp")
        .unwrap_or_else(|| panic!("no lsp.pylsp decision: {events:#?}"));
    assert_eq!(decision["decision"], "allow");

    let (text, ok) = result_text(&events, "w1");
    assert!(ok, "{text}");
    assert!(
        text.contains("language server pylsp: no problems in app.py"),
        "{text}"
    );
    let (text, ok) = result_text(&events, "e1");
    assert!(ok, "the edit itself was made: {text}");
    assert!(
        text.starts_with("replaced 1 occurrence in app.py"),
        "{text}"
    );
    assert!(
        text.contains("app.py:3:20 error undefined name 'missing_name' (pyflakes)"),
        "{text}"
    );
    // The model reads the same text the log keeps.
    let (text, _) = result_text(&events, "d1");
    assert!(text.contains("undefined name 'missing_name'"), "{text}");
    let (text, _) = result_text(&events, "w2");
    assert!(
        !text.contains("language server"),
        "not a file it serves: {text}"
    );
    let offered = offered(&fake.requests());
    assert!(
        offered[0].contains(&"diagnostics".to_owned()),
        "{offered:?}"
    );
}

#[test]
fn a_denied_server_does_not_start_and_its_tool_is_not_offered() {
    let state = tempfile::tempdir().unwrap();
    let project = project(&lsp_zon(
        &[("pylsp", pylsp(""))],
        &[("lsp.pylsp", "deny")],
        "",
    ));
    let fake = fake_model(
        state.path(),
        [
            write("w1", "app.py", "print(missing_name)\n"),
            Turn::text("done").into(),
        ],
    );
    run_ok(state.path(), project.path(), "write");
    let events = log_values(&only_log(state.path()));
    let said = notices(&events);
    assert!(
        said.contains("the language server pylsp is not started: lsp.pylsp is deny"),
        "{said}"
    );
    assert!(!said.contains("started in the sandbox"), "{said}");
    let (text, ok) = result_text(&events, "w1");
    assert!(ok && !text.contains("language server"), "{text}");
    assert!(
        !offered(&fake.requests())[0].contains(&"diagnostics".to_owned()),
        "no server, no diagnostics tool"
    );
}

#[test]
fn a_server_that_hangs_at_start_is_bounded_and_the_session_carries_on() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let hang = fault(&project, "hang", ".start_timeout_ms = 300");
    project.write_chock_zon(&lsp_zon(&[("hang", hang)], &[], ""));
    project.commit_all("a server that hangs");
    let _fake = fake_model(
        state.path(),
        [write("w1", "a.py", "x = 1\n"), Turn::text("done").into()],
    );
    run_ok(state.path(), project.path(), "write");
    let log = only_log(state.path());
    assert_done(&log);
    let events = log_values(&log);
    let said = notices(&events);
    assert!(
        said.contains("the language server hang (")
            && said.contains("did not start: it did not answer initialize within 300 ms"),
        "{said}"
    );
    let (text, ok) = result_text(&events, "w1");
    assert!(ok && !text.contains("language server"), "{text}");
}

#[test]
fn a_server_that_publishes_nothing_is_waited_for_no_longer_than_its_bound() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let silent = fault(&project, "silent", ".wait_ms = 200");
    project.write_chock_zon(&lsp_zon(&[("quiet", silent)], &[], ""));
    project.commit_all("a server that says nothing");
    let _fake = fake_model(
        state.path(),
        [write("w1", "a.py", "x = 1\n"), Turn::text("done").into()],
    );
    run_ok(state.path(), project.path(), "write");
    let events = log_values(&only_log(state.path()));
    let (text, ok) = result_text(&events, "w1");
    assert!(ok, "{text}");
    assert!(
        text.contains("language server quiet sent no diagnostics for a.py within 200 ms"),
        "{text}"
    );
}

#[test]
fn a_server_that_crashes_or_floods_is_stopped_and_said_once_and_the_session_carries_on() {
    for (mode, says) in [
        ("crash", "ended its output"),
        ("flood", "flooded the session: more than 10000 messages"),
    ] {
        let state = tempfile::tempdir().unwrap();
        let project = TempProject::git();
        let server = fault(&project, mode, "");
        project.write_chock_zon(&lsp_zon(&[("bad", server)], &[], ""));
        project.commit_all("a server that fails");
        let _fake = fake_model(
            state.path(),
            [
                write("w1", "a.py", "x = 1\n"),
                write("w2", "a.py", "x = 2\n"),
                Turn::text("done").into(),
            ],
        );
        run_ok(state.path(), project.path(), "write twice");
        let log = only_log(state.path());
        assert_done(&log);
        let events = log_values(&log);
        let (text, ok) = result_text(&events, "w1");
        assert!(ok, "the write was made: {text}");
        assert!(
            text.contains("language server bad failed: ")
                && text.contains(says)
                && text.contains("it was stopped, and the session carries on without it"),
            "{mode}: {text}"
        );
        if mode == "crash" {
            assert!(text.contains("crashing on didOpen"), "its stderr: {text}");
        }
        let (text, ok) = result_text(&events, "w2");
        assert!(ok && !text.contains("language server"), "said once: {text}");
    }
}

#[test]
fn a_missing_program_a_garbage_answer_and_an_unnameable_program_each_say_why() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let garbage = fault(&project, "garbage", "");
    project.write_chock_zon(&lsp_zon(
        &[
            (
                "gone",
                ".command = .{ \"/opt/chock-lsp/no-such-server\" }, .files = .{ \"*.py\" }"
                    .to_owned(),
            ),
            ("junk", garbage),
            (
                "odd",
                ".command = .{ \"/opt/odd dir/my server\" }, .files = .{ \"*.py\" }".to_owned(),
            ),
        ],
        &[],
        "",
    ));
    project.commit_all("bad servers");
    let _fake = fake_model(
        state.path(),
        [write("w1", "a.py", "x = 1\n"), Turn::text("done").into()],
    );
    run_ok(state.path(), project.path(), "write");
    let log = only_log(state.path());
    assert_done(&log);
    let events = log_values(&log);
    let said = notices(&events);
    assert!(
        said.contains("the language server gone (")
            && said.contains("/opt/chock-lsp/no-such-server"),
        "{said}"
    );
    assert!(
        said.contains("the language server junk (")
            && said.contains(
                "it sent something that is not LSP: \"Traceback (most recent call last): oops\""
            ),
        "{said}"
    );
    assert!(
        said.contains("the language server odd (")
            && said.contains(
                "does not start: its program \"/opt/odd dir/my server\" cannot be named in a rule"
            ),
        "{said}"
    );
    let (text, ok) = result_text(&events, "w1");
    assert!(ok && !text.contains("language server"), "{text}");
}
