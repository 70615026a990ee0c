//! MCP servers in a real session: the reference servers from PyPI and npm
//! (installed by .ci/run under /opt/chock-mcp, which the sandbox shows
//! read-only) started by `chock run` in the session's sandbox, driven by
//! the fake model, which records the tools it was offered in each request.
//! Failing servers and remote ones are in `mcp_session_faults.rs`, with the
//! helpers here.

use std::time::Duration;

use chock_testkit::{Reply, TempProject, Turn};
use serde_json::{Value, json};

use super::kit::{
    all_of, answer_pending, assert_done, fake_model, finish, log_values, only_log, run_ok,
    start_session,
};
use super::{chock, here};

pub(crate) const VENV: &str = "/opt/chock-mcp/venv/bin";

pub(crate) const NPM: &str = "/opt/chock-mcp/npm/node_modules/@modelcontextprotocol";

/// A ZON list of strings.
fn zon_list(items: &[&str]) -> String {
    let items: Vec<String> = items.iter().map(|s| format!("{s:?}")).collect();
    format!(".{{ {} }}", items.join(", "))
}

/// A chock.zon naming `servers` (each a name and the inside of its struct)
/// with `rules`.
pub(crate) fn mcp_zon(servers: &[(&str, String)], rules: &[(&str, &str)]) -> String {
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
        ".{{\n    .mcp = .{{\n{servers}    }},\n    .policy = .{{\n        .rules = .{{\n{rules}        }},\n    }},\n}}\n"
    )
}

/// A local server's `.command` (and more).
pub(crate) fn command(argv: &[&str], more: &str) -> String {
    format!(".command = {}, {more}", zon_list(argv))
}

pub(crate) fn time_server(more: &str) -> String {
    command(
        &[
            &format!("{VENV}/mcp-server-time"),
            "--local-timezone",
            "UTC",
        ],
        more,
    )
}

/// A git project whose committed chock.zon is `zon`.
pub(crate) fn project(zon: &str) -> TempProject {
    let project = TempProject::git();
    project.write_chock_zon(zon);
    project.commit_all("servers");
    project
}

/// The tool names the model was offered in each request.
pub(crate) fn offered(requests: &[chock_testkit::RecordedRequest]) -> Vec<Vec<String>> {
    requests
        .iter()
        .map(|request| {
            request.json()["tools"]
                .as_array()
                .map(|tools| {
                    tools
                        .iter()
                        .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default()
        })
        .collect()
}

/// The texts of the session's `mcp` notices.
pub(crate) fn notices(events: &[Value]) -> Vec<String> {
    all_of(events, "notice")
        .into_iter()
        .filter(|n| n["subject"] == "mcp")
        .map(|n| n["text"].as_str().unwrap_or_default().to_owned())
        .collect()
}

pub(crate) fn result_text<'a>(events: &'a [Value], call: &str) -> (&'a str, bool) {
    let result = events
        .iter()
        .find(|e| e["type"] == "tool.result" && e["call_id"] == call)
        .unwrap_or_else(|| panic!("no result for {call} in {events:#?}"));
    (
        result["output"].as_str().unwrap_or_default(),
        result["ok"] == true,
    )
}

pub(crate) fn call(id: &str, name: &str, args: Value) -> Reply {
    Turn::text("").call(id, name, &args).into()
}

#[test]
fn the_time_server_from_pypi_is_offered_and_called_on_both_revisions() {
    for revision in ["2026-07-28", "2025-11-25"] {
        let state = tempfile::tempdir().unwrap();
        let project = project(&mcp_zon(
            &[("time", time_server(&format!(".revision = \"{revision}\"")))],
            &[("mcp.time.tool.*", "allow")],
        ));
        let fake = fake_model(
            state.path(),
            [
                call(
                    "t1",
                    "mcp__time__get_current_time",
                    json!({"timezone": "Europe/Paris"}),
                ),
                Turn::text("done").into(),
            ],
        );
        run_ok(state.path(), project.path(), "what time is it");
        let log = only_log(state.path());
        assert_done(&log);
        let events = log_values(&log);
        let said = notices(&events).join("\n");
        assert!(
            said.contains(&format!(
                "the MCP server time started (in the sandbox, with no network; MCP {revision}"
            )),
            "{said}"
        );
        let offered = offered(&fake.requests());
        assert!(
            offered[0].contains(&"mcp__time__get_current_time".to_owned()),
            "{offered:?}"
        );
        let (text, ok) = result_text(&events, "t1");
        assert!(ok, "{text}");
        assert!(text.contains("Europe/Paris"), "{text}");
        let decision = events
            .iter()
            .find(|e| e["type"] == "decision" && e["call_id"] == "t1")
            .unwrap();
        assert_eq!(decision["action"], "mcp.time.tool.get_current_time");
        assert_eq!(decision["decision"], "allow");
        let tool_call = events
            .iter()
            .find(|e| e["type"] == "tool.call" && e["call_id"] == "t1")
            .unwrap();
        assert_eq!(tool_call["tool"], "mcp__time__get_current_time");
        // The fold (which `chock sessions`, the daemon's rows and a carried-on
        // session read) holds the call and its result like a built-in one's.
        let folded = format!(
            "{:?}",
            chock_log::fold_log(&log).unwrap().state.conversation
        );
        assert!(folded.contains("mcp__time__get_current_time"), "{folded}");
        assert!(folded.contains("Europe/Paris"), "{folded}");
    }
}

#[test]
fn without_a_pinned_revision_chock_discovers_the_newer_one_and_says_so() {
    let state = tempfile::tempdir().unwrap();
    let project = project(&mcp_zon(
        &[("time", time_server(""))],
        &[("mcp.time.tool.*", "allow")],
    ));
    let _fake = fake_model(state.path(), [Turn::text("done").into()]);
    run_ok(state.path(), project.path(), "hello");
    let said = notices(&log_values(&only_log(state.path()))).join("\n");
    assert!(said.contains("MCP 2026-07-28 by server/discover"), "{said}");
}

#[test]
fn a_server_that_knows_only_the_handshake_is_spoken_to_with_it() {
    let state = tempfile::tempdir().unwrap();
    let script = here().join("mcp/session_server.py");
    let project = project(&mcp_zon(
        &[(
            "old",
            command(&["/usr/bin/python3", "/workspace/old.py", "legacy"], ""),
        )],
        &[("mcp.old.tool.*", "allow")],
    ));
    std::fs::copy(&script, project.path().join("old.py")).unwrap();
    project.commit_all("the server");
    let fake = fake_model(
        state.path(),
        [
            call("e1", "mcp__old__echo", json!({"said": "hi"})),
            Turn::text("done").into(),
        ],
    );
    run_ok(state.path(), project.path(), "echo");
    let events = log_values(&only_log(state.path()));
    let said = notices(&events).join("\n");
    assert!(
        said.contains("MCP 2025-11-25 by the initialize handshake"),
        "{said}"
    );
    assert!(offered(&fake.requests())[0].contains(&"mcp__old__echo".to_owned()));
    let (text, ok) = result_text(&events, "e1");
    assert!(ok && text.contains(r#"echo:{"said": "hi"}"#), "{text}");
}

#[test]
fn a_tool_denied_at_start_is_never_offered_and_mcp_deny_starts_no_server() {
    let state = tempfile::tempdir().unwrap();
    let project = project(&mcp_zon(
        &[("time", time_server(""))],
        &[
            ("mcp.time.tool.*", "allow"),
            ("mcp.time.tool.convert_time", "deny"),
        ],
    ));
    let fake = fake_model(state.path(), [Turn::text("done").into()]);
    run_ok(state.path(), project.path(), "hello");
    let offered = offered(&fake.requests());
    assert!(offered[0].contains(&"mcp__time__get_current_time".to_owned()));
    assert!(
        !offered[0].iter().any(|t| t.contains("convert_time")),
        "{offered:?}"
    );
    let events = log_values(&only_log(state.path()));
    assert!(
        notices(&events)
            .join("\n")
            .contains("kept out by the policy (deny): convert_time")
    );
    assert!(
        all_of(&events, "approval.request").is_empty(),
        "a deny at start asks nobody"
    );

    let state = tempfile::tempdir().unwrap();
    let project = self::project(&mcp_zon(&[("time", time_server(""))], &[("mcp.*", "deny")]));
    let fake = fake_model(state.path(), [Turn::text("done").into()]);
    run_ok(state.path(), project.path(), "hello");
    assert!(
        !offered_any_mcp(&fake),
        "{:?}",
        self::offered(&fake.requests())
    );
    let said = notices(&log_values(&only_log(state.path()))).join("\n");
    assert!(
        said.contains("the MCP server time is not started: the policy denies every tool"),
        "{said}"
    );
}

pub(crate) fn offered_any_mcp(fake: &chock_testkit::FakeModel) -> bool {
    offered(&fake.requests())
        .iter()
        .flatten()
        .any(|t| t.starts_with("mcp__"))
}

#[test]
fn an_ask_reaches_the_person_at_the_call_through_chock_approve() {
    let state = tempfile::tempdir().unwrap();
    let project = project(&mcp_zon(
        &[("time", time_server(""))],
        &[("mcp.time.tool.get_current_time", "ask")],
    ));
    let _fake = fake_model(
        state.path(),
        [
            call(
                "a1",
                "mcp__time__get_current_time",
                json!({"timezone": "UTC"}),
            ),
            Turn::text("done").into(),
        ],
    );
    let child = start_session(state.path(), project.path(), "time please");
    let (_, out) = answer_pending(state.path(), "mcp.time.tool.get_current_time", "y\n");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = finish(child);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = log_values(&only_log(state.path()));
    let (text, ok) = result_text(&events, "a1");
    assert!(ok && text.contains("UTC"), "{text}");
}

#[test]
fn a_stop_refuses_an_mcp_call_like_any_other() {
    let state = tempfile::tempdir().unwrap();
    let project = project(&mcp_zon(
        &[("time", time_server(""))],
        &[("mcp.time.tool.*", "allow"), ("exec.*", "allow")],
    ));
    let held = "touch ready; while [ ! -e go ]; do sleep 0.05; done";
    let _fake = fake_model(
        state.path(),
        [
            call("h1", "run_command", json!({"command": ["sh", "-c", held]})),
            call(
                "s1",
                "mcp__time__get_current_time",
                json!({"timezone": "UTC"}),
            ),
            Turn::text("done").into(),
        ],
    );
    let child = chock(state.path())
        .env("HOME", state.path())
        .arg("run")
        .arg(project.path())
        .arg("time")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let workspace = chock_testkit::wait_for(Duration::from_secs(30), "the held command", || {
        let log = super::kit::sessions(state.path()).into_iter().next()?;
        let log = chock_log::StateDir::at(state.path()).log_path(&log);
        let text = std::fs::read_to_string(log).ok()?;
        let events: Vec<Value> = text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let dir = events.iter().find(|e| e["type"] == "workspace.open")?["dir"]
            .as_str()?
            .to_owned();
        std::path::Path::new(&dir)
            .join("ready")
            .exists()
            .then_some(dir)
    });
    let stop = chock(state.path())
        .current_dir(project.path())
        .env("HOME", state.path())
        .args(["stop", "--reason", "lunch"])
        .output()
        .unwrap();
    assert!(
        stop.status.success(),
        "{}",
        String::from_utf8_lossy(&stop.stderr)
    );
    std::fs::write(std::path::Path::new(&workspace).join("go"), "").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(!out.status.success(), "a stopped session does not exit 0");
    let events = log_values(&only_log(state.path()));
    let (text, ok) = result_text(&events, "s1");
    assert!(!ok && text.contains("lunch"), "{text}");
    let end = events
        .iter()
        .rev()
        .find(|e| e["type"] == "session.end")
        .unwrap();
    assert_eq!(end["reason"], "stopped");
}

#[test]
fn the_reference_servers_from_npm_run_in_the_sandbox_and_see_only_the_workspace() {
    let state = tempfile::tempdir().unwrap();
    let project = project(&mcp_zon(
        &[
            (
                "fs",
                command(
                    &[
                        "node",
                        &format!("{NPM}/server-filesystem/dist/index.js"),
                        "/workspace",
                    ],
                    "",
                ),
            ),
            (
                "every",
                command(
                    &[
                        "node",
                        &format!("{NPM}/server-everything/dist/index.js"),
                        "stdio",
                    ],
                    "",
                ),
            ),
        ],
        &[("mcp.*", "allow"), ("sandbox.jit", "allow")],
    ));
    std::fs::write(
        project.path().join("hello.txt"),
        "hello from the workspace\n",
    )
    .unwrap();
    project.commit_all("a file");
    let fake = fake_model(
        state.path(),
        [
            call(
                "f1",
                "mcp__fs__read_text_file",
                json!({"path": "/workspace/hello.txt"}),
            ),
            call(
                "f2",
                "mcp__fs__read_text_file",
                json!({"path": "/etc/shadow"}),
            ),
            call("v1", "mcp__every__echo", json!({"message": "over npm"})),
            Turn::text("done").into(),
        ],
    );
    run_ok(state.path(), project.path(), "read");
    let events = log_values(&only_log(state.path()));
    let said = notices(&events).join("\n");
    assert!(said.contains("the MCP server fs started"), "{said}");
    assert!(said.contains("the MCP server every started"), "{said}");
    let (text, ok) = result_text(&events, "f1");
    assert!(ok && text.contains("hello from the workspace"), "{text}");
    let (denied, ok) = result_text(&events, "f2");
    assert!(!ok, "outside the workspace: {denied}");
    let (echo, ok) = result_text(&events, "v1");
    assert!(ok && echo.contains("over npm"), "{echo}");
    let _ = fake;
}

#[test]
fn the_fetch_server_reaches_a_loopback_site_only_through_its_network_key() {
    let site = chock_testkit::Site::start([(
        "/page",
        chock_testkit::Page::html("<html><body><p>fetched through the router</p></body></html>"),
    )]);
    for (network, fetched) in [("allow", true), ("deny", false)] {
        let state = tempfile::tempdir().unwrap();
        let project = project(&mcp_zon(
            &[(
                "fetch",
                command(
                    &[
                        &format!("{VENV}/mcp-server-fetch"),
                        "--ignore-robots-txt",
                        "--allow-private-ips",
                    ],
                    "",
                ),
            )],
            &[
                ("mcp.fetch.tool.*", "allow"),
                ("mcp.fetch.network", network),
                ("net.connect.test.allowed", "allow"),
                ("net.connect.127.0.0.1", "allow"),
            ],
        ));
        let _fake = fake_model(
            state.path(),
            [
                call(
                    "n1",
                    "mcp__fetch__fetch",
                    json!({"url": format!("http://allowed.test:{}/page", site.port()), "raw": true}),
                ),
                Turn::text("done").into(),
            ],
        );
        // The router sends allowed.test to the site on the host's loopback.
        let out = chock(state.path())
            .env("CHOCK_NET_RESOLVE", "allowed.test=127.0.0.1")
            .arg("run")
            .arg(project.path())
            .arg("fetch")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let events = log_values(&only_log(state.path()));
        let (text, ok) = result_text(&events, "n1");
        if fetched {
            assert!(text.contains("fetched through the router"), "{text}");
        } else {
            assert!(!text.contains("fetched through the router"), "{ok} {text}");
        }
    }
}

#[test]
fn an_image_a_server_returns_reaches_the_model_beside_the_text() {
    let state = tempfile::tempdir().unwrap();
    let project = project(&mcp_zon(
        &[(
            "every",
            command(
                &[
                    "node",
                    &format!("{NPM}/server-everything/dist/index.js"),
                    "stdio",
                ],
                "",
            ),
        )],
        &[("mcp.*", "allow"), ("sandbox.jit", "allow")],
    ));
    let fake = fake_model(
        state.path(),
        [
            call("i1", "mcp__every__get-tiny-image", json!({})),
            Turn::text("done").into(),
        ],
    );
    run_ok(state.path(), project.path(), "an image");
    let requests = fake.requests();
    let second = requests[1].json().to_string();
    assert!(second.contains("data:image/png;base64,"), "{second}");
}

#[test]
fn servers_the_operator_names_start_everywhere_and_a_project_cannot_take_their_name() {
    let state = tempfile::tempdir().unwrap();
    let fake = fake_model(state.path(), [Turn::text("done").into()]);
    let config = fake.config_zon(chock_testkit::Wire::OpenAi, "m");
    let config = config.trim_end().strip_suffix('}').unwrap().to_owned()
        + &format!(
            "    .mcp = .{{ .time = .{{ {} }} }},\n}}\n",
            time_server("")
        );
    super::kit::write_config(state.path(), &config);
    let project = project(&mcp_zon(
        &[("time", command(&["/usr/bin/false"], ""))],
        &[("mcp.time.tool.*", "allow")],
    ));
    run_ok(state.path(), project.path(), "hello");
    let said = notices(&log_values(&only_log(state.path()))).join("\n");
    assert!(
        said.contains("the operator's config.zon names a server time too"),
        "{said}"
    );
    assert!(said.contains("the MCP server time started"), "{said}");
    assert!(offered(&fake.requests())[0].contains(&"mcp__time__get_current_time".to_owned()));
}

#[test]
fn policy_check_reports_each_bad_mcp_server_with_its_line_and_column() {
    let state = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("chock.zon");
    std::fs::write(
        &file,
        ".{\n    .mcp = .{\n        .@\"a.b\" = .{ .command = .{ \"x\" } },\n        .both = .{ .command = .{ \"x\" }, .url = \"https://a.example/mcp\" },\n        .neither = .{},\n        .ftp = .{ .url = \"ftp://a.example/\" },\n    },\n}\n",
    )
    .unwrap();
    let out = chock(state.path())
        .args(["policy", "check"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    for (at, says) in [
        ("3:9", "cannot be one label"),
        ("4:48", "both .command and .url"),
        ("5:20", "neither .command nor .url"),
        ("6:26", "the scheme ftp"),
    ] {
        assert!(
            text.lines().any(|l| l.contains(at) && l.contains(says)),
            "{at} {says}: {text}"
        );
    }
}

#[test]
fn a_restrict_self_promise_binds_the_very_next_mcp_call() {
    let state = tempfile::tempdir().unwrap();
    let project = project(&mcp_zon(
        &[("time", time_server(""))],
        &[("mcp.time.tool.*", "allow")],
    ));
    let _fake = fake_model(
        state.path(),
        [
            call(
                "p1",
                "restrict_self",
                json!({
                    "rules": [{"action": "mcp.time.tool.get_current_time", "decision": "deny"}],
                    "reason": "no clocks today",
                }),
            ),
            call(
                "p2",
                "mcp__time__get_current_time",
                json!({"timezone": "UTC"}),
            ),
            Turn::text("done").into(),
        ],
    );
    run_ok(state.path(), project.path(), "promise");
    let events = log_values(&only_log(state.path()));
    assert!(result_text(&events, "p1").1);
    let (text, ok) = result_text(&events, "p2");
    assert!(!ok, "{text}");
    let decision = events
        .iter()
        .find(|e| e["type"] == "decision" && e["call_id"] == "p2")
        .unwrap();
    assert_eq!(decision["action"], "mcp.time.tool.get_current_time");
    assert_eq!(decision["decision"], "deny");
    assert!(
        !events
            .iter()
            .any(|e| e["type"] == "tool.call" && e["call_id"] == "p2"),
        "a refused call is not run"
    );
}

#[test]
fn an_ended_session_leaves_no_server_running() {
    let state = tempfile::tempdir().unwrap();
    let marker = format!("chock-mcp-end-{}", std::process::id());
    let project = project(&mcp_zon(
        &[(
            "sc",
            command(
                &["/usr/bin/python3", "/workspace/s.py", "modern", &marker],
                "",
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
    let _fake = fake_model(state.path(), [Turn::text("done").into()]);
    run_ok(state.path(), project.path(), "hello");
    let said = notices(&log_values(&only_log(state.path()))).join("\n");
    assert!(said.contains("the MCP server sc started"), "{said}");
    let running = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .any(|cmdline| String::from_utf8_lossy(&cmdline).contains(&marker));
    assert!(!running, "the server outlived its session");
}

#[test]
fn a_local_server_gets_its_env_and_cwd_and_no_host_secret() {
    let state = tempfile::tempdir().unwrap();
    let project = project(&mcp_zon(
        &[(
            "sc",
            command(
                &["/usr/bin/python3", "/workspace/s.py", "modern"],
                ".env = .{ .GREETING = \"hello\" }, .cwd = \"sub\"",
            ),
        )],
        &[("mcp.*", "allow")],
    ));
    std::fs::copy(
        here().join("mcp/session_server.py"),
        project.path().join("s.py"),
    )
    .unwrap();
    std::fs::create_dir(project.path().join("sub")).unwrap();
    std::fs::write(project.path().join("sub/.keep"), "").unwrap();
    project.commit_all("the server");
    let _fake = fake_model(
        state.path(),
        [
            call("v1", "mcp__sc__env", json!({})),
            Turn::text("done").into(),
        ],
    );
    let out = chock(state.path())
        .env("CHOCK_TEST_HOST_SECRET", "hunter2")
        .arg("run")
        .arg(project.path())
        .arg("env")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = log_values(&only_log(state.path()));
    let (text, ok) = result_text(&events, "v1");
    assert!(ok, "{text}");
    let seen: Value = serde_json::from_str(text).unwrap();
    assert_eq!(seen["cwd"], "/workspace/sub");
    assert_eq!(seen["env"]["GREETING"], "hello");
    assert_eq!(seen["env"]["HOME"], "/tmp");
    assert!(
        !text.contains("hunter2"),
        "a host variable reached the server: {text}"
    );
}

#[test]
fn a_carried_on_session_starts_its_servers_again() {
    let state = tempfile::tempdir().unwrap();
    let project = project(&mcp_zon(
        &[("time", time_server(""))],
        &[("mcp.time.tool.*", "allow")],
    ));
    let fake = fake_model(
        state.path(),
        [
            Turn::text("first").into(),
            call(
                "c1",
                "mcp__time__get_current_time",
                json!({"timezone": "UTC"}),
            ),
            Turn::text("second").into(),
        ],
    );
    run_ok(state.path(), project.path(), "one");
    let log = only_log(state.path());
    let id = log
        .parent()
        .unwrap()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let out = chock(state.path())
        .current_dir(project.path())
        .args(["run", "--continue", &id, "two"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = log_values(&log);
    let started = notices(&events)
        .iter()
        .filter(|n| n.starts_with("the MCP server time started"))
        .count();
    assert_eq!(
        started, 2,
        "each process that owns the session starts its own"
    );
    assert!(result_text(&events, "c1").1);
    assert!(offered(&fake.requests())[1].contains(&"mcp__time__get_current_time".to_owned()));
}

#[test]
fn agent_review_sends_an_mcp_call_to_the_reviewer() {
    let state = tempfile::tempdir().unwrap();
    let project = project(&mcp_zon(
        &[("time", time_server(""))],
        &[("mcp.time.tool.get_current_time", "agent_review")],
    ));
    let fake = fake_model(
        state.path(),
        [
            call(
                "r1",
                "mcp__time__get_current_time",
                json!({"timezone": "UTC"}),
            ),
            Turn::text("NO: the clock is not part of the task.").into(),
            Turn::text("understood").into(),
        ],
    );
    run_ok(state.path(), project.path(), "fix the build");
    let events = log_values(&only_log(state.path()));
    let review = all_of(&events, "review")[0];
    assert_eq!(review["approved"], false);
    assert_eq!(review["call_id"], "r1");
    let asked = fake.requests()[1].json()["messages"].to_string();
    assert!(asked.contains("mcp.time.tool.get_current_time"), "{asked}");
    let (text, ok) = result_text(&events, "r1");
    assert!(
        !ok && text.contains("the clock is not part of the task"),
        "{text}"
    );
}

/// `mcp_zon` with a `.secrets` block (its inside) before the servers.
fn with_secrets(zon: &str, secrets: &str) -> String {
    zon.replacen(
        ".{\n",
        &format!(".{{\n    .secrets = .{{\n{secrets}    }},\n"),
        1,
    )
}

#[test]
fn a_secret_bound_to_a_server_reaches_its_environment_only_where_allowed() {
    const VALUE: &str = "mcp-secret-6203";
    let secrets = "        .TOKEN = .{ .from = .{ .env = \"CHOCK_TEST_MCP_SECRET\" }, .bind = .{ .env = \"SERVER_TOKEN\", .mcp = \"sc\" } },\n";
    let server = command(&["/usr/bin/python3", "/workspace/s.py", "modern"], "");
    let run = |rule: Option<(&str, &str)>| {
        let state = tempfile::tempdir().unwrap();
        let mut rules = vec![("mcp.*", "allow")];
        rules.extend(rule);
        let project = project(&with_secrets(
            &mcp_zon(&[("sc", server.clone())], &rules),
            secrets,
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
                call("v1", "mcp__sc__env", json!({})),
                Turn::text("done").into(),
            ],
        );
        let out = chock(state.path())
            .env("CHOCK_TEST_MCP_SECRET", VALUE)
            .arg("run")
            .arg(project.path())
            .arg("env")
            .output()
            .unwrap();
        let events = log_values(&only_log(state.path()));
        (state, fake, out, events)
    };

    // Allowed: the server has it, and the model and the log read its name.
    let (state, fake, out, events) = run(Some(("secret.use.TOKEN", "allow")));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (text, ok) = result_text(&events, "v1");
    assert!(ok, "{text}");
    let seen: Value = serde_json::from_str(text).unwrap();
    assert_eq!(seen["env"]["SERVER_TOKEN"], "[secret TOKEN]", "{text}");
    assert!(
        notices(&events)
            .iter()
            .any(|n| n == "secret TOKEN was given to the MCP server sc as $SERVER_TOKEN"),
        "{:?}",
        notices(&events)
    );
    let bodies: String = fake
        .requests()
        .iter()
        .map(|r| r.json().to_string())
        .collect();
    assert!(!bodies.contains(VALUE), "the value reached the model");
    let log = std::fs::read_to_string(only_log(state.path())).unwrap();
    assert!(!log.contains(VALUE), "the value reached the log");

    // Not allowed (no rule, or ask, which nobody can answer at the start):
    // the server does not start rather than start without it.
    for rule in [None, Some(("secret.use.TOKEN", "ask"))] {
        let (_state, fake, out, events) = run(rule);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            notices(&events).iter().any(|n| n
                .starts_with("the MCP server sc is not started: its secret TOKEN is not given")),
            "{:?}",
            notices(&events)
        );
        assert!(!offered_any_mcp(&fake), "{rule:?}");
    }
}
