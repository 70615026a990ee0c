//! The stop check through the binary: hook input on stdin, answer on the
//! streams; unreadable stop files; the OpenCode plugin under Node.

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use super::Machine;
use super::kit::{assert_success, output_with_stdin};

fn claude_input(cwd: &std::path::Path) -> String {
    format!(
        r#"{{"session_id":"s","transcript_path":"/t","cwd":"{}","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{{"command":"ls"}}}}"#,
        cwd.display()
    )
}

fn run_check(mut cmd: Command, client: &str, input: &str) -> std::process::Output {
    cmd.args(["gate", "stop-check", "--client", client]);
    output_with_stdin(cmd, input)
}

#[test]
fn the_binary_allows_then_refuses_with_exit_2_and_the_reason_on_stderr() {
    let (m, repo) = Machine::with_shop();
    let out = run_check(m.chock(&repo), "claude-code", &claude_input(&repo));
    assert_eq!(out.status.code(), Some(0));
    m.ok(&repo, &["stop", "--reason", "deploy freeze"]);
    let out = run_check(m.chock(&repo), "claude-code", &claude_input(&repo));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("stopped: deploy freeze"));
    let log = m.decisions();
    assert_eq!(log.last().unwrap()["reason"], "stopped");
    assert_eq!(log.last().unwrap()["source"], "stop-check");
}

#[test]
fn an_unknown_client_and_bad_input_are_refused() {
    let (m, repo) = Machine::with_shop();
    let out = run_check(m.chock(&repo), "aider", &claude_input(&repo));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown client"));
    let out = run_check(m.chock(&repo), "codex", "{\"tool_name\": \"shell\"");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("refused: hook input is not JSON"));
}

/// Root reads any file whatever its mode, so the unreadable case runs the
/// check as `nobody` against a stop file only root may read.
#[test]
fn an_unreadable_stop_file_refuses_every_agent() {
    let (m, repo) = Machine::with_shop();
    for dir in [m.root.path().to_owned(), m.home(), repo.clone()] {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::create_dir_all(repo.join(".chock")).unwrap();
    std::fs::set_permissions(repo.join(".chock"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(repo.join(".chock/stop.json"), "{}").unwrap();
    std::fs::set_permissions(
        repo.join(".chock/stop.json"),
        std::fs::Permissions::from_mode(0o000),
    )
    .unwrap();
    let mut cmd = Command::new("setpriv");
    cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(super::chock_bin())
        .env("HOME", m.home())
        .env("CHOCK_STATE_DIR", m.root.path().join("nobody-state"))
        .current_dir(&repo);
    for var in super::AGENT_VARS {
        cmd.env_remove(var);
    }
    let out = run_check(
        cmd,
        "gemini",
        &claude_input(&repo).replace("PreToolUse", "BeforeTool"),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("cannot be read") && err.contains("Permission denied"),
        "{err}"
    );
}

#[test]
fn the_opencode_plugin_throws_while_stopped_and_when_chock_is_missing() {
    let (m, repo) = Machine::with_shop();
    let sync = m.run(&repo, &["sync", "--client", "opencode", "--no-git"]);
    assert_success(&sync);
    let plugin = repo.join(".opencode/plugins/chock-stop.js");
    let driver = format!(
        r#"import {{ ChockStopCheck }} from "{}";
const hooks = await ChockStopCheck({{ directory: process.argv[2], worktree: process.argv[2] }});
try {{
  await hooks["tool.execute.before"]({{ tool: "read", sessionID: "s", callID: "c" }}, {{ args: {{ filePath: "README" }} }});
  console.log("allowed");
}} catch (err) {{
  console.log("refused: " + err.message);
}}
"#,
        plugin.display()
    );
    let script = m.root.path().join("drive.mjs");
    std::fs::write(&script, driver).unwrap();
    let node = |path: &std::ffi::OsStr| {
        let out = Command::new("node")
            .arg(&script)
            .arg(&repo)
            .env("PATH", path)
            .env("HOME", m.home())
            .env("CHOCK_STATE_DIR", m.state())
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    let with_chock = super::path_with_chock();
    assert_eq!(node(&with_chock), "allowed");
    m.ok(&repo, &["stop", "--reason", "lunch"]);
    assert!(node(&with_chock).starts_with("refused: stopped: lunch"));
    // No chock on PATH: the plugin refuses rather than letting the call through.
    let node_dir = std::path::Path::new(
        &String::from_utf8(
            Command::new("sh")
                .args(["-c", "command -v node"])
                .output()
                .unwrap()
                .stdout,
        )
        .unwrap()
        .trim()
        .to_owned(),
    )
    .parent()
    .unwrap()
    .to_owned();
    let out = node(node_dir.as_os_str());
    assert!(
        out.starts_with("refused: stopped: the chock stop check could not run"),
        "{out}"
    );
}
