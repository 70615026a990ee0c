//! `chock sessions`: the table and the JSON rows.

use chock_log::SessionRow;
use chock_log::event::{EndReason, SessionEnd};

use super::chock;
use super::kit::chock_out;
use super::session_logs::{on_fixtures, orphaned_session, stderr, stdout, write_session};

#[test]
fn table_of_fixture_sessions() {
    let (_state, table) = on_fixtures(&["sessions"]);
    insta::assert_snapshot!(table);
}

#[test]
fn json_rows_describe_sessions_written_by_the_writer_newest_first() {
    let state = tempfile::tempdir().unwrap();
    let proj = tempfile::tempdir().unwrap();
    let (old, mut w) = write_session(state.path(), proj.path(), "old one");
    w.append(SessionEnd {
        reason: EndReason::Stopped,
        detail: "stopped by a person".into(),
    })
    .unwrap();
    drop(w);
    let (new, _w) = write_session(state.path(), proj.path(), "new one");
    let out = chock_out(state.path(), &["sessions", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let rows: Vec<SessionRow> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].id, new.to_string());
    assert_eq!(rows[0].status, "running");
    assert_eq!(rows[0].title.as_deref(), Some("new one"));
    assert_eq!(
        (rows[0].events, rows[0].input_tokens, rows[0].output_tokens),
        (5, 100, 7)
    );
    assert_eq!(rows[0].owned, Some(true));
    assert_eq!(rows[1].id, old.to_string());
    assert_eq!(rows[1].status, "ended");
    assert_eq!(
        rows[1].reason.as_ref().map(EndReason::as_str),
        Some("stopped")
    );
    assert_eq!(rows[1].owned, Some(false));
}

#[test]
fn a_session_whose_process_died_is_shown_as_such() {
    let (state, _project, id) = orphaned_session("orphan");
    let out = chock(state.path()).arg("sessions").output().unwrap();
    let table = stdout(&out);
    let line = table.lines().find(|l| l.starts_with(id.as_str())).unwrap();
    assert!(line.contains("ended: crashed"), "{table}");
}

#[test]
fn project_argument_filters_and_a_broken_session_is_reported_not_fatal() {
    let state = tempfile::tempdir().unwrap();
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (in_a, _wa) = write_session(state.path(), a.path(), "in a");
    let (_in_b, _wb) = write_session(state.path(), b.path(), "in b");
    std::fs::create_dir_all(state.path().join("sessions/20200101-000000-000-00000000")).unwrap();
    let out = chock(state.path())
        .args(["sessions", "--json"])
        .arg(a.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let rows: Vec<SessionRow> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, [in_a.as_str()]);
    let err = stderr(&out);
    assert!(
        err.contains("20200101-000000-000-00000000") && err.contains("no session log"),
        "{err}"
    );
}

#[test]
fn no_sessions_says_how_to_start_one() {
    let state = tempfile::tempdir().unwrap();
    let out = chock(state.path()).arg("sessions").output().unwrap();
    assert!(out.status.success());
    assert!(stdout(&out).contains("no sessions in"), "{}", stdout(&out));
    let out = chock_out(state.path(), &["sessions", "--json"]);
    assert_eq!(stdout(&out), "");
}

#[test]
fn sessions_through_the_daemons_socket_are_the_daemons_list_of_the_project() {
    let state = tempfile::tempdir().unwrap();
    let project = chock_testkit::TempProject::git();
    let _fake = super::kit::fake_model(state.path(), [chock_testkit::Turn::text("Done.").into()]);
    super::kit::run_ok(state.path(), project.path(), "say done");
    let (mut daemon, address) = super::kit::start_daemon(state.path());
    let id = super::kit::sessions(state.path()).remove(0);

    let project_arg = project.path().to_str().unwrap();
    let out = chock_out(
        state.path(),
        &["sessions", "--from-daemon", "--json", project_arg],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let rows: Vec<SessionRow> = stdout(&out)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(rows.len(), 1, "{}", stdout(&out));
    assert_eq!(rows[0].id, id.as_str());
    assert!(matches!(rows[0].status, chock_log::RowStatus::Ended));

    let named = chock_out(
        state.path(),
        &["sessions", "--daemon", &address.to_string(), project_arg],
    );
    assert!(named.status.success(), "{}", stderr(&named));
    assert!(stdout(&named).contains(id.as_str()), "{}", stdout(&named));
    assert!(stdout(&named).contains("ended: done"), "{}", stdout(&named));
    daemon.terminate();

    // With the daemon gone the client says where it looked, and nothing else.
    let gone = chock_out(state.path(), &["sessions", "--from-daemon", project_arg]);
    assert_eq!(gone.status.code(), Some(1), "{}", stdout(&gone));
    assert!(stderr(&gone).contains("daemon.sock"), "{}", stderr(&gone));
    assert!(stdout(&gone).is_empty());
}
