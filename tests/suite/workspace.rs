//! Workspaces end to end through the `chock` binary: a session's checkout,
//! `chock workspace`, carrying work back, and carrying a session on with
//! `--continue` after its process was killed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use chock_log::event::{EndReason, Event, EventBody};
use chock_log::fold::Status;
use chock_log::{EventId, SessionId, StateDir, fold_log, read_after};
use chock_testkit::{FakeModel, Reply, TempProject, Turn, wait_for};
use serde_json::json;

use super::chock;
use super::kit::{assert_ended, call_turn, fake_model, sessions, write_x};

/// A state dir whose config names a fake model, and a git project.
struct World {
    fake: FakeModel,
    state: tempfile::TempDir,
    project: TempProject,
}

impl World {
    /// A world whose model answers `replies` in order.
    fn new(replies: impl IntoIterator<Item = Reply>) -> World {
        let state = tempfile::tempdir().unwrap();
        let fake = fake_model(state.path(), replies);
        World {
            fake,
            state,
            project: TempProject::git(),
        }
    }

    fn dir(&self) -> &Path {
        self.state.path()
    }

    /// `chock <args>` in this world's state dir.
    fn run(&self, args: &[&str]) -> Output {
        chock(self.dir()).args(args).output().unwrap()
    }

    /// `chock run <project> <message>`, asserted to succeed: the session
    /// it made (the one that was not in the state dir before).
    fn session(&self, message: &str) -> SessionId {
        let before = sessions(self.dir());
        ok(&self.run(&["run", self.project_path(), message]));
        let mut made: Vec<SessionId> = sessions(self.dir())
            .into_iter()
            .filter(|id| !before.contains(id))
            .collect();
        assert_eq!(made.len(), 1, "one new session: {made:?}");
        made.remove(0)
    }

    fn project_path(&self) -> &str {
        self.project.path().to_str().unwrap()
    }

    fn st(&self) -> StateDir {
        StateDir::at(self.dir())
    }
}

fn text(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout: {}\nstderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Asserts that `out` succeeded; its text.
fn ok(out: &Output) -> String {
    assert!(out.status.success(), "{}", text(out));
    text(out)
}

/// Asserts that `out` exited 1 and says `needle`; its text.
fn fails_saying(out: &Output, needle: &str) -> String {
    let t = text(out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains(needle), "{t}");
    t
}

/// Asserts that `out` says `needle`.
fn says(out: &Output, needle: &str) {
    assert!(text(out).contains(needle), "{}", text(out));
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

/// How many messages the person sent in `events`.
fn user_messages(events: &[Event]) -> usize {
    events
        .iter()
        .filter(|e| matches!(e.body, EventBody::UserMessage(_)))
        .count()
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
    let w = World::new([Turn::text("never").into()]);
    let plain = TempProject::new();
    fails_saying(
        &w.run(&["run", plain.path().to_str().unwrap(), "hi"]),
        "git init",
    );
    assert!(sessions(w.dir()).is_empty());
    assert!(w.fake.requests().is_empty());
}

#[test]
fn a_dirty_tree_needs_allow_dirty_which_copies_it_in() {
    let w = World::new([Turn::text("ok").into()]);
    w.project.write("draft.txt", "my draft\n");
    let p = w.project_path();
    fails_saying(&w.run(&["run", p, "hi"]), "--allow-dirty");
    assert!(sessions(w.dir()).is_empty());
    ok(&w.run(&["run", "--allow-dirty", p, "hi"]));
    let id = &sessions(w.dir())[0];
    let dir = w.st().workspace_dir(id);
    assert_eq!(
        std::fs::read_to_string(dir.join("draft.txt")).unwrap(),
        "my draft\n"
    );
    assert_eq!(w.project.read("draft.txt"), "my draft\n");
}

#[test]
fn the_work_is_listed_shown_diffed_and_applied() {
    let w = World::new([
        call_turn(
            "w1",
            "write_file",
            json!({"path": "notes.txt", "content": "from the agent\n"}),
        ),
        Turn::text("Wrote notes.txt.").into(),
    ]);
    let id = w.session("write notes");
    let sid = id.as_str();
    let log = w.st().log_path(&id);
    let dir = w.st().workspace_dir(&id);
    assert_eq!(workspace_dirs(&events(&log)), vec![dir.clone()]);
    assert!(!w.project.join("notes.txt").exists());
    // What the session left uncommitted was committed on its branch at its
    // end: nothing is left for a person to commit.
    let list = w.run(&["workspace", "list"]);
    says(&list, sid);
    says(&list, &format!("chock/{sid}"));
    says(
        &w.run(&["workspace", "show", sid]),
        &format!("chock: what session {sid} left uncommitted"),
    );
    says(&w.run(&["workspace", "diff", sid]), "+from the agent");

    let apply = w.run(&["workspace", "apply", "--yes", sid]);
    ok(&apply);
    says(&apply, "Fast-forward your branch main");
    assert_eq!(w.project.read("notes.txt"), "from the agent\n");
    let folded = fold_log(&log).unwrap();
    assert!(folded.state.workspace.unwrap().applied);
    assert_ended(&log, EndReason::Done);

    ok(&w.run(&["workspace", "discard", sid]));
    assert!(!dir.exists());
    // Merged into main, so the branch went with it.
    assert_eq!(w.project.run_git(&["branch", "--list", "chock/*"]), "");
}

#[test]
fn integrate_denied_parks_the_work_and_the_description_says_so() {
    let w = World::new([Turn::text("nothing to do").into()]);
    w.project.write_chock_zon(
        ".{ .apply = .{ .mode = .merge }, .policy = .{ .rules = .{ .{ .action = \"workspace.integrate\", .decision = .deny } } } }\n",
    );
    w.project.commit_all("policy");
    let id = w.session("hi");
    // Read once, at session start, and recorded.
    let recorded = events(&w.st().log_path(&id))
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
    let dir = w.st().workspace_dir(&id);
    std::fs::write(dir.join("a.txt"), "a\n").unwrap();
    commit_in(&dir, "a");
    let before = w.project.head();
    let apply = w.run(&["workspace", "apply", "--yes", id.as_str()]);
    ok(&apply);
    let parked = format!("refs/chock/parked/{}", id.as_str());
    says(
        &apply,
        &format!(
            "workspace.integrate is deny, so no branch of yours moves: park the session's 1 commit at {parked}"
        ),
    );
    assert_eq!(w.project.head(), before);
    assert_eq!(
        w.project
            .run_git(&["log", "-1", "--format=%s", &parked])
            .trim(),
        "a"
    );
}

#[test]
fn continue_after_kill_9_mid_turn_resumes_in_the_same_workspace() {
    let w = World::new([
        call_turn(
            "w1",
            "write_file",
            json!({"path": "one.txt", "content": "one\n"}),
        ),
        // The second model call streams slowly; the process dies in it.
        Turn::text(&"slowly ".repeat(200))
            .pieces(1)
            .delay(Duration::from_millis(20))
            .into(),
        Turn::text("Carried on.").into(),
    ]);
    let mut child = chock(w.dir())
        .args(["run", w.project_path(), "write one.txt"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    w.fake.wait_for_requests(2, Duration::from_secs(20));
    let id = wait_for(Duration::from_secs(10), "the session's log", || {
        sessions(w.dir()).pop()
    });
    let st = w.st();
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

    ok(&w.run(&["run", "--continue", id.as_str()]));
    let after = events(&log);
    let dirs = workspace_dirs(&after);
    assert_eq!(dirs, vec![st.workspace_dir(&id), st.workspace_dir(&id)]);
    let calls = after
        .iter()
        .filter(|e| matches!(&e.body, EventBody::ToolCall(c) if c.call_id == "w1"))
        .count();
    assert_eq!(calls, 1, "the completed call was not run again");
    assert_eq!(user_messages(&after), 1, "no message was added");
    // The crash is recorded before the new owner's first event.
    let crashed = after[before.len()..].first().unwrap();
    assert!(
        matches!(&crashed.body, EventBody::SessionEnd(e) if e.reason == EndReason::Crashed),
        "{crashed:?}"
    );
    let third = w.fake.requests()[2].json();
    let messages = third["messages"].as_array().unwrap();
    assert_eq!(messages.last().unwrap()["role"], "tool");
    assert_eq!(
        std::fs::read_to_string(st.workspace_dir(&id).join("one.txt")).unwrap(),
        "one\n"
    );
    assert_ended(&log, EndReason::Done);
}

#[test]
fn two_continues_racing_exactly_one_wins_and_the_other_is_told_who() {
    let w = World::new([
        Turn::text("first answer").into(),
        Turn::text(&"busy ".repeat(100))
            .pieces(1)
            .delay(Duration::from_millis(10))
            .into(),
        Turn::text("late").into(),
    ]);
    let id = w.session("hi");
    let spawn = || {
        chock(w.dir())
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
    let w = World::new([Turn::text("ok").into()]);
    let id = w.session("hi");
    let log = w.st().log_path(&id);
    let before = std::fs::read_to_string(&log).unwrap();
    fails_saying(
        &w.run(&["run", "--continue", id.as_str(), "--allow-dirty", "more"]),
        "agent's own edits",
    );
    assert_eq!(std::fs::read_to_string(&log).unwrap(), before);
}

#[test]
fn a_workspace_deleted_by_hand_is_reported_with_its_branch() {
    let w = World::new([Turn::text("ok").into()]);
    let id = w.session("hi");
    std::fs::remove_dir_all(w.st().workspace_dir(&id)).unwrap();
    let t = fails_saying(
        &w.run(&["run", "--continue", id.as_str(), "more"]),
        "is gone",
    );
    assert!(t.contains(&format!("chock/{}", id.as_str())), "{t}");
    says(&w.run(&["workspace", "show", id.as_str()]), "(missing)");
}

#[test]
fn adopt_takes_a_handed_over_session_and_refuses_one_that_was_not() {
    let w = World::new([
        Turn::text("first").into(),
        Turn::text("adopted and answering").into(),
    ]);
    let id = w.session("hi");
    let st = w.st();
    let log = st.log_path(&id);
    let before = std::fs::read_to_string(&log).unwrap();
    fails_saying(
        &w.run(&["run", "--adopt", id.as_str()]),
        "was not handed over",
    );
    assert_eq!(std::fs::read_to_string(&log).unwrap(), before);

    let mut writer = chock_log::LogWriter::open(&log).unwrap();
    writer
        .append(chock_log::event::SessionEnd {
            reason: EndReason::Handover,
            detail: "handed to the daemon".to_owned(),
        })
        .unwrap();
    drop(writer);
    ok(&w.run(&["run", "--adopt", id.as_str(), "and then?"]));
    let after = events(&log);
    assert_eq!(
        workspace_dirs(&after),
        vec![st.workspace_dir(&id), st.workspace_dir(&id)]
    );
    let second = w.fake.requests()[1].json();
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(messages[messages.len() - 2]["content"], "first");
    assert_eq!(messages[messages.len() - 1]["content"], "and then?");
}

/// Kept sessions that are bad input to a start: a torn log, a log that
/// cannot be read, and one another live process holds. The start goes on,
/// says each kept one that can be read, names the one that cannot, and
/// leaves every file as it was.
#[test]
fn a_torn_an_unreadable_and_an_owned_kept_session_do_not_stop_a_start_and_each_is_said() {
    let w = World::new([
        Reply::error(400, "overloaded"),
        Reply::error(400, "overloaded"),
        Reply::error(400, "overloaded"),
        Reply::error(400, "overloaded"),
        Turn::text("fine now").into(),
    ]);
    let p = w.project_path();
    for _ in 0..4 {
        assert_eq!(w.run(&["run", p, "hi"]).status.code(), Some(1));
    }
    let ids = sessions(w.dir());
    assert_eq!(ids.len(), 4, "{ids:?}");
    let st = w.st();
    let (good, torn, unreadable, owned) = (&ids[0], &ids[1], &ids[2], &ids[3]);
    // A line cut off mid-write at the end of one log.
    let mut log = std::fs::OpenOptions::new()
        .append(true)
        .open(st.log_path(torn))
        .unwrap();
    std::io::Write::write_all(&mut log, b"{\"id\":99,\"ty").unwrap();
    drop(log);
    let torn_bytes = std::fs::read(st.log_path(torn)).unwrap();
    // A log that cannot be read as a file.
    let kept_aside = st.session_dir(unreadable).join("log.jsonl.aside");
    std::fs::rename(st.log_path(unreadable), &kept_aside).unwrap();
    std::fs::create_dir(st.log_path(unreadable)).unwrap();
    // A log another live process holds (as a session running elsewhere).
    let _holder = chock_testkit::LiveLog::adopt(w.dir(), owned.as_str(), p);

    let said = ok(&w.run(&["run", p, "again"]));
    for kept in [good, torn] {
        assert!(
            said.contains(&format!(
                "session {} (ended: error) kept its workspace",
                kept.as_str()
            )),
            "{said}"
        );
    }
    assert!(
        said.contains(&format!("session {} cannot be read (", unreadable.as_str())),
        "{said}"
    );
    assert!(
        !said.contains(&format!("session {} (", owned.as_str())),
        "a session another process holds is running, not kept: {said}"
    );
    assert_eq!(std::fs::read(st.log_path(torn)).unwrap(), torn_bytes);
    assert!(kept_aside.is_file() && st.log_path(unreadable).is_dir());
}

#[test]
fn a_session_that_ended_in_error_keeps_its_workspace_and_the_next_run_says_where() {
    let w = World::new([
        Reply::error(400, "overloaded"),
        Turn::text("fine now").into(),
    ]);
    let p = w.project_path();
    let out = w.run(&["run", p, "hi"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let id = sessions(w.dir()).remove(0);
    let dir = w.st().workspace_dir(&id);
    assert!(dir.is_dir());
    let t = ok(&w.run(&["run", p, "again"]));
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
    let w = World::new([Turn::text("one").into(), Turn::text("two").into()]);
    let id = w.session("hi");
    let out = chock(w.dir())
        .args(["run", "--continue", "--", "next"])
        .current_dir(w.project.path())
        .output()
        .unwrap();
    ok(&out);
    assert_eq!(sessions(w.dir()), vec![id.clone()]);
    assert_eq!(user_messages(&events(&w.st().log_path(&id))), 2);
}

#[test]
fn apply_and_diff_of_a_workspace_deleted_by_hand_name_the_branch() {
    let w = World::new([Turn::text("ok").into()]);
    let id = w.session("hi");
    std::fs::remove_dir_all(w.st().workspace_dir(&id)).unwrap();
    let head = w.project.head();
    for verb in ["apply", "diff"] {
        let t = fails_saying(&w.run(&["workspace", verb, id.as_str()]), "is gone");
        assert!(
            t.contains(&format!("branch chock/{}", id.as_str())),
            "{verb}: {t}"
        );
    }
    assert_eq!(w.project.head(), head);
}

#[test]
fn the_checkout_is_recorded_before_the_model_answer_and_before_any_tool() {
    // The checkout is made while the first request is out; the log still
    // names it before anything the model asked for.
    let w = World::new([
        call_turn(
            "w1",
            "write_file",
            json!({"path": "sub/made.txt", "content": "made\n"}),
        ),
        Turn::text("done").into(),
    ]);
    let id = w.session("go");
    let st = w.st();
    let all = events(&st.log_path(&id));
    let at = |want: fn(&EventBody) -> bool| all.iter().position(|e| want(&e.body)).unwrap();
    let open = at(|b| matches!(b, EventBody::WorkspaceOpen(_)));
    let answer = at(|b| matches!(b, EventBody::AssistantMessage(_)));
    let call = at(|b| matches!(b, EventBody::ToolCall(_)));
    assert!(open < answer && answer < call, "{all:#?}");
    let EventBody::WorkspaceOpen(ws) = &all[open].body else {
        unreachable!()
    };
    assert_eq!(ws.commit, w.project.head());
    assert_eq!(
        std::fs::read_to_string(st.workspace_dir(&id).join("sub/made.txt")).unwrap(),
        "made\n"
    );
    assert!(!w.project.join("sub/made.txt").exists());
}

#[test]
fn a_taken_branch_ends_the_session_with_its_error_in_the_log_and_moves_nothing() {
    let w = World::new([write_x("w1").into()]);
    let project = &w.project;
    let id = SessionId::new();
    let branch = format!("chock/{}", id.as_str());
    project.run_git(&["branch", &branch]);
    let head = project.head();
    let out = w.run(&["run", "--session-id", id.as_str(), w.project_path(), "hi"]);
    let t = fails_saying(&out, &format!("the branch {branch} already exists"));
    assert!(t.contains("git branch -m"), "{t}");
    let st = w.st();
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

/// `chock workspace list --json` on the fixture sessions: one line per
/// workspace (the running fixture's; the ended one has none).
#[test]
fn workspace_list_json_of_the_fixture_sessions() {
    use super::session_logs::{FIXTURE_RUNNING, on_fixtures};
    let (state, list) = on_fixtures(&["workspace", "list", "--json"]);
    assert_eq!(list.lines().count(), 1, "{list}");
    let row: serde_json::Value = serde_json::from_str(&list).unwrap();
    assert_eq!(row["session"], FIXTURE_RUNNING);
    insta::assert_snapshot!(list);
    let empty = tempfile::tempdir().unwrap();
    let out = chock(empty.path())
        .args(["workspace", "list", "--json"])
        .output()
        .unwrap();
    assert_eq!(ok(&out), "exit Some(0)\nstdout: \nstderr: ");
    drop(state);
}

/// A `git` first on PATH that, while `hold` exists, writes its pid to
/// `pid` and waits three seconds before a `worktree add` (then runs git).
fn slow_worktree_git(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    use std::os::unix::fs::PermissionsExt as _;
    let bin = dir.join("slow-git");
    std::fs::create_dir_all(&bin).unwrap();
    let hold = dir.join("hold");
    let pid = dir.join("git.pid");
    let script = format!(
        "#!/bin/sh\nif [ \"$1\" = worktree ] && [ \"$2\" = add ] && [ -e {hold} ]; then echo $$ > {pid}; sleep 3; fi\nPATH=\"$REAL_PATH\" exec git \"$@\"\n",
        hold = hold.display(),
        pid = pid.display()
    );
    std::fs::write(bin.join("git"), script).unwrap();
    std::fs::set_permissions(bin.join("git"), std::fs::Permissions::from_mode(0o755)).unwrap();
    (bin, hold, pid)
}

fn branch_exists(repo: &Path, branch: &str) -> bool {
    Command::new("git")
        .args([
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("refs/heads/{branch}"),
        ])
        .current_dir(repo)
        .output()
        .unwrap()
        .status
        .success()
}

#[test]
fn a_kill_while_the_checkout_is_made_takes_git_along_and_the_session_is_carried_on_or_discarded() {
    // The first answer goes to the killed run (its first model request is
    // sent while the checkout is made), the second to the carried-on one.
    let w = World::new([
        Turn::text("Unheard.").into(),
        Turn::text("Carried on.").into(),
    ]);
    let (bin, hold, pid_file) = slow_worktree_git(w.dir());
    std::fs::write(&hold, "").unwrap();
    let real_path = std::env::var("PATH").unwrap();
    let mut child = chock(w.dir())
        .args(["run", w.project_path(), "write one.txt"])
        .env("PATH", format!("{}:{real_path}", bin.display()))
        .env("REAL_PATH", &real_path)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let git_pid: i32 = wait_for(Duration::from_secs(20), "git worktree add", || {
        std::fs::read_to_string(&pid_file).ok()?.trim().parse().ok()
    });
    let id = wait_for(Duration::from_secs(10), "the session's log", || {
        sessions(w.dir()).pop()
    });
    let st = w.st();
    let log = st.log_path(&id);
    wait_for(Duration::from_secs(10), "session.open", || {
        std::fs::read_to_string(&log)
            .ok()?
            .contains("session.open")
            .then_some(())
    });
    child.kill().unwrap();
    child.wait().unwrap();
    // git goes with the session: it never makes the checkout.
    wait_for(
        Duration::from_secs(5),
        "git to die with the session",
        || {
            let stat = std::fs::read_to_string(format!("/proc/{git_pid}/stat")).unwrap_or_default();
            // Gone, or a zombie nobody has reaped yet.
            let state = stat
                .rsplit(')')
                .next()
                .and_then(|rest| rest.split_whitespace().next());
            matches!(state, None | Some("Z" | "X")).then_some(())
        },
    );
    std::thread::sleep(Duration::from_secs(4));
    let dir = st.workspace_dir(&id);
    let branch = format!("chock/{}", id.as_str());
    assert!(!dir.exists(), "no checkout was made after the kill");
    assert!(!branch_exists(w.project.path(), &branch));
    std::fs::remove_file(&hold).unwrap();

    // What a checkout left half made (here made by hand) is seen and
    // removed by `chock workspace`.
    let half_make = || {
        let out = Command::new("git")
            .args(["worktree", "add", "--quiet", "-b", &branch])
            .arg(&dir)
            .current_dir(w.project.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    };
    half_make();
    let shown = ok(&w.run(&["workspace", "show", id.as_str()]));
    assert!(shown.contains("half made"), "{shown}");
    assert!(
        shown.contains(&format!(
            "`chock run --continue {}` makes it again",
            id.as_str()
        )),
        "{shown}"
    );
    let listed = ok(&w.run(&["workspace", "list"]));
    assert!(listed.contains(id.as_str()), "{listed}");
    ok(&w.run(&["workspace", "discard", id.as_str()]));
    assert!(!dir.exists());
    assert!(!branch_exists(w.project.path(), &branch));

    // Carried on: the checkout is made again and the session goes on.
    half_make();
    std::fs::write(dir.join("stray.txt"), "left by git\n").unwrap();
    ok(&w.run(&["run", "--continue", id.as_str()]));
    let after = events(&log);
    assert_eq!(workspace_dirs(&after), vec![dir.clone()]);
    assert!(
        after.iter().any(
            |e| matches!(&e.body, EventBody::SessionEnd(end) if end.reason == EndReason::Crashed)
        ),
        "the killed owner's ending is recorded"
    );
    assert!(
        !dir.join("stray.txt").exists(),
        "the half-made checkout was made anew"
    );
    assert!(branch_exists(w.project.path(), &branch));
    assert_ended(&log, EndReason::Done);
    for name in ["approve.sock", "handover.sock"] {
        assert!(!st.session_dir(&id).join(name).exists(), "{name} is gone");
    }
}

#[test]
fn prune_removes_applied_and_workless_workspaces_and_keeps_work_unless_asked() {
    let w = World::new([
        call_turn(
            "a1",
            "write_file",
            json!({"path": "a.txt", "content": "a\n"}),
        ),
        Turn::text("wrote a").into(),
        call_turn(
            "b1",
            "write_file",
            json!({"path": "b.txt", "content": "b\n"}),
        ),
        Turn::text("wrote b").into(),
        Turn::text("nothing to do").into(),
        Turn::text("still here").into(),
    ]);
    let applied = w.session("write a");
    ok(&w.run(&["workspace", "apply", "--yes", applied.as_str()]));
    let with_work = w.session("write b");
    let workless = w.session("look around");
    let running = w.session("keep going");
    // A process holds the last one's log, as a running session does.
    let _held = chock_log::LogWriter::open(w.st().log_path(&running)).unwrap();
    let dir = |id: &SessionId| w.st().workspace_dir(id);

    // The default keeps a week: only the applied one goes, and its merged
    // branch with it.
    let out = ok(&w.run(&["workspace", "prune"]));
    assert!(
        out.contains(&format!("({}): applied", applied.as_str())),
        "{out}\n{}",
        text(&w.run(&["workspace", "list", "--json"]))
    );
    assert!(!dir(&applied).exists());
    assert!(dir(&with_work).is_dir() && dir(&workless).is_dir() && dir(&running).is_dir());
    let branches = w.project.run_git(&["branch", "--list", "chock/*"]);
    assert!(!branches.contains(applied.as_str()), "{branches}");

    // Older than nothing: the workless one goes; work is kept unless asked.
    let dry = ok(&w.run(&["workspace", "prune", "--older-than", "0", "--dry-run"]));
    assert!(dry.contains("would remove"), "{dry}");
    assert!(dir(&workless).is_dir(), "a dry run removes nothing");
    let out = ok(&w.run(&["workspace", "prune", "--older-than", "0"]));
    assert!(
        out.contains(&format!("({}): no work left", workless.as_str())),
        "{out}"
    );
    assert!(!dir(&workless).exists());
    assert!(
        dir(&with_work).is_dir(),
        "its work is on no branch of yours: {out}"
    );

    // Asked: the checkout goes, the unmerged branch stays with the work.
    let out = ok(&w.run(&["workspace", "prune", "--older-than", "0", "--unapplied"]));
    assert!(
        out.contains(&format!("kept branch chock/{}", with_work.as_str())),
        "{out}"
    );
    assert!(!dir(&with_work).exists());
    let kept = w
        .project
        .run_git(&["show", &format!("chock/{}:b.txt", with_work.as_str())]);
    assert_eq!(kept, "b\n");
    assert!(dir(&running).is_dir(), "a running session is never pruned");
}

#[test]
fn a_state_dir_without_marks_still_names_a_kept_workspace_at_the_next_start() {
    let w = World::new([
        Reply::error(400, "bad request"),
        Turn::text("fine now").into(),
    ]);
    let p = w.project_path();
    assert_eq!(w.run(&["run", p, "hi"]).status.code(), Some(1));
    let id = sessions(w.dir()).remove(0);
    // As a state directory from before the marks existed.
    std::fs::remove_dir_all(w.dir().join("index")).unwrap();
    let t = ok(&w.run(&["run", p, "again"]));
    assert!(
        t.contains(&format!(
            "session {} (ended: error) kept its workspace",
            id.as_str()
        )),
        "{t}"
    );
}

#[test]
fn the_daemon_prunes_an_applied_workspace_by_itself() {
    let w = World::new([
        call_turn(
            "a1",
            "write_file",
            json!({"path": "a.txt", "content": "a\n"}),
        ),
        Turn::text("wrote a").into(),
    ]);
    let id = w.session("write a");
    ok(&w.run(&["workspace", "apply", "--yes", id.as_str()]));
    let dir = w.st().workspace_dir(&id);
    assert!(dir.is_dir());
    let mut daemon = chock(w.dir())
        .args(["daemon", "--prune-every", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(
        Duration::from_secs(20),
        "the daemon's prune to remove the applied workspace",
        || (!dir.exists()).then_some(()),
    );
    let _ = daemon.kill();
    let _ = daemon.wait();
}
