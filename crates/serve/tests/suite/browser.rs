//! The page in a real browser: Debian's Chromium driven by Playwright
//! against serve on TCP in front of an in-process daemon, for what a real
//! session cannot easily show: a long log paged back, a daemon that is down
//! and comes up, a daemon with another protocol number. The page driving a
//! real `chock run` end to end is tests/suite/serve_browser.rs.
//! `.ci/run` installs Chromium and the npm package.

use std::path::PathBuf;

use chock_control::Address;
use chock_testkit::RunningDaemon;

use super::{Harness, HasTestDirs, S1, S2};

/// Runs `node <script> <args>` from tests/browser, asserted to succeed;
/// its stdout.
async fn node(dir: &std::path::Path, script: &str, args: &[String]) -> String {
    let out = tokio::process::Command::new("node")
        .arg(dir.join(script))
        .args(args)
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    stdout
}

fn browser_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/browser")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_long_session_pages_back_and_still_shows_an_old_question() {
    let dir = browser_dir();
    assert!(
        dir.join("node_modules/playwright-core").is_dir(),
        "this test needs `npm ci` in tests/browser (.ci/run does it)"
    );
    let mut h = Harness::boot().await;
    let mut log = h.live_log(S1);
    log.append(
        "approval.request",
        r#""request_id":"r1","action":"exec.deploy","question":"Deploy?""#,
    );
    for n in 3..=450 {
        log.say(&format!("message {n}"));
    }
    let Address::Tcp { port, .. } = h.start_serve(Some("127.0.0.1")).await else {
        panic!("serve listens on TCP when a host is named")
    };
    node(
        &dir,
        "long-session.mjs",
        &[
            format!("http://127.0.0.1:{port}"),
            h.project_text(),
            S1.to_string(),
        ],
    )
    .await;
    drop(log);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_subagent_is_listed_under_its_parent_and_each_page_links_the_other() {
    let dir = browser_dir();
    assert!(
        dir.join("node_modules/playwright-core").is_dir(),
        "this test needs `npm ci` in tests/browser (.ci/run does it)"
    );
    let mut h = Harness::boot().await;
    let mut parent = h.live_log(S1);
    parent.append(
        "tool.call",
        &format!(
            r#""call_id":"s1","tool":"spawn_agent","arguments":{{"task":"look"}},"session":"{S2}""#
        ),
    );
    let mut child = h.live_log(S2);
    // The child's own session.open names its parent.
    child.append(
        "session.open",
        &format!(
            r#""session_id":"{S2}","project":{},"model":"fake","parent":"{S1}""#,
            serde_json::Value::from(h.project_text())
        ),
    );
    child.say("look");
    let Address::Tcp { port, .. } = h.start_serve(Some("127.0.0.1")).await else {
        panic!("serve listens on TCP when a host is named")
    };
    node(
        &dir,
        "subagent.mjs",
        &[
            format!("http://127.0.0.1:{port}"),
            h.project_text(),
            S1.to_string(),
            S2.to_string(),
        ],
    )
    .await;
    drop((parent, child));
}

/// Serve on TCP in front of `daemon`, where no daemon need be listening.
async fn serve_in_front_of(daemon: Address) -> (Harness, u16) {
    let mut h = Harness::boot_serve_only(daemon).await;
    let Address::Tcp { port, .. } = h.start_serve(Some("127.0.0.1")).await else {
        panic!("serve listens on TCP when a host is named")
    };
    (h, port)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_page_says_the_daemon_is_down_and_recovers_when_it_comes_up() {
    use tokio::io::AsyncBufReadExt;
    let dir = browser_dir();
    let sockets = tempfile::tempdir().unwrap();
    let socket = sockets.path().join("daemon.sock");
    let (h, port) = serve_in_front_of(Address::Unix(socket.clone())).await;
    let mut node = tokio::process::Command::new("node")
        .arg(dir.join("daemon-down.mjs"))
        .arg(format!("http://127.0.0.1:{port}"))
        .arg(h.project_text())
        .arg("down")
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(node.stdout.take().unwrap()).lines();
    let first = tokio::time::timeout(std::time::Duration::from_secs(30), lines.next_line())
        .await
        .expect("the page says the daemon is down")
        .unwrap();
    assert_eq!(first.as_deref(), Some("banner shown"));
    // Now a daemon comes up at that address; the page finds it by itself.
    let daemon =
        RunningDaemon::start(RunningDaemon::config(sockets.path(), "/bin/false".into())).await;
    let second = lines.next_line().await.unwrap();
    let status = node.wait().await.unwrap();
    assert_eq!(second.as_deref(), Some("recovered"));
    assert!(status.success());
    drop(daemon);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_page_names_both_protocol_numbers() {
    let sockets = tempfile::tempdir().unwrap();
    let socket = sockets.path().join("daemon.sock");
    super::bad_input::other_protocol_daemon(socket.clone()).await;
    let (h, port) = serve_in_front_of(Address::Unix(socket)).await;
    let out = tokio::process::Command::new("node")
        .arg(browser_dir().join("daemon-down.mjs"))
        .arg(format!("http://127.0.0.1:{port}"))
        .arg(h.project_text())
        .arg("mismatch")
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains(
            "The daemon speaks chock-control 2 and this chock serve speaks chock-control 1"
        ),
        "{stdout}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_models_markdown_renders_and_every_tag_from_a_log_stays_text() {
    let dir = browser_dir();
    assert!(
        dir.join("node_modules/playwright-core").is_dir(),
        "this test needs `npm ci` in tests/browser (.ci/run does it)"
    );
    let mut h = Harness::boot().await;
    let mut log = h.live_log(S1);
    let reply = serde_json::json!(
        "## Summary\n\nThis **adds** a <img src=x onerror=\"window.pwned=1\"> check:\n\n- one\n- two\n\n\
         ```html\n<script>window.pwned=3</script>\n```\n\nSee [the note](https://example.org/x) \
         and [click](javascript:window.pwned=4)."
    );
    log.append(
        "assistant.message",
        &format!(
            r#""text":{reply},"tool_calls":[{{"id":"c1","name":"run_command","arguments":{{"command":["sh","-c","echo hi"]}}}},{{"id":"w1","name":"write_file","arguments":{{"path":"a.html","content":"x"}}}}]"#
        ),
    );
    log.append(
        "tool.result",
        r#""call_id":"c1","ok":true,"output":"exit status: 0\n--- stdout ---\n<b>bold</b><script>window.pwned=2</script>\n--- stderr ---\n""#,
    );
    log.append(
        "tool.result",
        r#""call_id":"w1","ok":true,"output":"created a.html","diff":"--- /dev/null\n+++ b/a.html\n@@ -0,0 +1,2 @@\n+<iframe src=\"https://evil.example\"></iframe>\n+<b>x</b>\n... (3 more lines of the diff left out)\n""#,
    );
    log.append("session.end", r#""reason":"done","detail":"finished""#);
    let Address::Tcp { port, .. } = h.start_serve(Some("127.0.0.1")).await else {
        panic!("serve listens on TCP when a host is named")
    };
    let stdout = node(
        &dir,
        "hostile.mjs",
        &[
            format!("http://127.0.0.1:{port}"),
            h.project_text(),
            S1.to_string(),
        ],
    )
    .await;
    assert!(stdout.contains("hostile text shown as text"), "{stdout}");
}
