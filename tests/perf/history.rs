//! What a person's kept history costs: `chock run`'s start to its first
//! model request with 1,000 kept sessions of the project against none,
//! `chock sessions` and the daemon's `list` with 10,000 sessions, and `git
//! worktree add` with 1,000 registered worktrees against none and after
//! `chock workspace prune`.
//!
//! The kept sessions are generated: each a log as a session writes it (open,
//! workspace, a message, a tool call and its result, a reply, a `done`
//! ending) and, for the project's 1,000, a real worktree on a branch of its
//! own. `HISTORY_SESSIONS` and `HISTORY_LISTED` change the counts;
//! `HISTORY_PARTS` (a comma list of `start`, `worktrees` and `listing`,
//! all three by default) runs only some of the measures. `HISTORY_KEEP`
//! keeps the listing's state directory and prints where it is, so another
//! build's `chock sessions` can be timed against the same sessions.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use chock_log::{SessionId, StateDir};
use chock_testkit::{TempProject, Turn};

use super::first_request::{chock, fake_model, median, ms, run_ok};

const RUNS: usize = 20;

fn count(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

fn head(repo: &Path) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["rev-parse", "HEAD"])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// Writes `n` ended sessions of `project` into `state` as lines a session
/// writes, with a real worktree each when `worktrees`; `applied` marks the
/// work applied. Returns the ids.
fn kept_sessions(
    state: &Path,
    project: &Path,
    n: usize,
    worktrees: bool,
    applied: bool,
) -> Vec<SessionId> {
    let state_dir = StateDir::at(state);
    let project = project.canonicalize().unwrap();
    let commit = head(&project);
    let mut ids = Vec::new();
    for _ in 0..n {
        let id = SessionId::new();
        let dir = state_dir.workspace_dir(&id);
        let branch = format!("chock/{}", id.as_str());
        if worktrees {
            std::fs::create_dir_all(state_dir.workspaces()).unwrap();
            git(
                &project,
                &[
                    "worktree",
                    "add",
                    "--quiet",
                    "-b",
                    &branch,
                    dir.to_str().unwrap(),
                ],
            );
        }
        let open = serde_json::json!({
            "type": "session.open", "session_id": id.as_str(), "project": project,
            "model": "fake", "pid": 1, "chock_version": "0"});
        let ws = serde_json::json!({
            "type": "workspace.open", "dir": dir, "commit": commit, "branch": branch});
        let mut bodies = vec![
            open,
            ws,
            serde_json::json!({"type": "user.message", "text": "do the thing"}),
            serde_json::json!({"type": "assistant.message", "text": "",
                "tool_calls": [{"id": "c1", "name": "run_command", "arguments": "{\"command\":\"true\"}"}],
                "usage": {"input_tokens": 100, "output_tokens": 10}}),
            serde_json::json!({"type": "tool.call", "call_id": "c1", "name": "run_command", "arguments": "{}"}),
            serde_json::json!({"type": "tool.result", "call_id": "c1", "ok": true, "output": "done\n"}),
            serde_json::json!({"type": "assistant.message", "text": "Done.",
                "usage": {"input_tokens": 120, "output_tokens": 5}}),
        ];
        if applied {
            bodies.push(serde_json::json!({"type": "workspace.apply", "mode": "fast_forward", "commit": commit}));
        }
        bodies.push(serde_json::json!({"type": "session.end", "reason": "done", "detail": "the agent finished"}));
        std::fs::create_dir_all(state_dir.session_dir(&id)).unwrap();
        let mut out = Vec::new();
        for (n, mut body) in bodies.into_iter().enumerate() {
            body["id"] = (n + 1).into();
            body["at"] = "2026-11-01T10:00:00.000Z".into();
            writeln!(out, "{body}").unwrap();
        }
        std::fs::write(state_dir.log_path(&id), out).unwrap();
        ids.push(id);
    }
    ids
}

/// Median start-to-first-request of `RUNS` runs of `project` in `state`.
fn first_requests(state: &Path, project: &Path) -> Duration {
    let mut samples = Vec::new();
    for _ in 0..RUNS {
        let fake = fake_model(state, [Turn::text("ok").into()]);
        let start = Instant::now();
        run_ok(state, project, "hi");
        samples.push(fake.requests()[0].at.duration_since(start));
    }
    median(samples)
}

fn timed(mut cmd: Command) -> Duration {
    let start = Instant::now();
    let out = cmd.output().unwrap();
    let took = start.elapsed();
    assert!(out.status.success(), "{out:?}");
    took
}

fn worktree_add(repo: &Path, into: &Path) -> Duration {
    let dir = into.join(SessionId::new().as_str());
    let mut cmd = Command::new("git");
    cmd.arg("-C")
        .arg(repo)
        .args(["worktree", "add", "--quiet", "--detach"])
        .arg(&dir);
    let took = timed(cmd);
    git(
        repo,
        &["worktree", "remove", "--force", dir.to_str().unwrap()],
    );
    took
}

fn worktree_adds(repo: &Path, into: &Path) -> Duration {
    // A first run, not counted, so git's cold start is not the figure.
    worktree_add(repo, into);
    median((0..RUNS).map(|_| worktree_add(repo, into)).collect())
}

#[test]
#[ignore = "a measurement; run by hand, see docs/performance.md"]
fn the_cost_of_history() {
    let kept = count("HISTORY_SESSIONS", 1_000);
    let listed = count("HISTORY_LISTED", 10_000);
    let parts = std::env::var("HISTORY_PARTS").unwrap_or_default();
    let part = |name: &str| parts.is_empty() || parts.split(',').any(|p| p.trim() == name);
    if part("start") {
        start_with_history(kept);
    }
    if part("worktrees") {
        worktrees_with_history(kept);
    }
    if part("listing") {
        listing(listed);
    }
}

/// Start to first request: none kept, then `kept` kept sessions.
fn start_with_history(kept: usize) {
    let project = TempProject::git();
    let empty = tempfile::tempdir().unwrap();
    let none = first_requests(empty.path(), project.path());
    let full = tempfile::tempdir().unwrap();
    let made = Instant::now();
    kept_sessions(full.path(), project.path(), kept, true, false);
    println!(
        "generated {kept} kept sessions with worktrees in {:.1} s",
        made.elapsed().as_secs_f64()
    );
    // The first run seeds the state directory's marks; what is measured is
    // every run after it.
    let _fake = fake_model(full.path(), [Turn::text("ok").into()]);
    run_ok(full.path(), project.path(), "seed");
    let with = first_requests(full.path(), project.path());
    println!(
        "chock run, start to first request: {:.2} ms with no kept session, {:.2} ms with {kept} (difference {:+.2} ms, ratio {:.2})",
        ms(none),
        ms(with),
        ms(with) - ms(none),
        with.as_secs_f64() / none.as_secs_f64()
    );
}

/// `git worktree add`, git's own figure: with `kept` registered worktrees,
/// with none, and after a prune removed the ones whose work was applied.
fn worktrees_with_history(kept: usize) {
    let project = TempProject::git();
    let state = tempfile::tempdir().unwrap();
    kept_sessions(state.path(), project.path(), kept, true, false);
    let into = tempfile::tempdir().unwrap();
    let bare = TempProject::git();
    let at_none = worktree_adds(bare.path(), into.path());
    let at_kept = worktree_adds(project.path(), into.path());
    let pruned_state = tempfile::tempdir().unwrap();
    let applied = TempProject::git();
    kept_sessions(pruned_state.path(), applied.path(), kept, true, true);
    let mut prune = chock(pruned_state.path());
    prune.args(["workspace", "prune"]);
    let prune_took = timed(prune);
    let after_prune = worktree_adds(applied.path(), into.path());
    println!(
        "git worktree add: {:.2} ms with no worktree, {:.2} ms with {kept}, {:.2} ms after `chock workspace prune` removed {kept} applied ones in {:.1} s (difference to none {:+.2} ms)",
        ms(at_none),
        ms(at_kept),
        ms(after_prune),
        prune_took.as_secs_f64(),
        ms(after_prune) - ms(at_none)
    );
}

/// Listing `listed` sessions: `chock sessions` (the first listing folds
/// every log and writes the index, the ones after read it), the daemon's
/// `list`, and serve's home.
fn listing(listed: usize) {
    let many = tempfile::tempdir().unwrap();
    let other = TempProject::git();
    kept_sessions(many.path(), other.path(), listed, false, false);
    let sessions = || {
        let mut cmd = chock(many.path());
        cmd.arg("sessions");
        cmd
    };
    let cold = timed(sessions());
    let warm = median((0..RUNS).map(|_| timed(sessions())).collect());
    let version = || {
        let mut cmd = chock(many.path());
        cmd.arg("--version");
        cmd
    };
    let peer = median((0..RUNS).map(|_| timed(version())).collect());
    println!(
        "chock sessions with {listed} sessions: {:.1} ms the first time (folding every log), {:.2} ms after (median of {RUNS}); peer chock --version {:.2} ms",
        ms(cold),
        ms(warm),
        ms(peer)
    );
    daemon_list(many.path(), other.path(), listed);
    if std::env::var_os("HISTORY_KEEP").is_some() {
        let kept = many.keep();
        let project = other.path().canonicalize().unwrap();
        std::mem::forget(other);
        println!(
            "kept the listing's state in {} (project {})",
            kept.display(),
            project.display()
        );
    }
}

/// The daemon's `list` of a project with `listed` sessions, through its
/// socket, as `chock serve`'s home asks for it.
fn daemon_list(state: &Path, project: &Path, listed: usize) {
    let mut child = chock(state)
        .arg("daemon")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let address =
        chock_control::Address::parse(line.trim().strip_prefix("listening on ").unwrap()).unwrap();
    let project: PathBuf = project.canonicalize().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let samples: Vec<Duration> = (0..RUNS)
        .map(|_| {
            runtime.block_on(async {
                let start = Instant::now();
                let client = chock_control::Client::new(address.clone());
                let rows = client.list(&project).await.unwrap();
                assert_eq!(rows.len(), listed);
                start.elapsed()
            })
        })
        .collect();
    println!(
        "daemon list with {listed} sessions: {:.2} ms (median of {RUNS}, connect to last row)",
        ms(median(samples))
    );
    serve_home(state, &line, listed);
    let _ = child.kill();
    let _ = child.wait();
}

/// serve's home with `listed` sessions: from the request for its live list
/// (`GET /api/live`, what the home page opens) to the end of the first
/// event, every row; and `GET /api/sessions` read whole.
fn serve_home(state: &Path, daemon: &str, listed: usize) {
    let daemon = daemon.trim().strip_prefix("listening on ").unwrap();
    let mut serve = chock(state)
        .args([
            "serve",
            "--daemon",
            daemon,
            "--host",
            "127.0.0.1",
            "--port",
            "0",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(serve.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let at = line.trim().strip_prefix("listening on ").unwrap();
    let at = at
        .strip_prefix("http://")
        .unwrap_or(at)
        .trim_end_matches('/')
        .to_owned();
    // `until` is asked after each read, with where that read's bytes
    // begin, so it looks at each byte about once.
    let get = |path: &str, until: &mut dyn FnMut(&[u8], usize) -> bool| -> (Duration, Vec<u8>) {
        use std::io::Read as _;
        let start = Instant::now();
        let mut conn = std::net::TcpStream::connect(&at).unwrap();
        write!(
            conn,
            "GET {path} HTTP/1.1\r\nHost: {at}\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut got = Vec::with_capacity(8 << 20);
        let mut buf = vec![0; 1 << 16];
        loop {
            let n = conn.read(&mut buf).unwrap();
            let from = got.len();
            got.extend_from_slice(&buf[..n]);
            if n == 0 || until(&got, from) {
                break;
            }
        }
        (start.elapsed(), got)
    };
    // The first event of the live list ends with its blank line.
    let find = |hay: &[u8], needle: &[u8]| memchr::memmem::find(hay, needle);
    let first_event = || {
        let mut event_at = None;
        move |got: &[u8], from: usize| {
            let back = from.saturating_sub(12);
            if event_at.is_none() {
                event_at = find(&got[back..], b"event: rows\n").map(|at| back + at);
            }
            event_at.is_some_and(|at| find(&got[back.max(at)..], b"\n\n").is_some())
        }
    };
    let mut live = Vec::new();
    let mut whole = Vec::new();
    for _ in 0..RUNS {
        let (took, got) = get("/api/live", &mut first_event());
        let rows = memchr::memmem::find_iter(&got, b"\"id\":\"").count();
        assert!(
            rows >= listed,
            "{rows} rows in {}",
            String::from_utf8_lossy(&got[..got.len().min(400)])
        );
        live.push(took);
        let (took, got) = get("/api/sessions", &mut |_, _| false);
        assert!(
            got.starts_with(b"HTTP/1.1 200"),
            "{}",
            String::from_utf8_lossy(&got[..got.len().min(400)])
        );
        whole.push(took);
    }
    let _ = serve.kill();
    let _ = serve.wait();
    println!(
        "serve's home with {listed} sessions: {:.2} ms to the live list's first event (GET /api/live), {:.2} ms for GET /api/sessions read whole (medians of {RUNS})",
        ms(median(live)),
        ms(median(whole))
    );
}
