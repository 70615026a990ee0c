//! fetch_url, web_search, read_image and the memory tools in real `chock
//! run` sessions: the fake model asks for them, the real binary decides each
//! call, reaches sites on 127.0.0.1 (the project's rules name that address,
//! as fetch_url requires for a loopback address), and the log is folded and
//! read back.

use std::path::Path;
use std::time::Duration;

use chock_log::{SessionId, StateDir};
use chock_testkit::{FakeModel, Page, Site, TempProject, Turn, Wire};
use serde_json::{Value, json};

use super::kit::{
    approve, assert_done, assert_success, call_turn, fake_model, finish, first_of, log_values,
    one_call_a_turn, run_ok, start_session, wait_for_question, write_config,
};

const RULES: &str = r#".{ .policy = .{ .rules = .{
    .{ .action = "net.fetch.127.0.0.1", .decision = .allow },
    .{ .action = "net.fetch.invalid.*", .decision = .deny },
    .{ .action = "web.search", .decision = .allow },
} } }
"#;

/// Runs one session in which the model makes `calls` (one turn each) and
/// then says it is done, with `extra` added to the operator's config.zon;
/// returns the log's events and the requests the model received.
fn session(
    state: &Path,
    project: &Path,
    extra: &str,
    calls: &[(&str, &str, Value)],
) -> (Vec<Value>, Vec<Value>) {
    let fake = FakeModel::with(one_call_a_turn(calls));
    let config = fake.config_zon(Wire::OpenAi, "m");
    write_config(state, &config.replacen(".{\n", &format!(".{{\n{extra}"), 1));
    let before: Vec<_> = sessions(state);
    run_ok(state, project, "use the web");
    let new: Vec<_> = sessions(state)
        .into_iter()
        .filter(|s| !before.contains(s))
        .collect();
    assert_eq!(new.len(), 1, "exactly one new session: {new:?}");
    let id = SessionId::parse(&new[0]).unwrap();
    let log = StateDir::at(state).log_path(&id);
    assert_done(&log);
    let events = log_values(&log);
    let requests = fake
        .requests()
        .iter()
        .map(chock_testkit::RecordedRequest::json)
        .collect();
    (events, requests)
}

/// A git project whose committed chock.zon is [`RULES`].
fn web_project() -> TempProject {
    let project = TempProject::git();
    project.write_chock_zon(RULES);
    project.commit_all("rules for the web tools");
    project
}

fn sessions(state: &Path) -> Vec<String> {
    match std::fs::read_dir(state.join("sessions")) {
        Ok(dir) => dir
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect(),
        Err(_) => Vec::new(),
    }
}

fn events_of<'a>(events: &'a [Value], kind: &str, call: &str) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|event| event["type"] == kind && event["call_id"] == call)
        .collect()
}

fn result<'a>(events: &'a [Value], call: &str) -> (bool, &'a str) {
    let found = events_of(events, "tool.result", call);
    let event = found
        .first()
        .unwrap_or_else(|| panic!("no result for {call} in {events:#?}"));
    (
        event["ok"].as_bool().unwrap(),
        event["output"].as_str().unwrap(),
    )
}

#[test]
fn fetch_url_is_decided_per_host_follows_only_allowed_hops_and_honours_robots() {
    let site = Site::start([
        (
            "/robots.txt",
            Page::text("User-agent: *\nDisallow: /private\n"),
        ),
        ("/page", Page::html("<h1>Docs</h1><p>The answer is 42.</p>")),
        ("/away", Page::redirect("http://blocked.invalid/next")),
        ("/private/x", Page::text("hidden")),
        ("/slow", Page::text("late").after(Duration::from_secs(20))),
        ("/big", Page::text(&"0123456789\n".repeat(10_000))),
    ]);
    let state = tempfile::tempdir().unwrap();
    let project = web_project();
    let url = |path: &str| format!("{}{path}", site.url());
    let (events, requests) = session(
        state.path(),
        project.path(),
        "",
        &[
            ("f1", "fetch_url", json!({"url": url("/page")})),
            ("f2", "fetch_url", json!({"url": url("/away")})),
            ("f3", "fetch_url", json!({"url": "http://denied.invalid/"})),
            ("f4", "fetch_url", json!({"url": url("/private/x")})),
            (
                "f5",
                "fetch_url",
                json!({"url": url("/slow"), "timeout_secs": 1}),
            ),
            ("f6", "fetch_url", json!({"url": url("/big")})),
        ],
    );

    // Allowed: decided at the host, read, HTML turned into text.
    let decisions = events_of(&events, "decision", "f1");
    assert_eq!(decisions[0]["action"], "net.fetch.127.0.0.1");
    assert_eq!(decisions[0]["decision"], "allow");
    let (ok, text) = result(&events, "f1");
    assert!(ok, "{text}");
    assert!(text.ends_with("Docs\n\nThe answer is 42."), "{text}");

    // A redirect to a denied host: the hop is decided, refused, and named.
    let hop: Vec<_> = events_of(&events, "decision", "f2")
        .into_iter()
        .filter(|d| d["action"] == "net.fetch.invalid.blocked")
        .collect();
    assert_eq!(hop.len(), 1, "{events:#?}");
    assert_eq!(hop[0]["decision"], "deny");
    assert_eq!(
        hop[0]["rule"],
        ".{ .action = \"net.fetch.invalid.*\", .decision = .deny }"
    );
    let (ok, text) = result(&events, "f2");
    assert!(!ok);
    assert!(text.contains("that hop was refused"), "{text}");

    // A denied first host is refused before anything is sent.
    let denied = events_of(&events, "decision", "f3");
    assert_eq!(denied[0]["decision"], "deny");
    assert!(events_of(&events, "tool.call", "f3").is_empty());

    // robots.txt forbids /private, so it was never asked for.
    let (ok, text) = result(&events, "f4");
    assert!(!ok);
    assert!(text.contains("robots.txt forbids /private/x"), "{text}");
    assert!(!site.requests().contains(&"/private/x".to_owned()));
    let robots = site
        .requests()
        .iter()
        .filter(|p| *p == "/robots.txt")
        .count();
    assert_eq!(robots, 1, "robots.txt is fetched once per host per session");

    // The slow page ran out of time.
    let (ok, text) = result(&events, "f5");
    assert!(!ok);
    assert!(text.starts_with("timed out after 1 s"), "{text}");

    // A huge page: the log keeps it whole, the model saw it cut.
    let big = events_of(&events, "tool.result", "f6")[0];
    assert_eq!(big["truncated"], true);
    assert!(big["output"].as_str().unwrap().len() > 110_000);
    let last = requests.last().unwrap().to_string();
    assert!(
        last.contains("left out here"),
        "the model saw the cut version"
    );
    assert!(last.len() < 100_000, "{}", last.len());
}

#[test]
fn web_search_uses_the_configured_engine_or_says_what_to_write() {
    let engine = Site::start([(
        "/search",
        Page::new(
            "application/json",
            r#"{"results":[{"title":"Zig","url":"https://ziglang.org/","content":"A language"}]}"#,
        ),
    )]);
    let state = tempfile::tempdir().unwrap();
    let project = web_project();
    let search = format!(
        "    .search = .{{ .kind = .searxng, .base_url = \"{}\" }},\n",
        engine.url()
    );
    let (events, _) = session(
        state.path(),
        project.path(),
        &search,
        &[("s1", "web_search", json!({"query": "zig language"}))],
    );
    let decision = events_of(&events, "decision", "s1");
    assert_eq!(decision[0]["action"], "web.search");
    assert_eq!(decision[0]["decision"], "allow");
    let (ok, text) = result(&events, "s1");
    assert!(ok, "{text}");
    assert!(
        text.contains("1. Zig\n   https://ziglang.org/\n   A language"),
        "{text}"
    );
    assert_eq!(engine.requests(), ["/search?q=zig+language&format=json"]);

    // With no engine, nobody is asked and the model reads the block.
    let (events, _) = session(
        state.path(),
        project.path(),
        "",
        &[("s2", "web_search", json!({"query": "zig"}))],
    );
    assert!(events_of(&events, "decision", "s2").is_empty());
    let (ok, text) = result(&events, "s2");
    assert!(!ok);
    assert!(text.contains(".search = .{ .kind = .searxng"), "{text}");
}

#[test]
fn memory_outlives_the_session_and_images_reach_the_model() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    std::fs::write(project.join("shot.png"), b"\x89PNG\r\n\x1a\nfake").unwrap();
    project.commit_all("a screenshot");
    let (events, requests) = session(
        state.path(),
        project.path(),
        "",
        &[
            (
                "w1",
                "write_memory",
                json!({"text": "The tests need 127.0.0.1."}),
            ),
            ("i1", "read_image", json!({"path": "shot.png"})),
        ],
    );
    let decision = events_of(&events, "decision", "w1");
    assert_eq!(decision[0]["action"], "call.write_memory");
    assert_eq!(decision[0]["decision"], "allow");
    assert!(result(&events, "w1").0);
    let (ok, text) = result(&events, "i1");
    assert!(ok, "{text}");
    assert_eq!(text, "shot.png: image/png, 12 bytes; the image is attached");
    let after_image = requests.last().unwrap()["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(after_image["role"], "user");
    assert_eq!(
        after_image["content"][1]["image_url"]["url"],
        "data:image/png;base64,iVBORw0KGgpmYWtl"
    );
    // The notes live under the state dir, not in the project.
    let memory: Vec<_> = std::fs::read_dir(state.path().join("memory"))
        .unwrap()
        .collect();
    assert_eq!(memory.len(), 1);

    // A later session of the same project reads them.
    let (events, _) = session(
        state.path(),
        project.path(),
        "",
        &[("r1", "read_memory", json!({}))],
    );
    let (ok, text) = result(&events, "r1");
    assert!(ok);
    assert_eq!(text, "The tests need 127.0.0.1.\n");
}

#[test]
fn a_host_nobody_named_is_asked_and_a_yes_through_chock_approve_reads_it() {
    let site = Site::start([("/", Page::text("asked for and read"))]);
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let _fake = fake_model(
        state.path(),
        [
            call_turn(
                "a1",
                "fetch_url",
                json!({"url": format!("{}/", site.url())}),
            ),
            Turn::text("Done.").into(),
        ],
    );
    let child = start_session(state.path(), project.path(), "read the page");
    let id = wait_for_question(state.path(), "net.fetch.127.0.0.1");
    assert!(
        site.requests().is_empty(),
        "nothing is fetched before the answer"
    );
    assert_success(&approve(state.path(), id.as_str(), "y\n"));
    finish(child);
    let events = log_values(&StateDir::at(state.path()).log_path(&id));
    let answer = first_of(&events, "approval.answer");
    assert_eq!(answer["answer"], "yes");
    let (ok, text) = result(&events, "a1");
    assert!(ok, "{text}");
    assert!(text.ends_with("asked for and read"), "{text}");
}
