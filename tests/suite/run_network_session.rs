//! A command's connections decided the way every tool call is: the
//! session's promises (restrict_self) narrow what the policy allows, its
//! grants (request_action) widen what the policy asks about, and a rule
//! asking for a reviewer asks the reviewer. Same real `chock run`, router
//! and local origin as `run_network`.

use chock_testkit::Turn;
use serde_json::{Value, json};

use super::kit::{answer_pending, assert_success, finish};
use super::run_network::{
    RULES, curl, curl_turn, events, log_of, net_decisions, origin, origin_and_project, project,
    result_of, session, start_with,
};

/// The `decision` events of `action`, as (decision, layer).
fn decisions_of(events: &[Value], action: &str) -> Vec<(String, String)> {
    events
        .iter()
        .filter(|e| e["type"] == "decision" && e["action"] == action)
        .map(|e| {
            (
                e["decision"].as_str().unwrap().to_owned(),
                e["layer"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// A session whose one command curls `reviewed.test` (an origin serving
/// `body`), decided at `net.connect.test.reviewed` by `mode`, with the
/// reviewer answering `verdict`: the state dir, the project (kept alive
/// while the session runs), the session and its model.
fn reviewed_curl(
    body: &'static str,
    mode: &'static str,
    verdict: &str,
) -> (
    tempfile::TempDir,
    chock_testkit::TempProject,
    std::process::Child,
    chock_testkit::FakeModel,
) {
    let port = origin(body);
    let state = tempfile::tempdir().unwrap();
    let mut rules = RULES.to_vec();
    rules.push(("net.connect.test.reviewed", mode));
    let project = project("", &rules);
    let (child, fake) = start_with(
        state.path(),
        project.path(),
        vec![
            curl_turn("c1", &format!("http://reviewed.test:{port}/")),
            Turn::text(verdict).into(),
            Turn::text("Done.").into(),
        ],
    );
    (state, project, child, fake)
}

#[test]
fn a_promise_refuses_a_connection_the_policy_allows() {
    let (port, state, project) = origin_and_project("should not be reached");
    let url = format!("http://allowed.test:{port}/");
    let (events, _) = session(
        state.path(),
        project.path(),
        &[
            ("c0", "run_command", curl(&url)),
            (
                "p1",
                "restrict_self",
                json!({"rules": [{"action": "net.connect.test.*", "decision": "deny"}], "reason": "no network from here on"}),
            ),
            ("c1", "run_command", curl(&url)),
        ],
    );
    // Before the promise the policy's allow holds; after it, the promise.
    assert!(result_of(&events, "c0").contains("should not be reached"));
    let refused = result_of(&events, "c1");
    assert!(
        refused.contains("net.connect.test.allowed refused"),
        "{refused}"
    );
    assert!(!refused.contains("should not be reached"), "{refused}");
    assert_eq!(
        decisions_of(&events, "net.connect.test.allowed"),
        vec![
            ("allow".to_owned(), "project".to_owned()),
            ("deny".to_owned(), "promise".to_owned()),
        ],
        "{events:#?}"
    );
}

#[test]
fn a_grant_lets_through_a_connection_the_policy_asks_about() {
    let (port, state, project) = origin_and_project("granted and reached");
    let (child, _fake) = start_with(
        state.path(),
        project.path(),
        vec![
            Turn::text("")
                .call(
                    "r1",
                    "request_action",
                    &json!({"action": "net.connect.test.asked", "reason": "download the fixture"}),
                )
                .into(),
            curl_turn("c1", &format!("http://asked.test:{port}/")),
            Turn::text("Done.").into(),
        ],
    );
    let (_, answered) = answer_pending(state.path(), "net.connect.test.asked", "y\n");
    assert_success(&answered);
    finish(child);
    let (_, log) = log_of(state.path());
    let events = events(&log);
    let reached = result_of(&events, "c1");
    assert!(reached.contains("granted and reached"), "{reached}");
    // One question: the request_action's; the connection asks nobody.
    let questions: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "approval.request")
        .collect();
    assert_eq!(questions.len(), 1, "{events:#?}");
    assert_eq!(
        decisions_of(&events, "net.connect.test.asked").last(),
        Some(&("allow".to_owned(), "grant".to_owned())),
        "{events:#?}"
    );
}

#[test]
fn agent_review_asks_the_reviewer_about_a_connection_and_its_no_refuses_it() {
    let (state, _project, child, fake) = reviewed_curl(
        "should not be reached",
        "agent_review",
        "NO: the task needs no download.",
    );
    finish(child);
    let (_, log) = log_of(state.path());
    let events = events(&log);
    let refused = result_of(&events, "c1");
    assert!(refused.contains("the task needs no download"), "{refused}");
    assert!(!refused.contains("should not be reached"), "{refused}");
    let asked = fake.requests()[1].json()["messages"].to_string();
    assert!(asked.contains("net.connect.test.reviewed"), "{asked}");
    assert!(asked.contains("reviewed.test"), "{asked}");
    let review = events.iter().find(|e| e["type"] == "review").unwrap();
    assert_eq!(review["approved"], false);
    assert_eq!(review["action"], "net.connect.test.reviewed");
    assert!(
        net_decisions(&events)
            .contains(&("net.connect.test.reviewed".into(), "agent_review".into())),
        "{events:#?}"
    );
}

/// In the foreground, a question about a connection is put to the
/// person's terminal as well as approve.sock, as a tool call's is; the
/// terminal's yes lets the connection through.
#[test]
fn a_foreground_run_is_asked_about_a_connection_on_its_terminal() {
    let (port, state, project) = origin_and_project("reached after a yes on the terminal");
    let fake = chock_testkit::FakeModel::with([
        curl_turn("c1", &format!("http://asked.test:{port}/")),
        Turn::text("Done.").into(),
    ]);
    super::kit::write_config(
        state.path(),
        &fake.config_zon(chock_testkit::Wire::OpenAi, "m"),
    );
    let mut cmd = std::process::Command::new("python3");
    cmd.arg(super::here().join("pty/answer.py"))
        .args(["allow it? [y/n]", "y", "--"])
        .arg(super::chock_bin())
        .arg("run")
        .arg(project.path())
        .arg("fetch it")
        .env("CHOCK_STATE_DIR", state.path())
        .env("XDG_CONFIG_HOME", state.path().join("config"))
        .env("CHOCK_NET_RESOLVE", super::run_network::RESOLVE)
        .env_remove("CHOCK_DAEMON")
        .env_remove("CHOCK_LOG");
    for var in super::AGENT_VARS {
        cmd.env_remove(var);
    }
    let out = cmd.output().unwrap();
    let screen = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{screen}");
    assert!(
        screen.contains("chock asks: allow net.connect.test.asked?"),
        "{screen}"
    );
    let (_, log) = log_of(state.path());
    let events = events(&log);
    assert!(
        result_of(&events, "c1").contains("reached after a yes on the terminal"),
        "{events:#?}"
    );
    let answer = events
        .iter()
        .find(|e| e["type"] == "approval.answer")
        .expect("an approval.answer");
    assert_eq!(answer["by"], "terminal", "{answer}");
    assert_eq!(answer["answer"], "yes", "{answer}");
}

/// `agent_then_human` on a connection: the reviewer is asked first, and
/// only after its yes is the person asked, the question carrying the
/// reviewer's reason; the person's yes lets the connection through.
#[test]
fn agent_then_human_asks_the_person_about_a_connection_after_the_reviewers_yes() {
    let (state, _project, child, fake) = reviewed_curl(
        "reached after both yeses",
        "agent_then_human",
        "YES: the fixture is part of the task.",
    );
    let (_, answered) = answer_pending(state.path(), "net.connect.test.reviewed", "y\n");
    assert_success(&answered);
    finish(child);
    let (_, log) = log_of(state.path());
    let events = events(&log);
    assert!(
        result_of(&events, "c1").contains("reached after both yeses"),
        "{events:#?}"
    );
    let kinds: Vec<&str> = events
        .iter()
        .filter_map(|e| e["type"].as_str())
        .filter(|t| ["review", "approval.request", "approval.answer"].contains(t))
        .collect();
    assert_eq!(
        kinds,
        ["review", "approval.request", "approval.answer"],
        "the reviewer first, then the person: {events:#?}"
    );
    let question = events
        .iter()
        .find(|e| e["type"] == "approval.request")
        .unwrap();
    assert!(
        question["question"]
            .as_str()
            .unwrap()
            .contains("the reviewer said yes: the fixture is part of the task"),
        "{question}"
    );
    assert_eq!(fake.requests().len(), 3, "the turn, the reviewer, the end");
}
