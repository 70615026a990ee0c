//! The MCP gateway in front of real servers: `mcp-server-time` from PyPI
//! driven by the official Python SDK on revisions 2025-11-25 and 2026-07-28,
//! and a scripted 2026-07-28 server (plus misbehaving ones) driven line by line.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::{Value, json};

use super::{Machine, here};

/// One `client.py` run: the SDK connects through the gateway, lists tools, calls one.
fn sdk_session(m: &Machine, repo: &Path, revision: &str) -> Value {
    sdk_call(
        m,
        repo,
        revision,
        "get_current_time",
        r#"{"timezone":"UTC"}"#,
    )
}

fn sdk_call(m: &Machine, repo: &Path, revision: &str, tool: &str, args: &str) -> Value {
    let mut cmd = Command::new("python3");
    cmd.arg(here().join("mcp/client.py"))
        .args([revision, tool, args, "--"])
        .arg(super::chock_bin())
        .args(["gateway", "--server", "time", "--", "mcp-server-time"])
        .current_dir(repo)
        .env("HOME", m.home())
        .env("CHOCK_STATE_DIR", m.state());
    for var in super::AGENT_VARS {
        cmd.env_remove(var);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "client.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(out.stdout.trim_ascii()).unwrap()
}

fn lift(m: &Machine, repo: &Path) {
    std::fs::remove_file(repo.join(".chock/stop.json")).unwrap();
    for entry in std::fs::read_dir(m.home().join(".chock/stops")).unwrap() {
        std::fs::remove_file(entry.unwrap().path()).unwrap();
    }
}

#[test]
fn sdk_client_and_time_server_on_both_revisions_with_the_stop_on_and_off() {
    let (m, repo) = Machine::with_shop();
    for revision in ["2025-11-25", "2026-07-28"] {
        let open = sdk_session(&m, &repo, revision);
        assert_eq!(open["revision"], revision, "{open}");
        assert_eq!(open["tools"], json!(["convert_time", "get_current_time"]));
        assert_eq!(open["call"]["ok"], true, "{open}");
        assert!(
            open["call"]["text"][0]
                .as_str()
                .unwrap()
                .contains("\"timezone\": \"UTC\""),
            "{open}"
        );

        m.ok(&repo, &["stop", "--reason", "maintenance"]);
        let stopped = sdk_session(&m, &repo, revision);
        assert_eq!(
            stopped["tools"], open["tools"],
            "tools/list still passes while stopped"
        );
        assert_eq!(stopped["call"]["ok"], false, "{stopped}");
        assert_eq!(stopped["call"]["code"], -31001);
        assert!(
            stopped["call"]["message"]
                .as_str()
                .unwrap()
                .contains("stopped: maintenance")
        );

        lift(&m, &repo);
        assert_eq!(sdk_session(&m, &repo, revision)["call"]["ok"], true);
    }
    let blocks = m.decisions_from("gateway");
    assert_eq!(blocks.len(), 2);
    assert_eq!(blocks[0]["action"], "mcp.time.tool.get_current_time");
}

/// A gateway process driven by hand, one JSON line at a time.
struct Driven {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Driven {
    fn start(m: &Machine, repo: &Path, mode: &str, log: &Path) -> Driven {
        let mut cmd = m.chock(repo);
        cmd.args(["gateway", "--server", "scripted", "--", "python3"])
            .arg(here().join("mcp/scripted_server.py"))
            .arg(mode)
            .env("SCRIPTED_LOG", log)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                if tx.send(line.unwrap()).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Driven {
            child,
            stdin,
            lines,
        }
    }

    /// A gateway that already exited closes its stdin; tests look at its exit.
    fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().unwrap();
        let _ = writeln!(stdin, "{message}").and_then(|()| stdin.flush());
    }

    fn recv(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(20))
            .expect("a reply from the gateway");
        serde_json::from_str(&line).unwrap()
    }

    /// Close the client side and wait for the gateway: (exit code, stderr).
    fn finish(mut self) -> (Option<i32>, String) {
        drop(self.stdin.take());
        let out = self.child.wait_with_output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

fn request(id: u64, method: &str, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"});
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

#[test]
fn revision_2026_07_28_without_a_handshake_passes_through_and_tools_call_is_refused_while_stopped()
{
    let (m, repo) = Machine::with_shop();
    let log = m.root.path().join("server-saw");
    let mut gw = Driven::start(&m, &repo, "modern", &log);
    gw.send(request(1, "server/discover", json!({})));
    let discover = gw.recv();
    assert_eq!(discover["result"]["resultType"], "complete", "{discover}");
    assert_eq!(
        discover["result"]["supportedVersions"],
        json!(["2026-07-28"])
    );
    gw.send(request(2, "tools/list", json!({})));
    let list = gw.recv();
    assert_eq!(list["result"]["tools"].as_array().unwrap().len(), 2);
    gw.send(request(
        3,
        "tools/call",
        json!({"name": "echo", "arguments": {"x": 1}}),
    ));
    let call = gw.recv();
    assert_eq!(
        call["result"]["content"][0]["text"], "echo:{\"x\": 1}",
        "{call}"
    );
    assert_eq!(call["result"]["resultType"], "complete");

    m.ok(&repo, &["stop", "--reason", "freeze"]);
    gw.send(request(
        4,
        "tools/call",
        json!({"name": "echo", "arguments": {}}),
    ));
    let refused = gw.recv();
    assert_eq!(refused["id"], 4);
    assert_eq!(refused["error"]["code"], -31001);
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("stopped: freeze")
    );
    assert_eq!(refused["error"]["data"]["reason"], "stopped");
    // Other methods still pass while stopped.
    gw.send(request(5, "tools/list", json!({})));
    assert_eq!(gw.recv()["id"], 5);
    let (code, stderr) = gw.finish();
    assert_eq!(code, Some(0), "{stderr}");
    let seen = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        seen, "server/discover\ntools/list\ntools/call\ntools/list\n",
        "the refused call never reached the server"
    );
}

#[test]
fn a_client_line_that_is_not_json_gets_a_parse_error_and_is_not_forwarded() {
    let (m, repo) = Machine::with_shop();
    let log = m.root.path().join("server-saw");
    let mut gw = Driven::start(&m, &repo, "modern", &log);
    gw.stdin
        .as_mut()
        .unwrap()
        .write_all(b"{\"method\": \"tools/call\"\n")
        .unwrap();
    let reply = gw.recv();
    assert_eq!(reply["error"]["code"], -32700);
    let (code, _) = gw.finish();
    assert_eq!(code, Some(0));
    assert_eq!(std::fs::read_to_string(&log).unwrap_or_default(), "");
}

/// Drives a gateway in front of the scripted server in `mode`, which fails
/// while request `id` is in flight: asserts that the request is answered
/// with -31003 and the gateway exits 1; its stderr.
fn a_failing_server(mode: &str, id: u64) -> String {
    let (m, repo) = Machine::with_shop();
    let mut gw = Driven::start(&m, &repo, mode, &m.root.path().join("saw"));
    gw.send(request(id, "tools/list", json!({})));
    let reply = gw.recv();
    assert_eq!(reply["id"], id);
    assert_eq!(
        reply["error"]["code"], -31003,
        "the request in flight is answered: {reply}"
    );
    let (code, stderr) = gw.finish();
    assert_eq!(code, Some(1));
    stderr
}

#[test]
fn a_server_that_writes_garbage_is_reported_and_the_gateway_exits_non_zero() {
    let stderr = a_failing_server("garbage", 1);
    assert!(
        stderr.contains("not JSON-RPC") && stderr.contains("Traceback"),
        "{stderr}"
    );
}

#[test]
fn a_server_that_dies_is_reported_and_the_gateway_exits_non_zero() {
    let stderr = a_failing_server("die", 7);
    assert!(
        stderr.contains("exited") && stderr.contains("3"),
        "{stderr}"
    );
}

#[test]
fn a_server_command_that_cannot_start_is_an_error() {
    let (m, repo) = Machine::with_shop();
    let out = m
        .chock(&repo)
        .args(["gateway", "--", "/nonexistent/mcp-server"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot start the MCP server"));
}

/// Revision 2025-11-25 with the real server: a project row denying one tool.
#[test]
fn a_tool_denied_in_chock_zon_is_hidden_and_its_calls_refused() {
    let (m, repo) = Machine::with_shop();
    std::fs::write(
        repo.join("chock.zon"),
        ".{\n    .policy = .{\n        .rules = .{\n            .{ .action = \"mcp.time.tool.convert_time\", .decision = .deny },\n        },\n    },\n}\n",
    )
    .unwrap();
    let args = r#"{"source_timezone":"UTC","time":"12:00","target_timezone":"Europe/Paris"}"#;
    let out = sdk_call(&m, &repo, "2025-11-25", "convert_time", args);
    assert_eq!(out["tools"], json!(["get_current_time"]), "{out}");
    assert_eq!(out["call"]["code"], -31002, "{out}");
    assert!(
        out["call"]["message"]
            .as_str()
            .unwrap()
            .contains("mcp.time.tool.convert_time")
    );
    assert_eq!(
        sdk_session(&m, &repo, "2025-11-25")["call"]["ok"],
        true,
        "other tools still run"
    );
}

#[test]
fn a_policy_that_cannot_be_read_starts_no_server() {
    let (m, repo) = Machine::with_shop();
    std::fs::write(
        repo.join("chock.zon"),
        ".{ .policy = .{ .rules = .{ .{ .decision = .maybe } } } }\n",
    )
    .unwrap();
    let saw = m.root.path().join("saw");
    let mut gw = Driven::start(&m, &repo, "modern", &saw);
    gw.send(request(1, "tools/list", json!({})));
    let (code, stderr) = gw.finish();
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("cannot load the policy"), "{stderr}");
    assert!(!saw.exists(), "the server never ran");
}
