//! Workspaces end to end through the `chock` binary: a session's checkout,
//! `chock workspace`, carrying work back, and carrying a session on with
//! `--continue` after its process was killed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use chock_log::event::{EndReason, Event, EventBody};
use chock_log::fold::Status;
use chock_log::{EventId, StateDir, fold_log, read_after};
use chock_testkit::{FakeModel, TempProject, Turn, Wire, wait_for};
use serde_json::json;

use super::chock;
use super::kit::sessions;
use super::kit::write_x;

fn setup(fake: &FakeModel) -> (tempfile::TempDir, TempProject) {
    let state = tempfile::tempdir().unwrap();
    let dir = state.path().join("config").join("chock");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.zon"), fake.config_zon(Wire::OpenAi, "m")).unwrap();
    (state, TempProject::git())
}

fn run(state: &Path, args: &[&str]) -> Output {
    chock(state).args(args).output().unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout: {}\nstderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn events(log: &Path) -> Vec<Event> {
    read_after(log, EventId::NONE)
        .unwrap()
        .events
        .iter()
        .map(|raw| raw.parse().unwrap())
        .collect()
}

fn workspace_dirs(events: &[Event]) -> Vec<PathBuf> {
    events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::WorkspaceOpen(w) => Some(w.dir.clone()),
            _ => None,
        })
        .collect()
}

fn commit_in(dir: &Path, message: &str) {
    for args in [
        vec!["add", "-A"],
        vec![
            "-c",
            "user.name=Agent",
            "-c",
            "user.email=agent@chock.invalid",
            "commit",
            "-q",
            "-m",
            message,
        ],
    ] {
        let ok = Command::new("git")
            .args(&args)
            .current_dir(dir)
            .status()
            .unwrap();
        assert!(ok.success());
    }
}

#[test]
fn a_project_that_is_not_a_repository_is_refused_before_any_session() {
    let fake = FakeModel::with([Turn::text("never").into()]);
    let (state, _) = setup(&fake);
    let plain = TempProject::new();
    let out = run(state.path(), &["run", plain.path().to_str().unwrap(), "hi"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("git init"), "{}", text(&out));
    assert!(sessions(state.path()).is_empty());
    assert!(fake.requests().is_empty());
}

#[test]
fn a_dirty_tree_needs_allow_dirty_which_copies_it_in() {
    let fake = FakeModel::with([Turn::text("ok").into()]);
    let (state, project) = setup(&fake);
    project.write("draft.txt", "my draft\n");
    let p = project.path().to_str().unwrap();
    let out = run(state.path(), &["run", p, "hi"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("--allow-dirty"), "{}", text(&out));
    assert!(sessions(state.path()).is_empty());
    let out = run(state.path(), &["run", "--allow-dirty", p, "hi"]);
    assert!(out.status.success(), "{}", text(&out));
    let id = &sessions(state.path())[0];
    let dir = StateDir::at(state.path()).workspace_dir(id);
    assert_eq!(
        std::fs::read_to_string(dir.join("draft.txt")).unwrap(),
        "my draft\n"
    );
    assert_eq!(project.read("draft.txt"), "my draft\n");
}

#[test]
fn the_work_is_listed_shown_diffed_and_applied() {
    let fake = FakeModel::with([
        Turn::text("")
            .call(
                "w1",
                "write_file",
                &json!({"path": "notes.txt", "content": "from the agent\n"}),
            )
            .into(),
        Turn::text("Wrote notes.txt.").into(),
    ]);
    let (state, project) = setup(&fake);
    let out = run(
        state.path(),
        &["run", project.path().to_str().unwrap(), "write notes"],
    );
    assert!(out.status.success(), "{}", text(&out));
    let id = sessions(state.path()).remove(0);
    let sid = id.as_str();
    let st = StateDir::at(state.path());
    let log = st.log_path(&id);
    let dir = st.workspace_dir(&id);
    assert_eq!(workspace_dirs(&events(&log)), vec![dir.clone()]);
    assert!(!project.join("notes.txt").exists());
    commit_in(&dir, "notes from the agent");

    let list = run(state.path(), &["workspace", "list"]);
    assert!(text(&list).contains(sid), "{}", text(&list));
    assert!(
        text(&list).contains(&format!("chock/{sid}")),
        "{}",
        text(&list)
    );
    let show = run(state.path(), &["workspace", "show", sid]);
    assert!(
        text(&show).contains("notes from the agent"),
        "{}",
        text(&show)
    );
    let diff = run(state.path(), &["workspace", "diff", sid]);
    assert!(text(&diff).contains("+from the agent"), "{}", text(&diff));

    let apply = run(state.path(), &["workspace", "apply", "--yes", sid]);
    assert!(apply.status.success(), "{}", text(&apply));
    assert!(
        text(&apply).contains("Fast-forward your branch main"),
        "{}",
        text(&apply)
    );
    assert_eq!(project.read("notes.txt"), "from the agent\n");
    let folded = fold_log(&log).unwrap();
    assert!(folded.state.workspace.unwrap().applied);
    assert!(matches!(
        folded.state.status,
        Status::Ended {
            reason: EndReason::Done,
            ..
        }
    ));

    let discard = run(state.path(), &["workspace", "discard", sid]);
    assert!(discard.status.success(), "{}", text(&discard));
    assert!(!dir.exists());
    // Merged into main, so the branch went with it.
    assert_eq!(project.run_git(&["branch", "--list", "chock/*"]), "");
}

#[test]
fn integrate_denied_parks_the_work_and_the_description_says_so() {
    let fake = FakeModel::with([Turn::text("nothing to do").into()]);
    let (state, project) = setup(&fake);
    project.write_chock_zon(
        ".{ .apply = .{ .mode = .merge }, .policy = .{ .rules = .{ .{ .action = \"workspace.integrate\", .decision = .deny } } } }\n",
    );
    project.commit_all("policy");
    let out = run(
        state.path(),
        &["run", project.path().to_str().unwrap(), "hi"],
    );
    assert!(out.status.success(), "{}", text(&out));
    let id = sessions(state.path()).remove(0);
    // Read once, at session start, and recorded.
    let recorded = events(&StateDir::at(state.path()).log_path(&id))
        .into_iter()
        .find_map(|e| match e.body {
            EventBody::Decision(d) if d.action == "workspace.integrate" => Some(d),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        (recorded.decision.as_str(), recorded.layer.as_str()),
        ("deny", "project")
    );
    let dir = StateDir::at(state.path()).workspace_dir(&id);
    std::fs::write(dir.join("a.txt"), "a\n").unwrap();
    commit_in(&dir, "a");
    let before = project.head();
    let apply = run(state.path(), &["workspace", "apply", "--yes", id.as_str()]);
    assert!(apply.status.success(), "{}", text(&apply));
    let parked = format!("refs/chock/parked/{}", id.as_str());
    assert!(
        text(&apply).contains(&format!("workspace.integrate is deny, so no branch of yours moves: park the session's 1 commit at {parked}")),
        "{}",
        text(&apply)
    );
    assert_eq!(project.head(), before);
    assert_eq!(
        project
            .run_git(&["log", "-1", "--format=%s", &parked])
            .trim(),
        "a"
    );
}

#[test]
fn continue_after_kill_9_mid_turn_resumes_in_the_same_workspace() {
    let fake = FakeModel::with([
        Turn::text("")
            .call(
                "w1",
                "write_file",
                &json!({"path": "one.txt", "content": "one\n"}),
            )
            .into(),
        // The second model call streams slowly; the process dies in it.
        Turn::text(&"slowly ".repeat(200))
            .pieces(1)
            .delay(Duration::from_millis(20))
            .into(),
        Turn::text("Carried on.").into(),
    ]);
    let (state, project) = setup(&fake);
    let mut child = chock(state.path())
        .args(["run", project.path().to_str().unwrap(), "write one.txt"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    fake.wait_for_requests(2, Duration::from_secs(20));
    let id = wait_for(Duration::from_secs(10), "the session's log", || {
        sessions(state.path()).pop()
    });
    let st = StateDir::at(state.path());
    let log = st.log_path(&id);
    wait_for(Duration::from_secs(10), "the first result", || {
        std::fs::read_to_string(&log)
            .unwrap()
            .contains("\"tool.result\"")
            .then_some(())
    });
    child.kill().unwrap();
    child.wait().unwrap();
    let before = events(&log);

    let out = run(state.path(), &["run", "--continue", id.as_str()]);
    assert!(out.status.success(), "{}", text(&out));
    let after = events(&log);
    let dirs = workspace_dirs(&after);
    assert_eq!(dirs, vec![st.workspace_dir(&id), st.workspace_dir(&id)]);
    let calls = after
        .iter()
        .filter(|e| matches!(&e.body, EventBody::ToolCall(c) if c.call_id == "w1"))
        .count();
    assert_eq!(calls, 1, "the completed call was not run again");
    let users = after
        .iter()
        .filter(|e| matches!(e.body, EventBody::UserMessage(_)))
        .count();
    assert_eq!(users, 1, "no message was added");
    // The crash is recorded before the new owner's first event.
    let crashed = after[before.len()..].first().unwrap();
    assert!(
        matches!(&crashed.body, EventBody::SessionEnd(e) if e.reason == EndReason::Crashed),
        "{crashed:?}"
    );
    let third = fake.requests()[2].json();
    let messages = third["messages"].as_array().unwrap();
    assert_eq!(messages.last().unwrap()["role"], "tool");
    assert_eq!(
        std::fs::read_to_string(st.workspace_dir(&id).join("one.txt")).unwrap(),
        "one\n"
    );
    assert!(matches!(
        fold_log(&log).unwrap().state.status,
        Status::Ended {
            reason: EndReason::Done,
            ..
        }
    ));
}

#[test]
fn two_continues_racing_exactly_one_wins_and_the_other_is_told_who() {
    let fake = FakeModel::with([
        Turn::text("first answer").into(),
        Turn::text(&"busy ".repeat(100))
            .pieces(1)
            .delay(Duration::from_millis(10))
            .into(),
        Turn::text("late").into(),
    ]);
    let (state, project) = setup(&fake);
    let out = run(
        state.path(),
        &["run", project.path().to_str().unwrap(), "hi"],
    );
    assert!(out.status.success(), "{}", text(&out));
    let id = sessions(state.path()).remove(0);
    let spawn = || {
        chock(state.path())
            .args(["run", "--continue", id.as_str(), "more"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    let (pid_a, pid_b) = (a.id(), b.id());
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    let outcomes = [(a, pid_b), (b, pid_a)];
    let winners = outcomes.iter().filter(|(o, _)| o.status.success()).count();
    assert_eq!(winners, 1, "{outcomes:?}");
    let (loser, winner_pid) = outcomes.iter().find(|(o, _)| !o.status.success()).unwrap();
    let stderr = String::from_utf8_lossy(&loser.stderr);
    assert!(
        stderr.contains(&format!("is owned by process {winner_pid}")),
        "{stderr}"
    );
}

#[test]
fn allow_dirty_is_refused_on_a_continued_session() {
    let fake = FakeModel::with([Turn::text("ok").into()]);
    let (state, project) = setup(&fake);
    let out = run(
        state.path(),
        &["run", project.path().to_str().unwrap(), "hi"],
    );
    assert!(out.status.success(), "{}", text(&out));
    let id = sessions(state.path()).remove(0);
    let log = StateDir::at(state.path()).log_path(&id);
    let before = std::fs::read_to_string(&log).unwrap();
    let out = run(
        state.path(),
        &["run", "--continue", id.as_str(), "--allow-dirty", "more"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("agent's own edits"), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(&log).unwrap(), before);
}

#[test]
fn a_workspace_deleted_by_hand_is_reported_with_its_branch() {
    let fake = FakeModel::with([Turn::text("ok").into()]);
    let (state, project) = setup(&fake);
    let out = run(
        state.path(),
        &["run", project.path().to_str().unwrap(), "hi"],
    );
    assert!(out.status.success(), "{}", text(&out));
    let id = sessions(state.path()).remove(0);
    let dir = StateDir::at(state.path()).workspace_dir(&id);
    std::fs::remove_dir_all(&dir).unwrap();
    let out = run(state.path(), &["run", "--continue", id.as_str(), "more"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let t = text(&out);
    assert!(t.contains("is gone"), "{t}");
    assert!(t.contains(&format!("chock/{}", id.as_str())), "{t}");
    let show = run(state.path(), &["workspace", "show", id.as_str()]);
    assert!(text(&show).contains("(missing)"), "{}", text(&show));
}

#[test]
fn adopt_takes_a_handed_over_session_and_refuses_one_that_was_not() {
    let fake = FakeModel::with([
        Turn::text("first").into(),
        Turn::text("adopted and answering").into(),
    ]);
    let (state, project) = setup(&fake);
    let out = run(
        state.path(),
        &["run", project.path().to_str().unwrap(), "hi"],
    );
    assert!(out.status.success(), "{}", text(&out));
    let id = sessions(state.path()).remove(0);
    let st = StateDir::at(state.path());
    let log = st.log_path(&id);
    let before = std::fs::read_to_string(&log).unwrap();
    let out = run(state.path(), &["run", "--adopt", id.as_str()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("was not handed over"), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(&log).unwrap(), before);

    let mut writer = chock_log::LogWriter::open(&log).unwrap();
    writer
        .append(chock_log::event::SessionEnd {
            reason: EndReason::Handover,
            detail: "handed to the daemon".to_owned(),
        })
        .unwrap();
    drop(writer);
    let out = run(state.path(), &["run", "--adopt", id.as_str(), "and then?"]);
    assert!(out.status.success(), "{}", text(&out));
    let after = events(&log);
    assert_eq!(
        workspace_dirs(&after),
        vec![st.workspace_dir(&id), st.workspace_dir(&id)]
    );
    let second = fake.requests()[1].json();
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(messages[messages.len() - 2]["content"], "first");
    assert_eq!(messages[messages.len() - 1]["content"], "and then?");
}

#[test]
fn a_session_that_ended_in_error_keeps_its_workspace_and_the_next_run_says_where() {
    let fake = FakeModel::with([
        chock_testkit::Reply::error(500, "overloaded"),
        Turn::text("fine now").into(),
    ]);
    let (state, project) = setup(&fake);
    let p = project.path().to_str().unwrap();
    let out = run(state.path(), &["run", p, "hi"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let id = sessions(state.path()).remove(0);
    let dir = StateDir::at(state.path()).workspace_dir(&id);
    assert!(dir.is_dir());
    let out = run(state.path(), &["run", p, "again"]);
    assert!(out.status.success(), "{}", text(&out));
    let t = text(&out);
    assert!(
        t.contains(&format!(
            "session {} (ended: error) kept its workspace at {}",
            id.as_str(),
            dir.display()
        )),
        "{t}"
    );
    assert!(
        t.contains(&format!("chock run --continue {}", id.as_str())),
        "{t}"
    );
}

#[test]
fn continue_without_an_id_takes_the_newest_session_of_the_project_here() {
    let fake = FakeModel::with([Turn::text("one").into(), Turn::text("two").into()]);
    let (state, project) = setup(&fake);
    let out = run(
        state.path(),
        &["run", project.path().to_str().unwrap(), "hi"],
    );
    assert!(out.status.success(), "{}", text(&out));
    let id = sessions(state.path()).remove(0);
    let out = chock(state.path())
        .args(["run", "--continue", "--", "next"])
        .current_dir(project.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(sessions(state.path()), vec![id.clone()]);
    let log = StateDir::at(state.path()).log_path(&id);
    let users = events(&log)
        .into_iter()
        .filter(|e| matches!(e.body, EventBody::UserMessage(_)))
        .count();
    assert_eq!(users, 2);
}

#[test]
fn apply_and_diff_of_a_workspace_deleted_by_hand_name_the_branch() {
    let fake = FakeModel::with([Turn::text("ok").into()]);
    let (state, project) = setup(&fake);
    let out = run(
        state.path(),
        &["run", project.path().to_str().unwrap(), "hi"],
    );
    assert!(out.status.success(), "{}", text(&out));
    let id = sessions(state.path()).remove(0);
    std::fs::remove_dir_all(StateDir::at(state.path()).workspace_dir(&id)).unwrap();
    let head = project.head();
    for verb in ["apply", "diff"] {
        let out = run(state.path(), &["workspace", verb, id.as_str()]);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        let t = text(&out);
        assert!(t.contains("is gone"), "{verb}: {t}");
        assert!(t.contains(&format!("branch chock/{}", id.as_str())), "{t}");
    }
    assert_eq!(project.head(), head);
}

#[test]
fn the_checkout_is_recorded_before_the_model_answer_and_before_any_tool() {
    // The checkout is made while the first request is out; the log still
    // names it before anything the model asked for.
    let fake = FakeModel::with([
        Turn::text("")
            .call(
                "w1",
                "write_file",
                &json!({"path": "sub/made.txt", "content": "made\n"}),
            )
            .into(),
        Turn::text("done").into(),
    ]);
    let (state, project) = setup(&fake);
    let out = run(
        state.path(),
        &["run", project.path().to_str().unwrap(), "go"],
    );
    assert!(out.status.success(), "{}", text(&out));
    let id = sessions(state.path()).remove(0);
    let st = StateDir::at(state.path());
    let all = events(&st.log_path(&id));
    let at = |want: fn(&EventBody) -> bool| all.iter().position(|e| want(&e.body)).unwrap();
    let open = at(|b| matches!(b, EventBody::WorkspaceOpen(_)));
    let answer = at(|b| matches!(b, EventBody::AssistantMessage(_)));
    let call = at(|b| matches!(b, EventBody::ToolCall(_)));
    assert!(open < answer && answer < call, "{all:#?}");
    let EventBody::WorkspaceOpen(w) = &all[open].body else {
        unreachable!()
    };
    assert_eq!(w.commit, project.head());
    assert_eq!(
        std::fs::read_to_string(st.workspace_dir(&id).join("sub/made.txt")).unwrap(),
        "made\n"
    );
    assert!(!project.join("sub/made.txt").exists());
}

#[test]
fn a_taken_branch_ends_the_session_with_its_error_in_the_log_and_moves_nothing() {
    let fake = FakeModel::with([write_x("w1").into()]);
    let (state, project) = setup(&fake);
    let id = chock_log::SessionId::new();
    let branch = format!("chock/{}", id.as_str());
    project.run_git(&["branch", &branch]);
    let head = project.head();
    let p = project.path().to_str().unwrap();
    let out = run(state.path(), &["run", "--session-id", id.as_str(), p, "hi"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let t = text(&out);
    assert!(
        t.contains(&format!("the branch {branch} already exists")),
        "{t}"
    );
    assert!(t.contains("git branch -m"), "{t}");
    let st = StateDir::at(state.path());
    let all = events(&st.log_path(&id));
    assert!(workspace_dirs(&all).is_empty(), "{all:#?}");
    // The model's answer asked for a tool: nothing of it was recorded or run.
    assert!(
        !all.iter().any(|e| matches!(
            e.body,
            EventBody::ToolCall(_) | EventBody::AssistantMessage(_)
        )),
        "{all:#?}"
    );
    let Some(EventBody::SessionEnd(end)) = all.last().map(|e| &e.body) else {
        panic!("no ending: {all:#?}");
    };
    assert_eq!(end.reason, EndReason::Error);
    assert!(end.detail.contains("already exists"), "{}", end.detail);
    assert!(
        matches!(
            fold_log(&st.log_path(&id)).unwrap().state.status,
            Status::Ended { .. }
        ),
        "{all:#?}"
    );
    assert!(!st.workspace_dir(&id).exists());
    assert!(!project.join("x.txt").exists());
    assert_eq!(project.run_git(&["rev-parse", &branch]).trim(), head);
    assert_eq!(project.head(), head);
    assert_eq!(project.run_git(&["status", "--porcelain"]).trim(), "");
}
