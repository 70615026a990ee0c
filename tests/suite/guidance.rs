//! Guidance and memory in the first request: the project's guidance files
//! at its root, the operator's own AGENTS.md and the project's memory are
//! in the instructions from the start, each bounded and cut with a note,
//! and the log records which files were read and their sizes, not their
//! text.

use chock_testkit::{FakeModel, TempProject, Turn, Wire};
use serde_json::json;

use super::kit::{all_of, assert_done, call_turn, log_values, run_ok, sessions, write_config};
use super::skills::first_instructions;
use chock_log::StateDir;

/// Runs one session on `project` with `replies`; the model and the log's
/// events of that session.
fn session(
    state: &std::path::Path,
    project: &std::path::Path,
    replies: Vec<chock_testkit::Reply>,
) -> (FakeModel, Vec<serde_json::Value>) {
    let before = sessions(state);
    let fake = FakeModel::with(replies);
    write_config(state, &fake.config_zon(Wire::OpenAi, "m"));
    run_ok(state, project, "go");
    let id = sessions(state)
        .into_iter()
        .find(|s| !before.contains(s))
        .expect("a new session");
    let log = StateDir::at(state).log_path(&id);
    assert_done(&log);
    (fake, log_values(&log))
}

fn context_notice(events: &[serde_json::Value]) -> String {
    let notices = all_of(events, "notice");
    let found: Vec<&str> = notices
        .iter()
        .filter(|n| n["subject"] == "context")
        .filter_map(|n| n["text"].as_str())
        .collect();
    assert_eq!(found.len(), 1, "{notices:?}");
    found[0].to_owned()
}

#[test]
fn the_projects_and_the_operators_guidance_and_the_memory_are_in_the_first_request() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let agents = "Run the tests with make check. AGENTS-MARKER\n";
    let claude = "Prefer small commits. CLAUDE-MARKER\n";
    let own = "I write British English. OPERATOR-MARKER\n";
    project.write("AGENTS.md", agents);
    project.write("CLAUDE.md", claude);
    project.write("sub/AGENTS.md", "NESTED-MARKER\n");
    project.commit_all("guidance");
    let operator = state.path().join("config/chock/AGENTS.md");
    std::fs::create_dir_all(operator.parent().unwrap()).unwrap();
    std::fs::write(&operator, own).unwrap();
    // A first session keeps a note; the next one starts with it.
    session(
        state.path(),
        project.path(),
        vec![
            call_turn(
                "m1",
                "write_memory",
                json!({"text": "The port is 8080. MEMORY-MARKER"}),
            ),
            Turn::text("Done.").into(),
        ],
    );
    let (fake, events) = session(
        state.path(),
        project.path(),
        vec![Turn::text("Done.").into()],
    );
    let instructions = first_instructions(&fake);
    for part in [
        "== AGENTS.md ==\nRun the tests with make check. AGENTS-MARKER\n",
        "== CLAUDE.md ==\nPrefer small commits. CLAUDE-MARKER\n",
        &format!(
            "== operator AGENTS.md at {} ==\nI write British English. OPERATOR-MARKER\n",
            operator.display()
        ),
        "== memory ==\nThe port is 8080. MEMORY-MARKER\n",
    ] {
        assert!(instructions.contains(part), "{part:?} in {instructions}");
    }
    assert!(
        !instructions.contains("NESTED-MARKER"),
        "nested guidance stays for read_guidance"
    );
    let tools = super::skills::first_tools(&fake);
    assert!(tools.contains(&"read_guidance".to_owned()), "{tools:?}");
    assert!(
        !tools.contains(&"read_skill".to_owned()),
        "no skill, no read_skill: {tools:?}"
    );
    let operator_first =
        instructions.find("OPERATOR-MARKER").unwrap() < instructions.find("AGENTS-MARKER").unwrap();
    assert!(
        operator_first,
        "the project's word comes after the operator's, as the nearer one"
    );
    assert_eq!(
        context_notice(&events),
        format!(
            "the instructions hold operator AGENTS.md at {} ({} bytes), AGENTS.md ({} bytes), CLAUDE.md ({} bytes), memory (32 bytes); skills offered: none",
            operator.display(),
            own.len(),
            agents.len(),
            claude.len()
        )
    );
    // The log records the files, not their text.
    let log = serde_json::to_string(&events).unwrap();
    for marker in ["AGENTS-MARKER", "CLAUDE-MARKER", "OPERATOR-MARKER"] {
        assert!(!log.contains(marker), "{marker} is not in the log");
    }
}

#[test]
fn guidance_over_the_bound_is_cut_with_a_note() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let body = format!("HEAD-MARKER\n{}TAIL-MARKER\n", "x".repeat(40_000));
    project.write("AGENTS.md", &body);
    project.commit_all("long guidance");
    let (fake, events) = session(
        state.path(),
        project.path(),
        vec![Turn::text("Done.").into()],
    );
    let instructions = first_instructions(&fake);
    assert!(instructions.contains("HEAD-MARKER"), "{instructions}");
    assert!(!instructions.contains("TAIL-MARKER"));
    let note = format!(
        "[cut: the first 16384 of {} bytes are shown; read_guidance reads it whole]",
        body.len()
    );
    assert!(instructions.contains(&note), "{note}");
    assert_eq!(
        context_notice(&events),
        format!(
            "the instructions hold AGENTS.md ({} bytes, cut to 16384); skills offered: none",
            body.len()
        )
    );
}
