//! MCP servers that fail or misbehave, and remote ones: a server that
//! cannot start, writes garbage, hangs, dies mid-session, answers with
//! another id or too much; bad tool names; a Ctrl-C while servers start;
//! the loopback streamable-HTTP server of the official Python SDK reached
//! by url with a host rule, refused without one, behind a redirect, and
//! behind a certificate no system root vouches for.

use std::time::Duration;

use chock_testkit::Turn;
use serde_json::json;

use super::here;
use super::kit::{assert_done, fake_model, log_values, only_log, run_ok, start_session};
use super::mcp_session::{
    VENV, call, command, mcp_zon, notices, offered, offered_any_mcp, project, result_text,
    time_server,
};

#[test]
fn a_server_killed_mid_session_is_said_and_its_tools_withdrawn() {
    let state = tempfile::tempdir().unwrap();
    let project = project(&mcp_zon(
        &[(
            "sc",
            command(&["/usr/bin/python3", "/workspace/s.py", "modern"], ""),
        )],
        &[("mcp.sc.tool.*", "allow"), ("exec.*", "allow")],
    ));
    std::fs::copy(
        here().join("mcp/session_server.py"),
        project.path().join("s.py"),
    )
    .unwrap();
    project.commit_all("the server");
    let fake = fake_model(
        state.path(),
        [
            call("k0", "mcp__sc__echo", json!({"n": 0})),
            call("k1", "mcp__sc__die", json!({})),
            call("k2", "mcp__sc__echo", json!({"n": 2})),
            Turn::text("done").into(),
        ],
    );
    run_ok(state.path(), project.path(), "go");
    let events = log_values(&only_log(state.path()));
    assert!(result_text(&events, "k0").1, "{:#?}", notices(&events));
    let (died, ok) = result_text(&events, "k1");
    assert!(!ok && died.contains("the MCP server sc"), "{died}");
    let (after, ok) = result_text(&events, "k2");
    assert!(!ok, "{after}");
    let said = notices(&events).join("\n");
    assert!(said.contains("its tools are withdrawn"), "{said}");
    let requests = offered(&fake.requests());
    assert!(requests[0].contains(&"mcp__sc__echo".to_owned()));
    assert!(
        !requests
            .last()
            .unwrap()
            .iter()
            .any(|t| t.starts_with("mcp__sc__")),
        "{requests:?}"
    );
}

#[test]
fn servers_that_cannot_start_write_garbage_or_hang_are_said_by_name_and_the_session_goes_on() {
    let state = tempfile::tempdir().unwrap();
    let project = project(&mcp_zon(
        &[
            ("missing", command(&["no-such-mcp-server"], "")),
            (
                "garbage",
                command(&["/usr/bin/python3", "/workspace/s.py", "garbage"], ""),
            ),
            (
                "hangs",
                command(
                    &["/usr/bin/python3", "/workspace/s.py", "silent"],
                    ".start_timeout_ms = 1500",
                ),
            ),
            ("time", time_server("")),
        ],
        &[("mcp.*", "allow")],
    ));
    std::fs::copy(
        here().join("mcp/session_server.py"),
        project.path().join("s.py"),
    )
    .unwrap();
    project.commit_all("the servers");
    let fake = fake_model(state.path(), [Turn::text("done").into()]);
    let out = run_ok(state.path(), project.path(), "hello");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let events = log_values(&only_log(state.path()));
    assert_done(&only_log(state.path()));
    let said = notices(&events).join("\n");
    for (name, says) in [
        ("missing", "no-such-mcp-server"),
        ("garbage", "not JSON-RPC"),
        ("hangs", "did not answer its start"),
    ] {
        let line = format!("the MCP server {name} (");
        assert!(
            said.lines()
                .any(|l| l.starts_with(&line) && l.contains(says)),
            "{name}: {said}"
        );
        assert!(stderr.contains(&line), "{name} on stderr: {stderr}");
    }
    let offered = offered(&fake.requests());
    assert!(offered[0].contains(&"mcp__time__get_current_time".to_owned()));
    assert!(!offered[0].iter().any(|t| t.starts_with("mcp__garbage")));
}

#[test]
fn bad_tool_names_are_refused_and_said_and_the_rest_offered() {
    let state = tempfile::tempdir().unwrap();
    let project = project(&mcp_zon(
        &[(
            "names",
            command(&["/usr/bin/python3", "/workspace/s.py", "names"], ""),
        )],
        &[("mcp.*", "allow")],
    ));
    std::fs::copy(
        here().join("mcp/session_server.py"),
        project.path().join("s.py"),
    )
    .unwrap();
    project.commit_all("the server");
    let fake = fake_model(state.path(), [Turn::text("done").into()]);
    run_ok(state.path(), project.path(), "hello");
    let offered = offered(&fake.requests());
    let mcp: Vec<&String> = offered[0]
        .iter()
        .filter(|t| t.starts_with("mcp__"))
        .collect();
    assert_eq!(mcp, ["mcp__names__echo"], "{offered:?}");
    let said = notices(&log_values(&only_log(state.path()))).join("\n");
    assert!(said.contains("\"two words\""), "{said}");
    assert!(said.contains("\"twice\" (listed more than once)"), "{said}");
}

#[test]
fn wrong_arguments_a_stray_id_and_a_call_that_never_answers_come_back_to_the_model() {
    let state = tempfile::tempdir().unwrap();
    let project = project(&mcp_zon(
        &[
            ("time", time_server("")),
            (
                "sc",
                command(
                    &["/usr/bin/python3", "/workspace/s.py", "modern"],
                    ".call_timeout_ms = 1000",
                ),
            ),
        ],
        &[("mcp.*", "allow")],
    ));
    std::fs::copy(
        here().join("mcp/session_server.py"),
        project.path().join("s.py"),
    )
    .unwrap();
    project.commit_all("the server");
    let _fake = fake_model(
        state.path(),
        [
            call("w1", "mcp__time__get_current_time", json!({"zone": 7})),
            call("w2", "mcp__sc__stray", json!({})),
            call("w3", "mcp__sc__hang", json!({})),
            call("w4", "mcp__sc__big", json!({})),
            call("w5", "mcp__sc__echo", json!({"after": true})),
            Turn::text("done").into(),
        ],
    );
    run_ok(state.path(), project.path(), "go");
    let events = log_values(&only_log(state.path()));
    let (wrong, ok) = result_text(&events, "w1");
    assert!(
        !ok && wrong.contains("timezone"),
        "the server's own error: {wrong}"
    );
    let (stray, ok) = result_text(&events, "w2");
    assert!(
        !ok && stray.contains("did not answer the call within 1000 ms"),
        "{stray}"
    );
    let (hang, ok) = result_text(&events, "w3");
    assert!(
        !ok && hang.contains("did not answer the call within 1000 ms"),
        "{hang}"
    );
    let big = events
        .iter()
        .find(|e| e["type"] == "tool.result" && e["call_id"] == "w4")
        .unwrap();
    assert_eq!(big["truncated"], true);
    assert!(
        big["output"].as_str().unwrap().len() > 200_000,
        "the log keeps it whole"
    );
    let (after, ok) = result_text(&events, "w5");
    assert!(
        ok && after.contains("after"),
        "the server still answers: {after}"
    );
}

/// Waits for `url` to accept connections.
pub(crate) fn wait_listening(port: u16) {
    chock_testkit::wait_for(Duration::from_secs(20), "the MCP server's port", || {
        std::net::TcpStream::connect(("127.0.0.1", port)).ok()
    });
}

/// The loopback streamable-HTTP server (the Python SDK), on a free port.
pub(crate) struct HttpServer {
    child: std::process::Child,
    pub(crate) port: u16,
}

impl HttpServer {
    pub(crate) fn start(redirect_to: Option<&str>) -> HttpServer {
        HttpServer::start_with(redirect_to.into_iter().collect())
    }

    pub(crate) fn start_with(args: Vec<&str>) -> HttpServer {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut command = std::process::Command::new(format!("{VENV}/python3"));
        command
            .arg(here().join("mcp/http_server.py"))
            .arg(port.to_string());
        command.args(args);
        let child = command
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        wait_listening(port);
        HttpServer { child, port }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_remote_server_is_reached_with_its_host_rule_and_refused_without_one() {
    let server = HttpServer::start(None);
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    for (rules, reached) in [
        (
            vec![
                ("mcp.notes.host.127.0.0.1", "allow"),
                ("mcp.notes.tool.*", "allow"),
            ],
            true,
        ),
        (vec![("mcp.notes.tool.*", "allow")], false),
        (
            // A rule for another server authorises nothing for this one.
            vec![
                ("mcp.other.host.127.0.0.1", "allow"),
                ("mcp.notes.tool.*", "allow"),
            ],
            false,
        ),
    ] {
        let state = tempfile::tempdir().unwrap();
        let project = project(&mcp_zon(&[("notes", format!(".url = \"{url}\""))], &rules));
        let fake = fake_model(
            state.path(),
            if reached {
                vec![
                    call("r1", "mcp__notes__add", json!({"a": 2, "b": 3})),
                    Turn::text("done").into(),
                ]
            } else {
                vec![Turn::text("done").into()]
            },
        );
        run_ok(state.path(), project.path(), "add");
        let events = log_values(&only_log(state.path()));
        let said = notices(&events).join("\n");
        if reached {
            assert!(
                said.contains("the MCP server notes started (at its url"),
                "{said}"
            );
            let (text, ok) = result_text(&events, "r1");
            assert!(ok && text.contains('5'), "{text}");
        } else {
            assert!(
                said.contains("mcp.notes.host.127.0.0.1 is ask")
                    && said.contains("only allow connects"),
                "{said}"
            );
            assert!(!offered_any_mcp(&fake));
        }
    }
}

#[test]
fn a_remote_server_that_redirects_to_another_host_is_refused() {
    let server = HttpServer::start(Some("http://localhost:9/mcp"));
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let state = tempfile::tempdir().unwrap();
    let project = project(&mcp_zon(
        &[("notes", format!(".url = \"{url}\""))],
        &[
            ("mcp.notes.host.127.0.0.1", "allow"),
            ("mcp.notes.tool.*", "allow"),
        ],
    ));
    let fake = fake_model(state.path(), [Turn::text("done").into()]);
    run_ok(state.path(), project.path(), "add");
    let said = notices(&log_values(&only_log(state.path()))).join("\n");
    assert!(said.contains("redirect"), "{said}");
    assert!(!offered_any_mcp(&fake));
}

#[test]
fn a_message_over_the_bound_is_the_server_failing_and_is_said() {
    let state = tempfile::tempdir().unwrap();
    let project = project(&mcp_zon(
        &[(
            "sc",
            command(&["/usr/bin/python3", "/workspace/s.py", "modern"], ""),
        )],
        &[("mcp.*", "allow")],
    ));
    std::fs::copy(
        here().join("mcp/session_server.py"),
        project.path().join("s.py"),
    )
    .unwrap();
    project.commit_all("the server");
    let _fake = fake_model(
        state.path(),
        [
            call("h1", "mcp__sc__huge", json!({})),
            Turn::text("done").into(),
        ],
    );
    run_ok(state.path(), project.path(), "huge");
    let events = log_values(&only_log(state.path()));
    let (text, ok) = result_text(&events, "h1");
    assert!(
        !ok && text.contains("wrote a message over 16777216 bytes"),
        "{text}"
    );
    assert!(text.len() < 4096, "the oversized message is not kept");
    assert!(
        notices(&events)
            .join("\n")
            .contains("its tools are withdrawn")
    );
}

#[test]
fn a_remote_server_whose_certificate_no_system_root_vouches_for_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    let made = std::process::Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        ])
        .args([
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=DNS:localhost",
        ])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let server = HttpServer::start_with(vec!["tls", cert.to_str().unwrap(), key.to_str().unwrap()]);
    let state = tempfile::tempdir().unwrap();
    let project = project(&mcp_zon(
        &[(
            "notes",
            format!(".url = \"https://localhost:{}/mcp\"", server.port),
        )],
        &[
            ("mcp.notes.host.localhost", "allow"),
            ("mcp.notes.tool.*", "allow"),
        ],
    ));
    let fake = fake_model(state.path(), [Turn::text("done").into()]);
    run_ok(state.path(), project.path(), "add");
    let said = notices(&log_values(&only_log(state.path()))).join("\n");
    assert!(said.contains("the MCP server notes ("), "{said}");
    assert!(
        said.contains("did not start") && said.contains("certificate"),
        "{said}"
    );
    assert!(!offered_any_mcp(&fake), "{said}");
}

#[test]
fn an_interruption_while_a_server_starts_ends_the_session_at_once() {
    let state = tempfile::tempdir().unwrap();
    let project = project(&mcp_zon(
        &[(
            "slow",
            command(
                &["/usr/bin/python3", "/workspace/s.py", "silent"],
                ".start_timeout_ms = 60000",
            ),
        )],
        &[("mcp.*", "allow")],
    ));
    std::fs::copy(
        here().join("mcp/session_server.py"),
        project.path().join("s.py"),
    )
    .unwrap();
    project.commit_all("the server");
    let fake = fake_model(state.path(), [Turn::text("done").into()]);
    let child = start_session(state.path(), project.path(), "hello");
    chock_testkit::wait_for(Duration::from_secs(20), "the session's log", || {
        super::kit::sessions(state.path()).into_iter().next()
    });
    std::thread::sleep(Duration::from_millis(500));
    let interrupted = std::time::Instant::now();
    super::kit::interrupt(&child);
    let out = child.wait_with_output().unwrap();
    assert!(
        interrupted.elapsed() < Duration::from_secs(10),
        "the session waited for the server's start bound"
    );
    assert!(!out.status.success());
    let events = log_values(&only_log(state.path()));
    let end = events
        .iter()
        .rev()
        .find(|e| e["type"] == "session.end")
        .unwrap();
    assert_eq!(end["reason"], "interrupted", "{events:#?}");
    assert!(
        fake.requests().is_empty(),
        "no model request before the servers"
    );
}
