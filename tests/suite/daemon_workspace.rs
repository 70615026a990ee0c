//! The daemon's `diff`, `apply`, `discard` and `rows` on real sessions:
//! `chock run` with the scripted model makes a session with a workspace in
//! a real git repository, and a real `chock daemon` shows, applies and
//! discards it as `chock workspace` does.

use std::process::Output;
use std::time::{Duration, Instant};

use chock_control::{Client, ClientError, DiffFile, RowLine};
use chock_log::{SessionId, StateDir};
use chock_testkit::{Reply, TempProject, Turn};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::chock;
use super::kit::{Running, call_turn, fake_model, sessions};

/// A state directory with a scripted model, a git project, and a daemon.
struct World {
    state: tempfile::TempDir,
    project: TempProject,
    daemon: Running,
    _fake: chock_testkit::FakeModel,
}

impl World {
    fn new(replies: impl IntoIterator<Item = Reply>) -> World {
        World::with_zon(replies, None)
    }

    /// A world whose project commits `zon` as its chock.zon first.
    fn with_zon(replies: impl IntoIterator<Item = Reply>, zon: Option<&str>) -> World {
        let state = tempfile::tempdir().unwrap();
        let fake = fake_model(state.path(), replies);
        let project = TempProject::git();
        if let Some(zon) = zon {
            project.write_chock_zon(zon);
            project.commit_all("policy");
        }
        let mut command = chock(state.path());
        command.arg("daemon");
        let daemon = Running::spawn(command);
        World {
            state,
            project,
            daemon,
            _fake: fake,
        }
    }

    fn client(&mut self) -> Client {
        Client::new(self.daemon.address()).with_timeout(Duration::from_secs(60))
    }

    fn run(&self, args: &[&str]) -> Output {
        chock(self.state.path()).args(args).output().unwrap()
    }

    /// `chock run` in the project, asserted to succeed: its session.
    fn session(&self, message: &str) -> SessionId {
        let before = sessions(self.state.path());
        let out = self.run(&["run", self.project.path().to_str().unwrap(), message]);
        assert!(out.status.success(), "{}", stderr(&out));
        let made: Vec<_> = sessions(self.state.path())
            .into_iter()
            .filter(|id| !before.contains(id))
            .collect();
        assert_eq!(made.len(), 1, "{made:?}");
        made[0].clone()
    }

    fn workspace_dir(&self, id: &SessionId) -> std::path::PathBuf {
        StateDir::at(self.state.path()).workspace_dir(id)
    }
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn refusal(err: ClientError) -> String {
    match err {
        ClientError::Daemon { message, .. } => message,
        other => panic!("not the daemon's refusal: {other}"),
    }
}

fn writes(path: &str, content: &str) -> Vec<Reply> {
    vec![
        call_turn(
            "w1",
            "write_file",
            json!({"path": path, "content": content}),
        ),
        Turn::text("Done.").into(),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn the_daemon_diffs_applies_and_discards_as_chock_workspace_does() {
    let mut w = World::new(writes("notes.txt", "from the agent\n"));
    let id = w.session("write notes");
    let sid = id.as_str();
    let c = w.client();
    let p = w.project.path().to_owned();

    let diff = c.diff(&p, sid, 1 << 20).await.unwrap();
    let cli = w.run(&["workspace", "diff", sid]);
    assert_eq!(diff.diff, String::from_utf8_lossy(&cli.stdout));
    assert!(diff.diff.contains("+from the agent"), "{}", diff.diff);
    assert_eq!(diff.bytes, diff.diff.len() as u64);
    assert!(!diff.truncated);
    assert_eq!(
        diff.files,
        [DiffFile {
            path: "notes.txt".to_owned(),
            added: 1,
            removed: 0
        }]
    );
    assert!(
        diff.description
            .starts_with("Fast-forward your branch main in "),
        "{}",
        diff.description
    );

    let applied = c.apply(&p, sid).await.unwrap();
    assert!(
        applied.starts_with(&format!("applied session {sid} to ")),
        "{applied}"
    );
    assert_eq!(w.project.read("notes.txt"), "from the agent\n");

    let dir = w.workspace_dir(&id);
    assert!(dir.exists());
    let discarded = c.discard(&p, sid).await.unwrap();
    assert_eq!(
        discarded,
        format!("removed the workspace {}", dir.display())
    );
    assert!(!dir.exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_diff_over_the_limit_is_cut_on_a_line_and_says_its_full_size() {
    let big: String = (0..2000).map(|n| format!("line {n}\n")).collect();
    let mut w = World::new(writes("big.txt", &big));
    let id = w.session("write a lot");
    let c = w.client();
    let p = w.project.path().to_owned();
    let whole = c.diff(&p, id.as_str(), 1 << 20).await.unwrap();
    assert!(!whole.truncated);
    let cut = c.diff(&p, id.as_str(), 1000).await.unwrap();
    assert!(cut.truncated);
    assert_eq!(cut.bytes, whole.bytes);
    assert!(
        cut.diff.len() <= 1000 && cut.diff.len() > 900,
        "{}",
        cut.diff.len()
    );
    assert!(cut.diff.ends_with('\n'));
    assert!(whole.diff.starts_with(&cut.diff));
    assert_eq!(cut.files, whole.files, "the files are the whole diff's");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_apply_the_policy_denies_is_refused_naming_the_rule() {
    let zon =
        ".{ .policy = .{ .rules = .{ .{ .action = \"workspace.apply\", .decision = .deny } } } }\n";
    let mut w = World::with_zon(writes("notes.txt", "x\n"), Some(zon));
    let id = w.session("write notes");
    let c = w.client();
    let p = w.project.path().to_owned();
    let head = w.project.head();
    let message = refusal(c.apply(&p, id.as_str()).await.unwrap_err());
    assert!(
        message.starts_with("workspace.apply is refused by the policy: "),
        "{message}"
    );
    assert!(message.contains("workspace.apply"), "{message}");
    assert!(message.ends_with(" nothing was applied"), "{message}");
    assert_eq!(w.project.head(), head);
    // The diff says what an apply would do: be refused.
    let diff = c.diff(&p, id.as_str(), 1 << 20).await.unwrap();
    assert!(
        diff.description
            .starts_with("workspace.apply is refused by the policy: "),
        "{}",
        diff.description
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_with_nothing_to_apply_is_refused() {
    let mut w = World::new([Turn::text("nothing to do").into()]);
    let id = w.session("hi");
    let c = w.client();
    let p = w.project.path().to_owned();
    let message = refusal(c.apply(&p, id.as_str()).await.unwrap_err());
    assert_eq!(
        message,
        format!(
            "session {0} made no commits on chock/{0}: nothing to apply (only commits are carried back)",
            id.as_str()
        )
    );
    let diff = c.diff(&p, id.as_str(), 1 << 20).await.unwrap();
    assert_eq!((diff.diff.as_str(), diff.bytes), ("", 0));
    assert_eq!(diff.description, message);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_branch_that_moved_on_is_refused_in_the_clis_own_words() {
    let mut w = World::new(writes("notes.txt", "from the agent\n"));
    let id = w.session("write notes");
    w.project.write("notes.txt", "mine\n");
    w.project.commit_all("my own notes");
    let head = w.project.head();
    let c = w.client();
    let p = w.project.path().to_owned();
    let message = refusal(c.apply(&p, id.as_str()).await.unwrap_err());
    assert_eq!(w.project.head(), head, "nothing moved");
    let cli = w.run(&["workspace", "apply", "--yes", id.as_str()]);
    assert!(!cli.status.success());
    assert!(
        stderr(&cli).replace('\n', " ").contains(&message),
        "the CLI said {} and the daemon {message}",
        stderr(&cli)
    );
}

/// The next row of `session` with `status`, within `limit`.
async fn row_of(
    feed: &mut chock_control::RowFeed,
    session: &str,
    status: &str,
    limit: Duration,
) -> RowLine {
    let deadline = Instant::now() + limit;
    loop {
        let row = tokio::time::timeout_at(deadline.into(), feed.next_row())
            .await
            .unwrap_or_else(|_| panic!("no {status} row of {session} within {limit:?}"))
            .unwrap()
            .unwrap();
        if row.value()["id"] == session && row.value()["status"] == status {
            return row;
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rows_feed_sees_a_daemon_session_start_and_end() {
    let mut w = World::new([Turn::text("Hello.").into(), Turn::text("Again.").into()]);
    let first = w.session("first");
    let c = w.client();
    let p = w.project.path().to_owned();
    let mut feed = c.rows(Some(&p)).await.unwrap();
    assert_eq!(feed.initial().len(), 1);
    assert_eq!(feed.initial()[0].value()["id"], first.as_str());
    let started = c.start(&p, "second").await.unwrap();
    let mut watch = c.watch(&p, &started.session, 0).await.unwrap();
    while tokio::time::timeout(Duration::from_secs(60), watch.next_event())
        .await
        .expect("the session ends within a minute")
        .unwrap()
        .is_some()
    {}
    let ended = row_of(&mut feed, &started.session, "ended", Duration::from_secs(1)).await;
    assert_eq!(ended.value()["reason"], "done");
    let all = c.list_all().await.unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(
        all[0].value()["id"],
        started.session.as_str(),
        "newest first"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_merge_that_conflicts_is_refused_in_the_clis_own_words_and_moves_nothing() {
    let zon = ".{ .apply = .{ .mode = .merge } }\n";
    let mut w = World::with_zon(writes("notes.txt", "from the agent\n"), Some(zon));
    let id = w.session("write notes");
    w.project.write("notes.txt", "mine\n");
    w.project.commit_all("my own notes");
    let head = w.project.head();
    let c = w.client();
    let p = w.project.path().to_owned();
    let message = refusal(c.apply(&p, id.as_str()).await.unwrap_err());
    assert_eq!(w.project.head(), head, "nothing moved");
    assert_eq!(w.project.read("notes.txt"), "mine\n");
    assert_eq!(w.project.run_git(&["status", "--porcelain"]), "");
    let cli = w.run(&["workspace", "apply", "--yes", id.as_str()]);
    assert!(!cli.status.success());
    assert!(
        stderr(&cli).replace('\n', " ").contains(&message),
        "the CLI said {} and the daemon {message}",
        stderr(&cli)
    );
}
