//! run_command's network in a real `chock run`: the fake model asks for
//! commands, the real binary gives them the router the project's policy
//! allows, decides each connection at net.connect.<reversed host> with a
//! `decision` event, asks a person through approve.sock, runs background
//! jobs, and publishes ports. Local servers only: the test resolver map
//! (`CHOCK_NET_RESOLVE`) sends *.test names to 127.0.0.1, which the rules
//! name so the internal-address check lets them through.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

use chock_log::{SessionId, StateDir, fold_log};
use chock_testkit::wait_for;
use chock_testkit::{FakeModel, Reply, TempProject, Turn, Wire};
use serde_json::{Value, json};

use super::chock;
pub(super) use super::kit::log_values as events;
use super::kit::{answer_pending, assert_success, finish};

pub(super) const RESOLVE: &str =
    "allowed.test=127.0.0.1,denied.test=127.0.0.1,asked.test=127.0.0.1,reviewed.test=127.0.0.1";

/// A local HTTP server answering `body` to every request.
pub(super) fn origin(body: &'static str) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    port
}

/// An origin serving `body`, a state directory, and a project with the
/// [`RULES`]: where most of these tests start.
pub(super) fn origin_and_project(body: &'static str) -> (u16, tempfile::TempDir, TempProject) {
    (
        origin(body),
        tempfile::tempdir().unwrap(),
        project("", RULES),
    )
}

/// A git project whose committed chock.zon has `net` in `.policy` and the
/// rules given.
pub(super) fn project(net: &str, rules: &[(&str, &str)]) -> TempProject {
    let project = TempProject::git();
    let mut text = format!(".{{ .policy = .{{ {net} .rules = .{{\n");
    for (action, decision) in rules {
        text.push_str(&format!(
            "    .{{ .action = \"{action}\", .decision = .{decision} }},\n"
        ));
    }
    text.push_str("} } }\n");
    project.write_chock_zon(&text);
    project.commit_all("network rules");
    project
}

pub(super) const RULES: &[(&str, &str)] = &[
    ("net.connect.test.allowed", "allow"),
    ("net.connect.test.denied", "deny"),
    ("net.connect.test.asked", "ask"),
    ("net.connect.127.0.0.1", "allow"),
];

/// The model's turn that curls `url` with run_command as call `id`.
pub(super) fn curl_turn(id: &str, url: &str) -> Reply {
    Turn::text("").call(id, "run_command", &curl(url)).into()
}

pub(super) fn curl(url: &str) -> Value {
    json!({"command": ["curl", "-sS", "--max-time", "20", url]})
}

/// Starts `chock run` whose model makes `calls` (one turn each), then says
/// it is done.
pub(super) fn start(
    state: &Path,
    project: &Path,
    calls: &[(&str, &str, Value)],
) -> (Child, FakeModel) {
    let mut turns: Vec<Reply> = calls
        .iter()
        .map(|(id, tool, args)| Turn::text("").call(id, tool, args).into())
        .collect();
    turns.push(Turn::text("Done.").into());
    start_with(state, project, turns)
}

/// Starts `chock run` whose model answers `turns` in order (the
/// reviewer's calls included).
pub(super) fn start_with(state: &Path, project: &Path, turns: Vec<Reply>) -> (Child, FakeModel) {
    let fake = FakeModel::with(turns);
    let dir = state.join("config").join("chock");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.zon"), fake.config_zon(Wire::OpenAi, "m")).unwrap();
    let child = chock(state)
        .arg("run")
        .arg(project)
        .arg("use the network")
        .env("CHOCK_NET_RESOLVE", RESOLVE)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    (child, fake)
}

pub(super) fn log_of(state: &Path) -> (SessionId, PathBuf) {
    let sessions: Vec<_> = std::fs::read_dir(state.join("sessions"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(sessions.len(), 1, "exactly one session: {sessions:?}");
    let id = SessionId::parse(&sessions[0].to_string_lossy()).unwrap();
    let log = StateDir::at(state).log_path(&id);
    (id, log)
}

/// Runs a whole session to its end; returns the events and what the model
/// was sent.
pub(super) fn session(
    state: &Path,
    project: &Path,
    calls: &[(&str, &str, Value)],
) -> (Vec<Value>, FakeModel) {
    let (child, fake) = start(state, project, calls);
    finish(child);
    let (_, log) = log_of(state);
    (events(&log), fake)
}

pub(super) fn result_of<'a>(events: &'a [Value], call: &str) -> &'a str {
    events
        .iter()
        .find(|e| e["type"] == "tool.result" && e["call_id"] == call)
        .unwrap_or_else(|| panic!("no tool.result for {call} in {events:#?}"))["output"]
        .as_str()
        .unwrap()
}

pub(super) fn net_decisions(events: &[Value]) -> Vec<(String, String)> {
    events
        .iter()
        .filter(|e| {
            e["type"] == "decision" && e["action"].as_str().unwrap().starts_with("net.connect.")
        })
        .map(|e| {
            (
                e["action"].as_str().unwrap().to_owned(),
                e["decision"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn an_allowed_host_is_reached_and_a_denied_one_is_refused_with_the_rule_named() {
    let (port, state, project) = origin_and_project("hello through the router");
    let (events, _) = session(
        state.path(),
        project.path(),
        &[
            (
                "a1",
                "run_command",
                curl(&format!("http://allowed.test:{port}/")),
            ),
            (
                "d1",
                "run_command",
                curl(&format!("http://denied.test:{port}/")),
            ),
        ],
    );
    let allowed = result_of(&events, "a1");
    assert!(allowed.starts_with("exit status 0\n"), "{allowed}");
    assert!(allowed.contains("hello through the router"), "{allowed}");
    let denied = result_of(&events, "d1");
    assert!(
        denied.contains("net.connect.test.denied refused: the policy answers deny"),
        "{denied}"
    );
    assert!(denied.contains("net.connect.test.denied"), "{denied}");
    assert!(!denied.contains("hello through the router"), "{denied}");
    let decisions = net_decisions(&events);
    assert!(
        decisions.contains(&("net.connect.test.allowed".into(), "allow".into())),
        "{decisions:?}"
    );
    assert!(
        decisions.contains(&("net.connect.test.denied".into(), "deny".into())),
        "{decisions:?}"
    );
}

#[test]
fn an_ask_answered_no_through_chock_approve_refuses_the_connection() {
    let (port, state, project) = origin_and_project("asked and answered");
    let (child, _fake) = start(
        state.path(),
        project.path(),
        &[(
            "q1",
            "run_command",
            curl(&format!("http://asked.test:{port}/")),
        )],
    );
    let (_, answered) = answer_pending(state.path(), "net.connect.test.asked", "n\n");
    assert_success(&answered);
    finish(child);
    let (_, log) = log_of(state.path());
    let events = events(&log);
    let refused = result_of(&events, "q1");
    assert!(
        refused.contains("net.connect.test.asked refused: a person answered no"),
        "{refused}"
    );
    assert!(!refused.contains("asked and answered"), "{refused}");
    let request = events
        .iter()
        .find(|e| e["type"] == "approval.request")
        .unwrap();
    assert_eq!(request["action"], "net.connect.test.asked");
    assert!(
        request["question"].as_str().unwrap().contains("asked.test"),
        "{request}"
    );
    let answer = events
        .iter()
        .find(|e| e["type"] == "approval.answer")
        .unwrap();
    assert_eq!(answer["answer"], "no");
    assert!(
        net_decisions(&events).contains(&("net.connect.test.asked".into(), "ask".into())),
        "{events:#?}"
    );
}

#[test]
fn with_nothing_permitted_a_command_gets_no_router() {
    let port = origin("unreachable");
    let state = tempfile::tempdir().unwrap();
    // .auto with only a deny: no router, no proxy variables.
    let project = project("", &[("net.connect.test.denied", "deny")]);
    let (events, _) = session(
        state.path(),
        project.path(),
        &[
            (
                "e1",
                "run_command",
                json!({"command": ["sh", "-c", "echo proxy=${HTTP_PROXY:-none}"]}),
            ),
            (
                "c1",
                "run_command",
                curl(&format!("http://allowed.test:{port}/")),
            ),
        ],
    );
    let env = result_of(&events, "e1");
    assert!(env.contains("proxy=none"), "{env}");
    let reached = result_of(&events, "c1");
    assert!(!reached.starts_with("exit status 0"), "{reached}");
    assert!(!reached.contains("unreachable"), "{reached}");
    assert!(net_decisions(&events).is_empty(), "{events:#?}");
}

#[test]
fn a_background_command_is_refused_what_the_foreground_would_have_asked() {
    let (port, state, project) = origin_and_project("background");
    let mut asked = curl(&format!("http://asked.test:{port}/"));
    asked["background"] = json!(true);
    let mut allowed = curl(&format!("http://allowed.test:{port}/"));
    allowed["background"] = json!(true);
    let (events, _) = session(
        state.path(),
        project.path(),
        &[
            ("b1", "run_command", asked),
            ("o1", "job_output", json!({"job": "1", "wait_secs": 60})),
            ("b2", "run_command", allowed),
            ("o2", "job_output", json!({"job": "2", "wait_secs": 60})),
            (
                "s1",
                "run_command",
                json!({"command": ["sleep", "300"], "background": true}),
            ),
        ],
    );
    assert!(result_of(&events, "b1").contains("started background job 1"));
    let refused = result_of(&events, "o1");
    assert!(refused.contains("job 1 (curl"), "{refused}");
    assert!(refused.contains("ended: exit status 0"), "{refused}");
    assert!(
        refused.contains("a background command gets only what is allowed outright"),
        "{refused}"
    );
    let reached = result_of(&events, "o2");
    assert!(reached.contains("background"), "{reached}");
    assert!(
        !events.iter().any(|e| e["type"] == "approval.request"),
        "a background command never asks"
    );
    let ends: Vec<(&str, &str)> = events
        .iter()
        .filter(|e| e["type"] == "background.end")
        .map(|e| (e["job_id"].as_str().unwrap(), e["status"].as_str().unwrap()))
        .collect();
    assert_eq!(ends.len(), 3, "{events:#?}");
    assert!(ends.contains(&("3", "killed")), "{ends:?}");
    let starts = events
        .iter()
        .filter(|e| e["type"] == "background.start")
        .count();
    assert_eq!(starts, 3);
    let (_, log) = log_of(state.path());
    let folded = fold_log(&log).unwrap();
    assert!(folded.state.background.is_empty(), "every job ended");
    let session_end = events
        .iter()
        .position(|e| e["type"] == "session.end")
        .unwrap();
    let killed = events
        .iter()
        .position(|e| e["type"] == "background.end" && e["job_id"] == "3")
        .unwrap();
    assert!(
        killed < session_end,
        "a job is killed before the session ends"
    );
}

/// A port nothing listens on now.
pub(super) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn serve_port_publishes_a_jobs_port_on_the_hosts_loopback_and_reports_what_it_cannot() {
    let port = free_port();
    let held = TcpListener::bind("127.0.0.1:0").unwrap();
    let busy = held.local_addr().unwrap().port();
    let state = tempfile::tempdir().unwrap();
    let serve = format!("net.serve.{port}");
    let serve_busy = format!("net.serve.{busy}");
    let project = project(
        "",
        &[
            (&serve, "allow"),
            (&serve_busy, "allow"),
            ("net.serve.80", "allow"),
        ],
    );
    // A server that answers one request and exits: the job's end lets the
    // session go on once the host has been served.
    let server = format!(
        "import socket\n\
         s = socket.socket()\n\
         s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n\
         s.bind(('127.0.0.1', {port}))\n\
         s.listen()\n\
         c, _ = s.accept()\n\
         c.recv(4096)\n\
         c.sendall(b'HTTP/1.0 200 OK\\r\\n\\r\\npublished page')\n\
         c.close()\n"
    );
    let (child, fake) = start(
        state.path(),
        project.path(),
        &[
            (
                "b1",
                "run_command",
                json!({"command": ["python3", "-c", server], "background": true}),
            ),
            ("p0", "serve_port", json!({"port": 80})),
            ("p1", "serve_port", json!({"port": busy})),
            ("p2", "serve_port", json!({"port": port, "job": "1"})),
            ("o1", "job_output", json!({"job": "1", "wait_secs": 60})),
        ],
    );
    let got = wait_for(Duration::from_secs(30), "the published page", || {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
        stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
        stream.write_all(b"GET / HTTP/1.0\r\n\r\n").ok()?;
        let mut got = String::new();
        let _ = stream.read_to_string(&mut got);
        got.ends_with("published page").then_some(got)
    });
    assert!(got.starts_with("HTTP/1.0 200 OK"), "{got}");
    assert!(
        TcpStream::connect(("127.0.0.2", port)).is_err(),
        "published beyond 127.0.0.1"
    );
    finish(child);
    drop(held);
    let (_, log) = log_of(state.path());
    let events = events(&log);
    let low = result_of(&events, "p0");
    assert!(low.contains("ports under 1024"), "{low}");
    let in_use = result_of(&events, "p1");
    assert!(in_use.contains("already listens"), "{in_use}");
    let published = result_of(&events, "p2");
    assert!(published.starts_with("published:"), "{published}");
    let decision = events
        .iter()
        .find(|e| e["type"] == "decision" && e["call_id"] == "p2")
        .unwrap();
    assert_eq!(decision["action"], format!("net.serve.{port}"));
    assert_eq!(decision["decision"], "allow");
    // serve_port is offered here, where rules permit ports.
    let offered = fake.requests()[0].json();
    assert!(offered.to_string().contains("\"serve_port\""), "{offered}");
}

#[test]
fn serve_port_is_not_offered_where_no_rule_could_permit_a_port() {
    let state = tempfile::tempdir().unwrap();
    let project = project("", RULES);
    let (events, fake) = session(
        state.path(),
        project.path(),
        &[
            ("p1", "serve_port", json!({"port": 8080})),
            ("j1", "job_output", json!({"job": "7"})),
            (
                "t1",
                "run_command",
                json!({"command": ["true"], "background": true, "timeout_secs": 5}),
            ),
        ],
    );
    let unknown = result_of(&events, "j1");
    assert!(
        unknown.contains("there is no job \"7\": no background job was started"),
        "{unknown}"
    );
    let timed = result_of(&events, "t1");
    assert!(timed.contains("a background job has no timeout"), "{timed}");
    assert!(!events.iter().any(|e| e["type"] == "background.start"));
    let offered = fake.requests()[0].json();
    assert!(!offered.to_string().contains("\"serve_port\""), "{offered}");
    assert!(offered.to_string().contains("\"job_output\""), "{offered}");
    let refused = result_of(&events, "p1");
    assert!(refused.contains("not offered"), "{refused}");
}

#[test]
fn an_allowed_name_that_resolves_to_loopback_is_refused_unless_a_rule_names_the_address() {
    let port = origin("rebound");
    let state = tempfile::tempdir().unwrap();
    // allowed.test is allowed, but it resolves to 127.0.0.1, which no rule names.
    let project = project("", &[("net.connect.test.allowed", "allow")]);
    let (events, _) = session(
        state.path(),
        project.path(),
        &[(
            "r1",
            "run_command",
            curl(&format!("http://allowed.test:{port}/")),
        )],
    );
    let refused = result_of(&events, "r1");
    assert!(refused.contains("an internal address"), "{refused}");
    assert!(refused.contains("net.connect.127.0.0.1"), "{refused}");
    assert!(!refused.contains("rebound"), "{refused}");
}

#[test]
fn with_the_fake_resolver_a_program_ignoring_the_proxy_is_decided_like_a_proxied_one() {
    let port = origin("hello through a fake address");
    let state = tempfile::tempdir().unwrap();
    let net = format!(".net = .{{ .resolver = .fake, .resolver_ports = .{{ {port} }} }},");
    let project = project(&net, RULES);
    let direct = |url: String| json!({"command": ["curl", "-sS", "--max-time", "20", "--noproxy", "*", url]});
    let (events, _) = session(
        state.path(),
        project.path(),
        &[
            (
                "g1",
                "run_command",
                json!({"command": ["getent", "hosts", "allowed.test"]}),
            ),
            (
                "a1",
                "run_command",
                direct(format!("http://allowed.test:{port}/")),
            ),
            (
                "d1",
                "run_command",
                direct(format!("http://denied.test:{port}/")),
            ),
        ],
    );
    let looked_up = result_of(&events, "g1");
    assert!(looked_up.contains("127.77.0.1"), "{looked_up}");
    let allowed = result_of(&events, "a1");
    assert!(allowed.starts_with("exit status 0\n"), "{allowed}");
    assert!(
        allowed.contains("hello through a fake address"),
        "{allowed}"
    );
    let denied = result_of(&events, "d1");
    assert!(!denied.starts_with("exit status 0"), "{denied}");
    assert!(!denied.contains("hello through a fake address"), "{denied}");
    assert_eq!(
        net_decisions(&events),
        vec![
            ("net.connect.test.allowed".to_owned(), "allow".to_owned()),
            ("net.connect.test.denied".to_owned(), "deny".to_owned()),
        ]
    );
}

#[test]
fn without_the_fake_resolver_a_name_does_not_resolve_inside() {
    let state = tempfile::tempdir().unwrap();
    let project = project("", RULES);
    let (events, _) = session(
        state.path(),
        project.path(),
        &[(
            "g1",
            "run_command",
            json!({"command": ["sh", "-c", "getent hosts allowed.test || echo unresolved"]}),
        )],
    );
    let out = result_of(&events, "g1");
    assert!(out.contains("unresolved"), "{out}");
    assert!(!out.contains("127.77."), "{out}");
}
