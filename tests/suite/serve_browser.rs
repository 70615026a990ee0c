//! The whole stack in a browser: Debian's Chromium driven by Playwright
//! (tests/browser/session.mjs) against a real `chock serve` in front of a
//! real `chock daemon`, whose session is a real `chock run` talking to the
//! fake model. The person starts the session on the page, answers the
//! model's question in words, sees it ask for a write, presses Yes, and sees
//! it finish; the log says the same. `.ci/run`
//! installs Chromium and the npm package.

use std::path::{Path, PathBuf};
use std::process::Command;

use chock_log::fold::Status;
use chock_log::fold_log;
use chock_testkit::{FakeModel, Turn, Wire};
use serde_json::json;

use super::chock;
use super::kit::ask_write_project;
use super::kit::{Running, log_values, only_log, write_config};

/// A real `chock daemon` in `state` and a real `chock serve` in front of
/// it on 127.0.0.1, and the page's URL.
fn daemon_and_serve(state: &Path) -> (Running, Running, String) {
    let mut daemon = chock(state);
    daemon.arg("daemon");
    let mut daemon = Running::spawn(daemon);
    let daemon_address = daemon.listening_on();
    let mut serve = chock(state);
    serve.args(["serve", "--host", "127.0.0.1", "--port", "0", "--daemon"]);
    serve.arg(&daemon_address);
    let mut serve = Running::spawn(serve);
    let url = format!("http://{}", serve.listening_on());
    (daemon, serve, url)
}

fn browser_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("browser")
}

/// Runs tests/browser/`script` with `args` and returns what it printed,
/// asserting it succeeded and said `says`.
fn browser_script(script: &str, args: &[&std::ffi::OsStr], says: &str) -> String {
    let out = Command::new("node")
        .arg(browser_dir().join(script))
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains(says), "{stdout}");
    stdout
}

#[test]
fn a_person_starts_a_real_session_in_the_browser_answers_yes_and_sees_it_finish() {
    let dir = browser_dir();
    assert!(
        dir.join("node_modules/playwright-core").is_dir()
            && Path::new("/usr/bin/chromium").exists(),
        "this test needs Debian's chromium and `npm ci` in tests/browser (.ci/run installs both)"
    );
    let state = tempfile::tempdir().unwrap();
    let project = ask_write_project();
    let fake = FakeModel::with([
        Turn::text("")
            .call("t1", "set_title", &json!({"title": "Write the note"}))
            .into(),
        Turn::text("")
            .call(
                "q1",
                "ask_user",
                &json!({"question": "Which file should the note go in?"}),
            )
            .into(),
        Turn::text("")
            .call(
                "w1",
                "write_file",
                &json!({"path": "note.txt", "content": "written after a yes\n"}),
            )
            .into(),
        Turn::text("The note is written.").into(),
    ]);
    write_config(state.path(), &fake.config_zon(Wire::OpenAi, "m"));

    let (daemon, serve, url) = daemon_and_serve(state.path());

    let screenshot = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("serve-session.png");
    let _ = std::fs::remove_file(&screenshot);
    browser_script(
        "session.mjs",
        &[url.as_ref(), project.path().as_ref(), screenshot.as_ref()],
        "finished; screenshot at",
    );
    assert!(std::fs::metadata(&screenshot).unwrap().len() > 1000);

    // The log agrees with the page: one session, asked, answered yes by the
    // page, the file written in its workspace, ended done.
    let log = only_log(state.path());
    let folded = fold_log(&log).unwrap();
    assert!(
        matches!(folded.state.status, Status::Ended { .. }),
        "{:?}",
        folded.state.status
    );
    let workspace = folded.state.workspace.as_ref().expect("a workspace.open");
    assert_eq!(
        std::fs::read_to_string(workspace.dir.join("note.txt")).unwrap(),
        "written after a yes\n"
    );
    let events = log_values(&log);
    let answers: Vec<_> = events
        .iter()
        .filter(|event| event["type"] == "approval.answer")
        .collect();
    assert_eq!(answers.len(), 2, "{answers:?}");
    assert_eq!(answers[0]["text"], "note.txt, please");
    assert_eq!(answers[1]["answer"], "yes");
    assert!(
        fake.requests()[2]
            .json()
            .to_string()
            .contains("the person answered: note.txt, please")
    );
    assert_eq!(fake.requests().len(), 4);
    drop(serve);
    drop(daemon);
}

#[test]
fn a_models_thinking_shows_folded_on_the_session_page() {
    let dir = browser_dir();
    assert!(
        dir.join("node_modules/playwright-core").is_dir()
            && Path::new("/usr/bin/chromium").exists(),
        "this test needs Debian's chromium and `npm ci` in tests/browser (.ci/run installs both)"
    );
    let state = tempfile::tempdir().unwrap();
    let project = chock_testkit::TempProject::git();
    let thought = "First the <b>directory</b>, then the answer.";
    let fake = FakeModel::with([
        Turn::text("")
            .thinking(thought, "sig")
            .call("l", "list_directory", &json!({}))
            .into(),
        Turn::text("Seen.").into(),
    ]);
    write_config(
        state.path(),
        &fake
            .config_zon(Wire::Anthropic, "m")
            .replace("\" },", "\", .thinking_budget = 1024 },"),
    );
    let out = super::kit::run_session(state.path(), project.path(), "look");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let id = super::kit::sessions(state.path())[0].to_string();

    let (daemon, serve, url) = daemon_and_serve(state.path());
    browser_script(
        "thinking.mjs",
        &[
            url.as_ref(),
            project.path().as_ref(),
            id.as_ref(),
            thought.as_ref(),
        ],
        "thinking: folded, then shown",
    );
    drop(serve);
    drop(daemon);
}

#[test]
fn a_diff_too_large_for_the_page_is_cut_there_and_linked_whole_as_text() {
    let dir = browser_dir();
    assert!(
        dir.join("node_modules/playwright-core").is_dir()
            && Path::new("/usr/bin/chromium").exists(),
        "this test needs Debian's chromium and `npm ci` in tests/browser (.ci/run installs both)"
    );
    let state = tempfile::tempdir().unwrap();
    let project = chock_testkit::TempProject::git();
    // About 400 KiB, past the 256 KiB the page is sent.
    let lines = 20_000;
    let content: String = (0..lines)
        .map(|n| format!("line {n} of the big file\n"))
        .collect();
    let last = format!("line {} of the big file", lines - 1);
    let fake = FakeModel::with([
        Turn::text("")
            .call(
                "w",
                "write_file",
                &json!({"path": "big.txt", "content": content}),
            )
            .into(),
        Turn::text("Written.").into(),
    ]);
    write_config(state.path(), &fake.config_zon(Wire::OpenAi, "m"));
    let out = super::kit::run_session(state.path(), project.path(), "write it");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let id = super::kit::sessions(state.path())[0].to_string();

    let (daemon, serve, url) = daemon_and_serve(state.path());
    browser_script(
        "big-diff.mjs",
        &[
            url.as_ref(),
            project.path().as_ref(),
            id.as_ref(),
            last.as_ref(),
        ],
        "big diff: cut on the page, whole behind the link",
    );
    drop(serve);
    drop(daemon);
}

/// The project the work test's session edits: a greeting, and a policy
/// that asks before every edit.
fn greeting_project() -> chock_testkit::TempProject {
    let project = chock_testkit::TempProject::git();
    project.write("greeting.txt", "Hi\n");
    project.write_chock_zon(
        ".{\n    .policy = .{\n        .rules = .{\n            .{ .action = \"call.edit_file\", .decision = .ask },\n        },\n    },\n}\n",
    );
    project.commit_all("a greeting");
    project
}

#[test]
fn a_person_works_through_a_session_in_the_browser_and_the_home_follows_live() {
    let dir = browser_dir();
    assert!(
        dir.join("node_modules/playwright-core").is_dir()
            && Path::new("/usr/bin/chromium").exists(),
        "this test needs Debian's chromium and `npm ci` in tests/browser (.ci/run installs both)"
    );
    let state = tempfile::tempdir().unwrap();
    let project = greeting_project();
    let reply = "## Plan\n\nI'll **edit** the file, then check it:\n\n- read it\n- change it\n\n\
                 ```sh\nsh check.sh\n```\n\nA model may write <img src=x onerror=\"window.pwned=1\"> too.";
    let fake = FakeModel::with([
        Turn::text(reply)
            .call(
                "p1",
                "update_plan",
                &json!({"items": [
                    {"step": "Edit the greeting", "status": "in_progress"},
                    {"step": "Check it", "status": "pending"},
                ]}),
            )
            .into(),
        Turn::text("")
            .call(
                "q1",
                "ask_user",
                &json!({"question": "Which greeting should it say?"}),
            )
            .into(),
        Turn::text("")
            .call(
                "e1",
                "edit_file",
                &json!({"path": "greeting.txt", "old_text": "Hi", "new_text": "Hello, world"}),
            )
            .into(),
        Turn::text("")
            .call(
                "c1",
                "run_command",
                &json!({"command": ["sh", "-c", "printf '<b>bold</b><img src=x onerror=window.pwned=2>\\n'"]}),
            )
            .into(),
        Turn::text("Done: the greeting **now** says hello.").into(),
        // The reply's turn: a slow command the person interrupts.
        Turn::text("")
            .call("s1", "run_command", &json!({"command": ["sleep", "30"]}))
            .into(),
        // The second session.
        Turn::text("Second task done.").into(),
    ]);
    write_config(state.path(), &fake.config_zon(Wire::OpenAi, "m"));

    let (daemon, serve, url) = daemon_and_serve(state.path());

    // CHOCK_WRITE_SCREENSHOTS=1 saves them in docs/ (what docs/serve.md
    // shows); otherwise beside the build.
    let shots = if std::env::var_os("CHOCK_WRITE_SCREENSHOTS").is_some() {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs")
    } else {
        PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
    };
    browser_script(
        "work.mjs",
        &[url.as_ref(), project.path().as_ref(), shots.as_ref()],
        "worked through session",
    );
    for name in ["serve-approval", "serve-session", "serve-home"] {
        for width in [1280, 390] {
            let png = shots.join(format!("{name}-{width}.png"));
            assert!(std::fs::metadata(&png).unwrap().len() > 1000, "{png:?}");
        }
    }

    // The log agrees: the first session carried on in the same log, its
    // edit's result holds the diff, its reply's turn ended interrupted,
    // and the apply brought the edit to the project.
    let sessions = super::kit::sessions(state.path());
    assert_eq!(sessions.len(), 2, "{sessions:?}");
    let first = sessions
        .iter()
        .map(|id| log_values(&chock_log::StateDir::at(state.path()).log_path(id)))
        .find(|events| {
            events
                .iter()
                .any(|e| e["type"] == "user.message" && e["text"] == "Tidy the greeting")
        })
        .expect("the first session's log");
    let messages: Vec<_> = first
        .iter()
        .filter(|e| e["type"] == "user.message")
        .map(|e| e["text"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(
        messages,
        ["Tidy the greeting", "Now wait for the slow check"]
    );
    let edit = first
        .iter()
        .find(|e| e["type"] == "tool.result" && e["call_id"] == "e1")
        .expect("the edit's result");
    assert_eq!(
        edit["diff"],
        "--- a/greeting.txt\n+++ b/greeting.txt\n@@ -1 +1 @@\n-Hi\n+Hello, world\n"
    );
    let ends: Vec<_> = first
        .iter()
        .filter(|e| e["type"] == "session.end")
        .map(|e| e["reason"].as_str().unwrap_or_default().to_owned())
        .collect();
    let kinds: Vec<_> = first
        .iter()
        .map(|e| format!("{} {}", e["type"], e["reason"]))
        .collect();
    // The apply records `workspace.apply` and the ending again after it,
    // as `chock workspace apply` does.
    assert_eq!(ends, ["done", "interrupted", "interrupted"], "{kinds:?}");
    assert!(
        kinds.iter().any(|k| k.starts_with("\"workspace.apply\"")),
        "{kinds:?}"
    );
    assert_eq!(
        std::fs::read_to_string(project.path().join("greeting.txt")).unwrap(),
        "Hello, world\n"
    );
    drop(serve);
    drop(daemon);
}
