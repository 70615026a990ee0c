//! The daemon's session controls end to end: `interrupt` and `continue`
//! on a session the daemon's own child runs, against a real `chock daemon`,
//! a real git repository and the testkit's scripted model; and each of
//! their refusals, with the exact error line docs/protocol.md gives.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use chock_control::{Client, ClientError};
use chock_log::StateDir;
use chock_log::event::EndReason;
use chock_testkit::{TempProject, Turn, wait_for};
use serde_json::{Value, json};

use super::kit::{assert_ended, call_turn, fake_model, start_daemon, workspace_dir};

const WITHIN: Duration = Duration::from_secs(60);

/// The log's complete events (a last line may be half written).
fn events(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

/// Waits until the session of `log` runs its slow command: the command
/// touched `ready` in the session's workspace.
fn wait_running(log: &Path) {
    wait_for(Duration::from_secs(30), "the slow command", || {
        let events = events(log);
        events
            .iter()
            .any(|e| e["type"] == "workspace.open")
            .then_some(())?;
        workspace_dir(&events).join("ready").exists().then_some(())
    });
}

/// Waits until the log's last event ends the session for good (not a
/// handover, which the next owner carries on).
fn wait_ended(log: &Path, within: Duration) -> Value {
    wait_ended_after(log, 0, within)
}

/// [`wait_ended`], for an ending after the log's first `after` events: the
/// daemon answers `continue` and `detach` once its child holds the log,
/// which can be before the child's `session.open` is written.
fn wait_ended_after(log: &Path, after: usize, within: Duration) -> Value {
    wait_for(within, "the session's ending", || {
        let events = events(log);
        events
            .get(after..)?
            .last()
            .filter(|e| e["type"] == "session.end" && e["reason"] != "handover")
            .cloned()
    })
}

/// The error line's message, for a call the daemon refused.
fn refusal<T: std::fmt::Debug>(result: Result<T, ClientError>) -> String {
    match result {
        Err(err) => err.to_string(),
        Ok(value) => panic!("expected a refusal, got {value:?}"),
    }
}

fn slow_command() -> chock_testkit::Reply {
    call_turn(
        "c1",
        "run_command",
        json!({"command": ["sh", "-c", "touch ready; sleep 30"]}),
    )
}

/// A daemon-started session whose command sleeps is interrupted through
/// the verb; its log ends `interrupted`, whole, within seconds; `continue`
/// then carries it on in the same log, with the next turn.
#[tokio::test(flavor = "multi_thread")]
async fn interrupt_ends_a_daemon_sessions_turn_and_continue_carries_it_on() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let _fake = fake_model(
        state.path(),
        [slow_command(), Turn::text("Carried on.").into()],
    );
    let (_daemon, address) = start_daemon(state.path());
    let client = Client::new(address).with_timeout(WITHIN);

    let started = client.start(project.path(), "work").await.unwrap();
    let log = PathBuf::from(&started.log);
    wait_running(&log);

    // While it runs, `continue` is refused: it must be interrupted first.
    let busy = refusal(
        client
            .continue_session(project.path(), &started.session, "more")
            .await,
    );
    assert!(
        busy.contains(&format!("session {} is still running", started.session))
            && busy.contains("answer its question or interrupt it first"),
        "{busy}"
    );

    let asked = Instant::now();
    client
        .interrupt(project.path(), &started.session)
        .await
        .unwrap();
    let end = wait_ended(&log, Duration::from_secs(10));
    assert_eq!(end["reason"], "interrupted", "{end}");
    assert!(asked.elapsed() < Duration::from_secs(10));
    assert_ended(&log, EndReason::Interrupted);

    // An ended session has no turn to interrupt.
    let over = refusal(client.interrupt(project.path(), &started.session).await);
    assert!(
        over.ends_with(&format!(
            "said: session {} has ended: there is no turn to interrupt; 'continue' carries it on",
            started.session
        )),
        "{over}"
    );

    let before = events(&log).len();
    let carried = client
        .continue_session(project.path(), &started.session, "carry on\twith a tab")
        .await
        .unwrap();
    assert_eq!(carried.session, started.session);
    assert_eq!(carried.log, started.log, "the same log");
    let end = wait_ended_after(&log, before, WITHIN);
    assert_eq!(end["reason"], "done", "{end}");
    let after = events(&log);
    let next: Vec<&Value> = after[before..].iter().collect();
    assert_eq!(next[0]["type"], "session.open", "{next:#?}");
    assert!(
        next.iter()
            .any(|e| e["type"] == "user.message" && e.to_string().contains("with a tab")),
        "the message, tab and all: {next:#?}"
    );
    assert!(
        next.iter().any(|e| e.to_string().contains("Carried on.")),
        "the next turn: {next:#?}"
    );
}

/// `continue` and `interrupt` refuse an unknown id, another project's
/// session and an empty message, each with its own line.
#[tokio::test(flavor = "multi_thread")]
async fn continue_and_interrupt_refuse_unknown_and_foreign_sessions() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let other = TempProject::git();
    let _fake = fake_model(state.path(), [Turn::text("Hello.").into()]);
    let (_daemon, address) = start_daemon(state.path());
    let client = Client::new(address).with_timeout(WITHIN);

    let unknown = "20261129-192736-123-7f3a9c1e";
    let expected = format!(
        "no session {unknown} on this daemon's machine: 'list <project directory>' shows the sessions"
    );
    let got = refusal(
        client
            .continue_session(project.path(), unknown, "more")
            .await,
    );
    assert!(got.ends_with(&expected), "{got}");
    let got = refusal(client.interrupt(project.path(), unknown).await);
    assert!(got.ends_with(&expected), "{got}");

    let started = client.start(project.path(), "hello").await.unwrap();
    let log = PathBuf::from(&started.log);
    wait_ended(&log, WITHIN);
    let dir = other.path().canonicalize().unwrap();
    let theirs = project.path().canonicalize().unwrap();
    let expected = format!(
        "session {} belongs to {}, not {}: name its own project directory",
        started.session,
        theirs.display(),
        dir.display()
    );
    let got = refusal(
        client
            .continue_session(&dir, &started.session, "more")
            .await,
    );
    assert!(got.ends_with(&expected), "{got}");
    let got = refusal(client.interrupt(&dir, &started.session).await);
    assert!(got.ends_with(&expected), "{got}");

    let got = refusal(
        client
            .continue_session(project.path(), &started.session, " ")
            .await,
    );
    assert!(
        got.ends_with(&format!(
            "the message to continue session {} with is empty: say what the session should do next",
            started.session
        )),
        "{got}"
    );
    // Refused without touching the log: it still ends as it did.
    assert_ended(&log, EndReason::Done);
    assert_eq!(
        StateDir::at(state.path())
            .log_path(&chock_log::SessionId::parse(&started.session).unwrap()),
        log
    );
}

/// A `start` whose child cannot begin (the directory is not a git
/// repository) carries the child's own cause in its error line.
#[tokio::test(flavor = "multi_thread")]
async fn a_failed_start_says_the_childs_cause() {
    let state = tempfile::tempdir().unwrap();
    let plain = tempfile::tempdir().unwrap();
    let _fake = fake_model(state.path(), [Turn::text("Hello.").into()]);
    let (_daemon, address) = start_daemon(state.path());
    let client = Client::new(address).with_timeout(WITHIN);

    let got = refusal(client.start(plain.path(), "hello").await);
    assert!(
        got.contains("ended (exit ") && got.contains("before it held the session's log: "),
        "{got}"
    );
    assert!(got.contains("not in a git repository"), "{got}");
    assert!(!got.contains("run it by hand"), "{got}");
}

/// A `chock run` killed with SIGKILL mid-session leaves a log with no
/// ending that nobody holds: `chock sessions --json` and the daemon's
/// `list` both call it ended, crashed, with `owned: false`.
#[tokio::test(flavor = "multi_thread")]
async fn a_killed_run_reads_as_crashed_in_sessions_and_the_daemons_list() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let _fake = fake_model(state.path(), [slow_command(), Turn::text("Done.").into()]);
    let mut run = super::kit::start_session(state.path(), project.path(), "work");
    let log = wait_for(Duration::from_secs(30), "the session's log", || {
        super::kit::sessions(state.path())
            .first()
            .map(|id| StateDir::at(state.path()).log_path(id))
    });
    wait_running(&log);
    run.kill().unwrap();
    run.wait().unwrap();

    let out = super::chock(state.path())
        .args(["sessions", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let row: chock_log::SessionRow =
        serde_json::from_slice(out.stdout.split(|b| *b == b'\n').next().unwrap()).unwrap();
    assert_eq!(row.status, "ended", "{row:?}");
    assert_eq!(row.reason, Some(EndReason::Crashed), "{row:?}");
    assert_eq!(
        row.detail.as_deref(),
        Some("its process ended without writing an ending")
    );
    assert_eq!(row.owned, Some(false));
    let table = super::chock(state.path()).arg("sessions").output().unwrap();
    let table = String::from_utf8_lossy(&table.stdout).into_owned();
    assert!(table.contains("ended: crashed"), "{table}");

    let (_daemon, address) = start_daemon(state.path());
    let client = Client::new(address).with_timeout(WITHIN);
    let rows = client.list(project.path()).await.unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    let listed = rows[0].session_row().unwrap();
    assert_eq!(listed, row, "the daemon's row is chock sessions' row");
}

/// The `stop` verb writes the stop `chock stop` would, with the browser's
/// person as who stopped it: a running daemon session's next tool call is
/// refused and the session ends `stopped`.
#[tokio::test(flavor = "multi_thread")]
async fn the_stop_verb_stops_a_running_daemon_session() {
    use super::stop_session::{assert_call_stopped, held_then_echo, release, wait_held};
    let (m, repo) = super::Machine::with_shop();
    let _fake = held_then_echo(&m);
    let mut command = m.chock(&repo);
    command.arg("daemon");
    let mut daemon = super::kit::Running::spawn(command);
    let client = Client::new(daemon.address()).with_timeout(WITHIN);

    let started = client.start(&repo, "work").await.unwrap();
    let (_, log, workspace) = wait_held(&m);
    assert_eq!(log, PathBuf::from(&started.log));

    let said = client
        .stop(&repo, "Ada Lovelace", "release\tfreeze")
        .await
        .unwrap();
    let real = repo.canonicalize().unwrap();
    assert_eq!(
        said,
        format!("stopped every agent in {}: release\tfreeze", real.display())
    );
    let stop: Value =
        serde_json::from_slice(&std::fs::read(repo.join(".chock/stop.json")).unwrap()).unwrap();
    assert_eq!(stop["who"], "Ada Lovelace", "{stop}");
    assert_eq!(stop["reason"], "release\tfreeze", "{stop}");

    release(&workspace);
    let end = wait_ended(&log, WITHIN);
    assert_eq!(end["reason"], "stopped", "{end}");
    assert_call_stopped(&events(&log), "c2", "release");
}

/// `stop` refuses a directory that is not in a git repository, with the
/// words `chock stop` uses, and writes nothing.
#[tokio::test(flavor = "multi_thread")]
async fn the_stop_verb_refuses_a_directory_outside_a_repository() {
    let m = super::Machine::new();
    let plain = m.root.path().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    let mut command = m.chock(&plain);
    command.arg("daemon");
    let mut daemon = super::kit::Running::spawn(command);
    let client = Client::new(daemon.address()).with_timeout(WITHIN);

    let got = refusal(client.stop(&plain, "Ada", "freeze").await);
    let real = plain.canonicalize().unwrap();
    assert!(
        got.ends_with(&format!(
            "said: could not stop agents: {} is not inside a git repository: run this from a repository, or use --everywhere",
            real.display()
        )),
        "{got}"
    );
    assert!(!m.home().join(".chock").exists(), "nothing was written");
}

/// A `chock run` the test started (not the daemon) is handed over through
/// the `detach` verb and carries on in the daemon's child, in the same log.
#[tokio::test(flavor = "multi_thread")]
async fn the_detach_verb_hands_a_persons_run_over_to_the_daemon() {
    use super::stop_session::{held, release, start, wait_held};
    let (m, repo) = super::Machine::with_shop();
    let _fake = fake_model(
        &m.state(),
        [held("c1"), Turn::text("Done in the daemon.").into()],
    );
    let mut command = m.chock(&repo);
    command.arg("daemon");
    let mut daemon = super::kit::Running::spawn(command);
    let client = Client::new(daemon.address()).with_timeout(WITHIN);

    let mut run = start(&m, &repo);
    let (id, log, workspace) = wait_held(&m);
    let ran = std::process::id();
    let detaching = {
        let client = client.clone();
        let repo = repo.clone();
        let id = id.to_string();
        tokio::spawn(async move { client.detach(&repo, &id).await })
    };
    // The session answers at its turn boundary, after the held command:
    // release it only once the daemon's ask is connected (the socket's
    // path is listed for the listener and for the accepted connection).
    let socket = StateDir::at(m.state()).handover_socket(&id);
    wait_for(WITHIN, "the daemon's handover ask", || {
        let table = std::fs::read_to_string("/proc/net/unix").ok()?;
        let path = socket.to_string_lossy();
        (table.lines().filter(|l| l.ends_with(path.as_ref())).count() >= 2).then_some(())
    });
    release(&workspace);
    let started = detaching.await.unwrap().unwrap();
    assert_eq!(started.session, id.to_string());
    assert_eq!(PathBuf::from(&started.log), log);
    let status = run.wait().unwrap();
    assert_eq!(status.code(), Some(8), "the run handed itself over");

    let end = wait_ended(&log, WITHIN);
    assert_eq!(end["reason"], "done", "{end}");
    let all = events(&log);
    let handover = all
        .iter()
        .position(|e| e["type"] == "session.end" && e["reason"] == "handover")
        .expect("a handover ending");
    let open = &all[handover + 1];
    assert_eq!(open["type"], "session.open", "{open}");
    assert_ne!(open["pid"], json!(ran));
    assert!(
        all[handover..]
            .iter()
            .any(|e| e.to_string().contains("Done in the daemon.")),
        "{all:#?}"
    );

    // Now the daemon's (and ended): nothing more to hand over.
    let got = refusal(client.detach(&repo, &id.to_string()).await);
    assert!(
        got.ends_with(&format!(
            "said: session {id} has ended: there is nothing to hand over; 'continue' carries it on in the daemon"
        )),
        "{got}"
    );
}

/// A session whose log ends with a handover waits for `adopt`: `continue`
/// refuses it and says so, and the log is left as it was.
#[tokio::test(flavor = "multi_thread")]
async fn continue_refuses_a_session_waiting_to_be_adopted() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let (id, mut writer) =
        super::session_logs::write_session(state.path(), project.path(), "handed");
    writer
        .append(chock_log::event::SessionEnd {
            reason: EndReason::Handover,
            detail: "handed over to the daemon".into(),
        })
        .unwrap();
    drop(writer);
    let log = StateDir::at(state.path()).log_path(&id);
    let before = std::fs::read(&log).unwrap();
    let (_daemon, address) = start_daemon(state.path());
    let client = Client::new(address).with_timeout(WITHIN);

    let got = refusal(
        client
            .continue_session(project.path(), id.as_str(), "more")
            .await,
    );
    assert!(
        got.ends_with(&format!(
            "said: session {id} ended with a handover and waits to be adopted, not continued: \
             send 'adopt <project directory>\\t{id}'"
        )),
        "{got}"
    );
    let got = refusal(client.detach(project.path(), id.as_str()).await);
    assert!(
        got.ends_with(&format!(
            "said: session {id} has ended: there is nothing to hand over; 'continue' carries it on in the daemon"
        )),
        "{got}"
    );
    assert_eq!(std::fs::read(&log).unwrap(), before, "the log is untouched");
}
