//! Subagents through the fake model (docs/subagents.md): `spawn_agent`
//! starts a child `chock run` with its own log, linked both ways, working
//! in its parent's workspace under its parent's policy; bounds, profiles,
//! the background, a crash.

use std::path::{Path, PathBuf};

use chock_log::event::EndReason;
use chock_log::{SessionId, StateDir, fold_log};
use chock_testkit::{Reply, TempProject, Turn};
use serde_json::{Value, json};

use super::kit::{
    all_of, assert_done, assert_ended, call_turn, chock_out, fake_model, first_of, log_values,
    project_with, result_of, run_ok, sessions, workspace_file,
};

/// The sessions of `state`: the one no other names as its parent first,
/// then the others.
fn parent_and_children(state: &Path) -> (SessionId, Vec<SessionId>) {
    let dir = StateDir::at(state);
    let (mut parents, children): (Vec<SessionId>, Vec<SessionId>) = sessions(state)
        .into_iter()
        .partition(|id| fold_log(&dir.log_path(id)).unwrap().state.parent.is_none());
    assert_eq!(
        parents.len(),
        1,
        "one session a person started: {parents:?}"
    );
    (parents.remove(0), children)
}

/// The events of a log another process is writing, as far as they are
/// there: none before the log exists, and a half-written line left out.
fn events_now(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

fn log(state: &Path, id: &SessionId) -> PathBuf {
    StateDir::at(state).log_path(id)
}

/// The child's id the parent's `tool.call` of `call` names.
fn spawned(events: &[Value], call: &str) -> String {
    let named = all_of(events, "tool.call")
        .into_iter()
        .find(|e| e["call_id"] == call)
        .unwrap_or_else(|| panic!("no tool.call {call}"));
    named["session"].as_str().unwrap_or_default().to_owned()
}

fn spawn(id: &str, arguments: Value) -> Reply {
    call_turn(id, "spawn_agent", arguments)
}

#[test]
fn a_foreground_child_edits_a_file_in_its_parents_workspace_and_answers() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let _fake = fake_model(
        state.path(),
        [
            spawn("s1", json!({"task": "write hello into notes.txt"})),
            call_turn(
                "w1",
                "write_file",
                json!({"path": "notes.txt", "content": "hello\n"}),
            ),
            Turn::text("I wrote notes.txt.").into(),
            Turn::text("The subagent wrote it.").into(),
        ],
    );
    run_ok(
        state.path(),
        project.path(),
        "have a subagent write notes.txt",
    );
    let (parent, children) = parent_and_children(state.path());
    assert_eq!(children.len(), 1, "{children:?}");
    let child = &children[0];
    let parent_log = log(state.path(), &parent);
    let events = log_values(&parent_log);
    // Linked both ways: the parent's call names the child, the child's
    // session.open names the parent.
    assert_eq!(spawned(&events, "s1"), child.as_str());
    let child_events = log_values(&log(state.path(), child));
    assert_eq!(
        first_of(&child_events, "session.open")["parent"],
        parent.as_str()
    );
    assert_eq!(
        first_of(&child_events, "user.message")["text"],
        "write hello into notes.txt"
    );
    assert_done(&log(state.path(), child));
    assert_done(&parent_log);
    // The parent's result is the child's answer, with its id.
    let result = result_of(&events, "s1");
    assert_eq!(result["ok"], true, "{result}");
    let text = result["output"].as_str().unwrap();
    assert!(
        text.contains(child.as_str()) && text.contains("I wrote notes.txt."),
        "{text}"
    );
    let end = first_of(&events, "subagent.end");
    assert_eq!(
        (end["session"].as_str(), end["reason"].as_str()),
        (Some(child.as_str()), Some("done"))
    );
    // The child worked in the parent's workspace.
    assert_eq!(
        workspace_file(&parent_log, "notes.txt").as_deref(),
        Some("hello\n")
    );
    // `chock log` reads the child; `chock sessions` shows it under its parent.
    let shown = chock_out(state.path(), &["log", child.as_str()]);
    assert!(
        shown.status.success(),
        "{}",
        String::from_utf8_lossy(&shown.stderr)
    );
    assert!(String::from_utf8_lossy(&shown.stdout).contains("notes.txt"));
    let table = chock_out(state.path(), &["sessions"]);
    let table = String::from_utf8_lossy(&table.stdout).into_owned();
    let lines: Vec<&str> = table.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with(parent.as_str()))
        .unwrap();
    assert!(
        lines[at + 1].starts_with(&format!("└ {}", child.as_str())),
        "the subagent right under its parent: {table}"
    );
    let listed = chock_out(state.path(), &["sessions", "--json"]);
    let rows: Vec<Value> = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    assert!(
        listed.contains(&format!("\"parent\":\"{}\"", parent.as_str()))
            || rows.iter().any(|r| r["parent"] == parent.as_str()),
        "{listed}"
    );
}

#[test]
fn a_spawn_that_names_an_unknown_profile_or_an_empty_task_is_refused_and_nothing_starts() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let _fake = fake_model(
        state.path(),
        [
            spawn("p1", json!({"task": "look", "agent": "nobody"})),
            spawn("p2", json!({"task": "   "})),
            spawn("p3", json!({"task": "x".repeat(16 * 1024 + 1)})),
            spawn("p4", json!({"task": "look", "model": "elsewhere/m"})),
            Turn::text("I will do it myself.").into(),
        ],
    );
    run_ok(state.path(), project.path(), "try subagents");
    let (parent, children) = parent_and_children(state.path());
    assert!(children.is_empty(), "{children:?}");
    let events = log_values(&log(state.path(), &parent));
    let said = |call: &str| {
        let result = result_of(&events, call);
        assert_eq!(result["ok"], false, "{result}");
        result["output"].as_str().unwrap().to_owned()
    };
    assert!(
        said("p1").contains("no agent profile named 'nobody'; there are none"),
        "{}",
        said("p1")
    );
    assert!(said("p2").contains("the task is empty"), "{}", said("p2"));
    assert!(said("p3").contains("over the bound"), "{}", said("p3"));
    assert!(said("p4").contains("'elsewhere'"), "{}", said("p4"));
    assert_done(&log(state.path(), &parent));
}

#[test]
fn a_model_the_parents_model_select_refuses_is_refused_before_a_child_starts() {
    let state = tempfile::tempdir().unwrap();
    let project = project_with(&[("provider.fake.big", "deny")]);
    let _fake = fake_model(
        state.path(),
        [
            spawn("m1", json!({"task": "look", "model": "fake/big"})),
            Turn::text("Fine.").into(),
        ],
    );
    run_ok(state.path(), project.path(), "try a big model");
    let (parent, children) = parent_and_children(state.path());
    assert!(children.is_empty(), "{children:?}");
    let events = log_values(&log(state.path(), &parent));
    let text = result_of(&events, "m1")["output"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        text.contains("does not let a session use the model 'fake/big'"),
        "{text}"
    );
}

#[test]
fn a_child_is_denied_what_its_parent_was_denied_and_cannot_widen_its_parents_promise() {
    let state = tempfile::tempdir().unwrap();
    let project = project_with(&[("call.write_file", "deny")]);
    let _fake = fake_model(
        state.path(),
        [
            // The parent promises never to read the network, then spawns.
            call_turn(
                "r1",
                "restrict_self",
                json!({"rules": [{"action": "call.read_memory", "decision": "deny"}]}),
            ),
            spawn("s1", json!({"task": "write and read"})),
            call_turn("c1", "write_file", json!({"path": "a.txt", "content": "a"})),
            call_turn("c2", "read_memory", json!({})),
            call_turn(
                "c3",
                "request_action",
                json!({"action": "call.read_memory", "reason": "need it"}),
            ),
            call_turn(
                "c4",
                "request_action",
                json!({"action": "call.write_file", "reason": "need it"}),
            ),
            Turn::text("I could do neither.").into(),
            Turn::text("Done.").into(),
        ],
    );
    run_ok(state.path(), project.path(), "spawn under a promise");
    let (_parent, children) = parent_and_children(state.path());
    let child_events = log_values(&log(state.path(), &children[0]));
    let refused = |call: &str| {
        let result = result_of(&child_events, call);
        assert_eq!(result["ok"], false, "{result}");
        result["output"].as_str().unwrap().to_owned()
    };
    assert!(refused("c1").contains("denied"), "{}", refused("c1"));
    assert!(refused("c2").contains("denied"), "{}", refused("c2"));
    assert!(
        refused("c3").contains("parent session"),
        "{}",
        refused("c3")
    );
    assert!(
        refused("c4").contains("cannot be granted"),
        "{}",
        refused("c4")
    );
    // Nobody was asked: no question exists that could widen the child.
    assert!(all_of(&child_events, "approval.request").is_empty());
    assert!(all_of(&child_events, "grant").is_empty());
}

/// config.zon for the fake model with `.subagents` bounds.
fn bounds_config(state: &Path, fake: &chock_testkit::FakeModel, bounds: &str) {
    let base = fake.config_zon(chock_testkit::Wire::OpenAi, "m");
    let text = base.trim_end().strip_suffix('}').unwrap().to_owned()
        + &format!("    .subagents = .{{ {bounds} }},\n}}\n");
    super::kit::write_config(state, &text);
}

#[test]
fn a_spawn_beyond_the_depth_limit_is_refused_in_the_child_at_the_limit() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let fake = fake_model(
        state.path(),
        [
            spawn("s1", json!({"task": "go deeper"})),
            spawn("s2", json!({"task": "deeper still"})),
            Turn::text("I am as deep as it goes.").into(),
            Turn::text("Done.").into(),
        ],
    );
    bounds_config(state.path(), &fake, ".max_depth = 1");
    run_ok(state.path(), project.path(), "nest");
    let (_parent, children) = parent_and_children(state.path());
    assert_eq!(children.len(), 1, "{children:?}");
    let child_events = log_values(&log(state.path(), &children[0]));
    let text = result_of(&child_events, "s2")["output"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        text.contains("at depth 1 and .subagents.max_depth = 1"),
        "{text}"
    );
}

#[test]
fn a_child_killed_by_a_signal_ends_crashed_and_its_parents_result_says_so() {
    let state = tempfile::tempdir().unwrap();
    let project = project_with(&[("exec.path.sleep", "allow")]);
    let _fake = fake_model(
        state.path(),
        [
            spawn("s1", json!({"task": "sleep"})),
            call_turn("k1", "run_command", json!({"command": ["sleep", "60"]})),
            Turn::text("Done.").into(),
        ],
    );
    let parent = super::kit::start_session(state.path(), project.path(), "crash a child");
    let dir = StateDir::at(state.path());
    let child = chock_testkit::wait_for(WITHIN, "the child's command to start", || {
        sessions(state.path()).into_iter().find(|id| {
            fold_log(&dir.log_path(id)).is_ok_and(|f| f.state.parent.is_some())
                && events_now(&dir.log_path(id))
                    .iter()
                    .any(|e| e["type"] == "tool.call")
        })
    });
    let pid = fold_log(&log(state.path(), &child))
        .unwrap()
        .state
        .owner_pid
        .unwrap();
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(pid as i32).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
    let out = parent.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_ended(&log(state.path(), &child), EndReason::Crashed);
    let (parent_id, _) = parent_and_children(state.path());
    let events = log_values(&log(state.path(), &parent_id));
    let result = result_of(&events, "s1");
    assert_eq!(result["ok"], false);
    let text = result["output"].as_str().unwrap();
    assert!(
        text.contains("ended crashed") && text.contains("signal 9"),
        "{text}"
    );
}

const WITHIN: std::time::Duration = std::time::Duration::from_secs(60);

/// config.zon naming two fake models: `fake/m` for the parent, `kid/m` for
/// the subagents it spawns, each with its own script, so two sessions
/// running at once each take their own replies; `extra` is more fields.
fn two_models(
    state: &Path,
    parent: impl IntoIterator<Item = Reply>,
    kid: impl IntoIterator<Item = Reply>,
    extra: &str,
) -> (chock_testkit::FakeModel, chock_testkit::FakeModel) {
    let parent = chock_testkit::FakeModel::with(parent);
    let kid = chock_testkit::FakeModel::with(kid);
    super::kit::write_config(
        state,
        &format!(
            ".{{\n    .providers = .{{\n        .fake = .{{ .kind = .openai, .base_url = \"{}\" }},\n        .kid = .{{ .kind = .openai, .base_url = \"{}\" }},\n    }},\n    .model = \"fake/m\",\n{extra}}}\n",
            parent.openai_url(),
            kid.openai_url()
        ),
    );
    (parent, kid)
}

/// A run_command call that waits (at most a minute) for the file `go` to
/// appear in the workspace, which the child shares with its parent.
fn wait_for_go(id: &str) -> Reply {
    call_turn(
        id,
        "run_command",
        json!({"command": ["sh", "-c", "i=0; while [ ! -e go ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done; echo saw go"]}),
    )
}

#[test]
fn a_background_child_runs_beside_its_parent_whose_next_call_reads_its_answer() {
    let state = tempfile::tempdir().unwrap();
    let project = project_with(&[("exec.path.sh", "allow")]);
    let (parent_model, _kid) = two_models(
        state.path(),
        [
            spawn(
                "b1",
                json!({"task": "wait for go", "model": "kid/m", "background": true}),
            ),
            // One child is live and the bound is one: refused.
            spawn(
                "b2",
                json!({"task": "another", "model": "kid/m", "background": true}),
            ),
            // The parent keeps working: this file is what the child waits for.
            call_turn("w1", "write_file", json!({"path": "go", "content": "now"})),
            Turn::text("Waiting for the subagent.").into(),
            Turn::text("The subagent saw go.").into(),
        ],
        [wait_for_go("g1"), Turn::text("I saw go.").into()],
        "    .subagents = .{ .max_live = 1 },\n",
    );
    run_ok(state.path(), project.path(), "work beside a subagent");
    let (parent, children) = parent_and_children(state.path());
    assert_eq!(children.len(), 1, "{children:?}");
    let child = &children[0];
    let events = log_values(&log(state.path(), &parent));
    let started = result_of(&events, "b1")["output"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(started.contains("started in the background"), "{started}");
    let refused = result_of(&events, "b2")["output"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(refused.contains(".subagents.max_live = 1"), "{refused}");
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    let at = |kind: &str| kinds.iter().position(|k| *k == kind).unwrap();
    // The parent's own call ran while the child was live, and the child's
    // end came after it.
    let wrote = events
        .iter()
        .position(|e| e["type"] == "tool.result" && e["call_id"] == "w1")
        .unwrap();
    assert!(
        at("background.start") < wrote && wrote < at("background.end"),
        "{kinds:?}"
    );
    assert!(at("background.end") < at("subagent.end"), "{kinds:?}");
    assert_done(&log(state.path(), child));
    assert_done(&log(state.path(), &parent));
    // The answer reached the parent's model in its last request.
    let last = parent_model.requests().last().unwrap().json().to_string();
    assert!(
        last.contains("I saw go.") && last.contains(child.as_str()),
        "{last}"
    );
    // `chock usage` shows the child's tokens and the tree's total.
    let usage = chock_out(state.path(), &["usage", parent.as_str()]);
    let text = String::from_utf8_lossy(&usage.stdout).into_owned();
    assert!(
        usage.status.success(),
        "{}",
        String::from_utf8_lossy(&usage.stderr)
    );
    assert!(
        text.contains(child.as_str()) && text.contains("tree"),
        "{text}"
    );
    let json = chock_out(state.path(), &["usage", parent.as_str(), "--json"]);
    let report: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(
        report["subagents"][0]["session"],
        child.as_str(),
        "{report}"
    );
    assert_eq!(report["subagents"][0]["parent"], parent.as_str());
    let own = report["total"]["total_tokens"].as_u64().unwrap();
    let kid = report["subagents"][0]["total_tokens"].as_u64().unwrap();
    assert_eq!(report["tree"]["total_tokens"].as_u64(), Some(own + kid));
    assert_eq!(report["tree"]["sessions"], 2);
}

#[test]
fn detach_of_a_parent_holding_a_background_child_names_it_waits_and_then_hands_over() {
    use std::io::BufRead as _;
    let state = tempfile::tempdir().unwrap();
    let project = project_with(&[("exec.path.sh", "allow")]);
    let (_parent_model, _kid) = two_models(
        state.path(),
        [
            spawn(
                "b1",
                json!({"task": "wait for go", "model": "kid/m", "background": true}),
            ),
            Turn::text("Waiting for the subagent.").into(),
            Turn::text("The subagent saw go.").into(),
            Turn::text("Nothing more.").into(),
        ],
        [wait_for_go("g1"), Turn::text("I saw go.").into()],
        "",
    );
    let (_daemon, _address) = super::kit::start_daemon(state.path());
    let mut session = super::kit::start_session(state.path(), project.path(), "hand over a tree");
    let dir = StateDir::at(state.path());
    // The parent has given its final answer and waits for its child, which
    // waits for the file.
    let (parent, child) = chock_testkit::wait_for(WITHIN, "the child waiting for go", || {
        let ids = sessions(state.path());
        let parent = ids
            .iter()
            .find(|id| fold_log(&dir.log_path(id)).is_ok_and(|f| f.state.parent.is_none()))?;
        let child = ids.iter().find(|id| *id != parent)?;
        let waiting = events_now(&dir.log_path(child))
            .iter()
            .any(|e| e["type"] == "tool.call" && e["call_id"] == "g1");
        let answered = events_now(&dir.log_path(parent))
            .iter()
            .any(|e| e["type"] == "assistant.message" && e["text"] == "Waiting for the subagent.");
        (waiting && answered).then(|| (parent.clone(), child.clone()))
    });
    let mut detach = super::chock(state.path())
        .arg("detach")
        .arg(parent.as_str())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(detach.stderr.take().unwrap()).lines();
    let mut said = Vec::new();
    loop {
        let line = lines.next().expect("a line from chock detach").unwrap();
        said.push(line.clone());
        if line.contains("1 background subagent") {
            break;
        }
    }
    // The parent still runs and has not handed over while the child works.
    assert!(session.try_wait().unwrap().is_none(), "{said:?}");
    let parent_log = log(state.path(), &parent);
    let workspace = fold_log(&parent_log).unwrap().state.workspace.unwrap().dir;
    std::fs::write(workspace.join("go"), "now").unwrap();
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    assert!(detach.wait().unwrap().success(), "{said:?} {rest:?}");
    let out = session.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(8),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    chock_testkit::wait_for(WITHIN, "the adopted parent to end", || {
        matches!(
            fold_log(&parent_log).ok()?.state.status,
            chock_log::Status::Ended {
                reason: EndReason::Done,
                ..
            }
        )
        .then_some(())
    });
    let events = log_values(&parent_log);
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    let at = |kind: &str| kinds.iter().position(|k| *k == kind).unwrap();
    assert!(at("subagent.end") < at("handover"), "{kinds:?}");
    assert_done(&log(state.path(), &child));
    // The daemon's child carries the tree: the adopted parent's row and its
    // subagent's, linked, in the daemon's own listing.
    let listed = chock_out(state.path(), &["sessions", "--json"]);
    let rows: Vec<Value> = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let row = rows.iter().find(|r| r["id"] == child.as_str()).unwrap();
    assert_eq!(row["parent"], parent.as_str());
    let adopted = all_of(&events, "session.open");
    assert_eq!(
        adopted.len(),
        2,
        "opened again by the daemon's child: {kinds:?}"
    );
}

#[test]
fn a_profile_gives_its_instructions_and_narrows_the_childs_tools() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let agents = project.path().join(".chock/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("explorer.md"),
        "---\nname: explorer\ndescription: reads and reports, changes nothing\ntools: read_file, glob\n---\nReport file:line for each finding.\n",
    )
    .unwrap();
    project.commit_all("an agent profile");
    let fake = fake_model(
        state.path(),
        [
            spawn("s1", json!({"task": "find main", "agent": "explorer"})),
            call_turn("w1", "write_file", json!({"path": "x.txt", "content": "x"})),
            Turn::text("main is in src/main.rs:1").into(),
            Turn::text("Done.").into(),
        ],
    );
    run_ok(state.path(), project.path(), "explore");
    let requests = fake.requests();
    // The parent was told of the profile; the child got its instructions
    // and only its tools.
    let first = requests[0].json().to_string();
    assert!(
        first.contains("explorer (project): reads and reports, changes nothing"),
        "{first}"
    );
    let child_first = requests[1].json();
    let text = child_first.to_string();
    assert!(
        text.contains("Report file:line for each finding."),
        "{text}"
    );
    let tools: Vec<&str> = child_first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["read_file", "glob"]);
    let (_parent, children) = parent_and_children(state.path());
    let child_events = log_values(&log(state.path(), &children[0]));
    let refused = result_of(&child_events, "w1")["output"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        refused.contains("write_file is not among this subagent's tools"),
        "{refused}"
    );
}

#[test]
fn a_childs_question_names_both_sessions_and_chock_approve_of_the_child_answers_it() {
    let state = tempfile::tempdir().unwrap();
    let project = super::kit::ask_write_project();
    let _fake = fake_model(
        state.path(),
        [
            spawn("s1", json!({"task": "write x"})),
            super::kit::write_x("w1").into(),
            Turn::text("Wrote x.").into(),
            Turn::text("Done.").into(),
        ],
    );
    let session = super::kit::start_session(state.path(), project.path(), "ask through a child");
    let dir = StateDir::at(state.path());
    let (child, question) = chock_testkit::wait_for(WITHIN, "the child's question", || {
        sessions(state.path()).into_iter().find_map(|id| {
            let folded = fold_log(&dir.log_path(&id)).ok()?;
            let parent = folded.state.parent.clone()?;
            let pending = folded.state.pending_approvals.first()?;
            dir.approve_socket(&id)
                .exists()
                .then(|| (id.clone(), (parent, pending.question.clone())))
        })
    });
    let (parent, question) = question;
    assert!(
        question.starts_with(&format!(
            "subagent {} of session {}: ",
            child.as_str(),
            parent.as_str()
        )),
        "{question}"
    );
    super::kit::approve_saying(state.path(), child.as_str(), "y\n", &[]);
    let out = session.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        workspace_file(&log(state.path(), &parent), "x.txt").as_deref(),
        Some("x")
    );
}

#[test]
fn a_stop_reaches_every_session_of_the_tree() {
    let (m, repo) = super::Machine::with_shop();
    let fake = fake_model(
        &m.state(),
        [
            spawn("s1", json!({"task": "work"})),
            super::stop_session::held("c1"),
            call_turn("c2", "run_command", json!({"command": ["echo", "refused"]})),
            Turn::text("never asked for").into(),
        ],
    );
    let session = super::stop_session::start(&m, &repo);
    let state = m.state();
    let dir = StateDir::at(&state);
    let workspace = chock_testkit::wait_for(WITHIN, "the child's held command", || {
        let parent = sessions(&state)
            .into_iter()
            .find(|id| fold_log(&dir.log_path(id)).is_ok_and(|f| f.state.parent.is_none()))?;
        let ws = fold_log(&dir.log_path(&parent)).ok()?.state.workspace?.dir;
        ws.join("ready").exists().then_some(ws)
    });
    m.ok(&repo, &["stop", "--reason", "freeze"]);
    std::fs::write(workspace.join("go"), "").unwrap();
    let out = session.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (parent, children) = parent_and_children(&state);
    assert_ended(&log(&state, &children[0]), EndReason::Stopped);
    assert_ended(&log(&state, &parent), EndReason::Stopped);
    assert_eq!(
        fake.requests().len(),
        3,
        "no model call after the stop in either session"
    );
}

#[test]
fn a_spawn_once_the_tree_has_spent_its_tokens_is_refused() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let fake = fake_model(
        state.path(),
        [
            spawn("s1", json!({"task": "look"})),
            Turn::text("Fine.").into(),
        ],
    );
    bounds_config(state.path(), &fake, ".max_tree_tokens = 10");
    run_ok(state.path(), project.path(), "spend");
    let (parent, children) = parent_and_children(state.path());
    assert!(children.is_empty(), "{children:?}");
    let events = log_values(&log(state.path(), &parent));
    let text = result_of(&events, "s1")["output"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        text.contains("spent 15 tokens and .subagents.max_tree_tokens = 10"),
        "{text}"
    );
}

#[test]
fn a_parent_that_ends_ends_its_background_child_and_records_it() {
    let state = tempfile::tempdir().unwrap();
    let project = project_with(&[("exec.path.sh", "allow")]);
    let (_parent_model, _kid) = two_models(
        state.path(),
        [
            spawn(
                "b1",
                json!({"task": "wait for go", "model": "kid/m", "background": true}),
            ),
            Turn::text("Waiting for the subagent.").into(),
        ],
        [wait_for_go("g1")],
        "",
    );
    let session = super::kit::start_session(state.path(), project.path(), "end the tree");
    let dir = StateDir::at(state.path());
    let (parent, child) = chock_testkit::wait_for(WITHIN, "the child waiting for go", || {
        let ids = sessions(state.path());
        let parent = ids
            .iter()
            .find(|id| fold_log(&dir.log_path(id)).is_ok_and(|f| f.state.parent.is_none()))?;
        let child = ids.iter().find(|id| *id != parent)?;
        let waiting = events_now(&dir.log_path(child))
            .iter()
            .any(|e| e["type"] == "tool.call" && e["call_id"] == "g1");
        waiting.then(|| (parent.clone(), child.clone()))
    });
    super::kit::interrupt(&session);
    let out = session.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_ended(&log(state.path(), &child), EndReason::Interrupted);
    assert_ended(&log(state.path(), &parent), EndReason::Interrupted);
    let events = log_values(&log(state.path(), &parent));
    let end = first_of(&events, "subagent.end");
    assert_eq!(end["reason"], "interrupted", "{end}");
    assert_eq!(first_of(&events, "background.end")["status"], "killed");
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    let at = |kind: &str| kinds.iter().position(|k| *k == kind).unwrap();
    assert!(
        at("subagent.end") < at("session.end"),
        "recorded before the parent's end: {kinds:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_daemon_lists_a_subagent_under_its_parent_and_a_watch_follows_it_to_its_end() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let _fake = fake_model(
        state.path(),
        [
            spawn("s1", json!({"task": "say hi"})),
            Turn::text("hi from the child").into(),
            Turn::text("Done.").into(),
        ],
    );
    let mut command = super::chock(state.path());
    command.arg("daemon");
    let mut daemon = super::kit::Running::spawn(command);
    let client = chock_control::Client::new(daemon.address())
        .with_timeout(std::time::Duration::from_secs(60));
    let started = client.start(project.path(), "spawn one").await.unwrap();
    let deadline = std::time::Instant::now() + WITHIN;
    let child = loop {
        assert!(
            std::time::Instant::now() < deadline,
            "no subagent was listed"
        );
        let rows = client.list(project.path()).await.unwrap();
        if let Some(row) = rows
            .iter()
            .find(|r| r.value()["parent"] == started.session.as_str())
        {
            break row.value()["id"].as_str().unwrap().to_owned();
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    let mut watch = client.watch(project.path(), &child, 0).await.unwrap();
    let mut types = Vec::new();
    while let Some(event) = tokio::time::timeout(WITHIN, watch.next_event())
        .await
        .expect("the subagent ends within a minute")
        .unwrap()
    {
        let value: Value = serde_json::from_str(&event.line).unwrap();
        types.push(value["type"].as_str().unwrap().to_owned());
        if value["type"] == "session.open" {
            assert_eq!(value["parent"], started.session.as_str());
        }
    }
    assert_eq!(
        types.last().map(String::as_str),
        Some("session.end"),
        "{types:?}"
    );
    let read = client.read(&child, 0).await.unwrap();
    assert_eq!(read.len(), types.len(), "read gives what the watch saw");
    // The parent ends too, and the daemon with it.
    let mut parent = client
        .watch(project.path(), &started.session, 0)
        .await
        .unwrap();
    while tokio::time::timeout(WITHIN, parent.next_event())
        .await
        .expect("the parent ends within a minute")
        .unwrap()
        .is_some()
    {}
    assert!(daemon.terminate().success());
}

#[test]
fn job_output_with_a_background_childs_id_waits_for_it_and_reads_its_answer() {
    let state = tempfile::tempdir().unwrap();
    let project = project_with(&[("exec.path.sh", "allow")]);
    let (parent_model, _kid) = two_models(
        state.path(),
        [
            spawn(
                "b1",
                json!({"task": "wait for go", "model": "kid/m", "background": true}),
            ),
            // Slow, so the test has the child's id before the next request.
            Turn::text("")
                .call("w1", "write_file", &json!({"path": "go", "content": "now"}))
                .delay(std::time::Duration::from_millis(300))
                .into(),
        ],
        [wait_for_go("g1"), Turn::text("I saw go.").into()],
        "",
    );
    let session = super::kit::start_session(state.path(), project.path(), "poll a subagent");
    let dir = StateDir::at(state.path());
    let child = chock_testkit::wait_for(WITHIN, "the spawn's tool.call", || {
        sessions(state.path()).into_iter().find_map(|id| {
            events_now(&dir.log_path(&id)).iter().find_map(|e| {
                (e["type"] == "tool.call" && e["call_id"] == "b1")
                    .then(|| e["session"].as_str().map(str::to_owned))
                    .flatten()
            })
        })
    });
    parent_model.push(call_turn(
        "j1",
        "job_output",
        json!({"job": child, "wait_secs": 60}),
    ));
    parent_model.push(Turn::text("It saw go."));
    let out = session.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (parent, _) = parent_and_children(state.path());
    let events = log_values(&log(state.path(), &parent));
    let polled = result_of(&events, "j1")["output"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        polled.contains("ended done") && polled.contains("I saw go."),
        "{polled}"
    );
}
