//! Listing every session of a state directory.

use std::fs;

use chock_log::event::{SessionOpen, TitleSet};
use chock_log::{LogWriter, SessionId, list_sessions};

use super::temp_state;

#[test]
fn lists_newest_first_filters_by_project_and_reports_what_it_skips() {
    let t = temp_state();
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    fs::create_dir_all(&a).unwrap();
    fs::create_dir_all(&b).unwrap();
    let mut made = Vec::new();
    for (n, project) in [&a, &b, &a].into_iter().enumerate() {
        let id = SessionId::new();
        let mut w = LogWriter::create(&t.state, &id).unwrap();
        w.append(SessionOpen {
            session_id: id.clone(),
            project: project.clone(),
            model: "m".into(),
            pid: 1,
            chock_version: "0".into(),
            parent: None,
        })
        .unwrap();
        w.append(TitleSet {
            title: format!("s{n}"),
        })
        .unwrap();
        made.push(id);
    }
    fs::create_dir_all(t.state.sessions().join("not-a-session")).unwrap();
    let broken = SessionId::new();
    fs::create_dir_all(t.state.session_dir(&broken)).unwrap();

    let all = list_sessions(&t.state, None);
    let ids: Vec<&SessionId> = all.sessions.iter().map(|l| &l.id).collect();
    assert_eq!(ids, [&made[2], &made[1], &made[0]]);
    assert_eq!(all.skipped.len(), 2, "{:?}", all.skipped);

    let only_a = list_sessions(&t.state, Some(&a.join("../a")));
    let titles: Vec<&str> = only_a
        .sessions
        .iter()
        .map(|l| l.summary.row.title.as_deref().unwrap())
        .collect();
    assert_eq!(titles, ["s2", "s0"]);
}

#[test]
fn an_empty_state_dir_lists_nothing() {
    let t = temp_state();
    let listed = list_sessions(&t.state, None);
    assert!(listed.sessions.is_empty() && listed.skipped.is_empty());
}

fn session(t: &super::TempState, project: &std::path::Path, title: &str) -> (SessionId, LogWriter) {
    let id = SessionId::new();
    let mut w = LogWriter::create(&t.state, &id).unwrap();
    w.append(SessionOpen {
        session_id: id.clone(),
        project: project.to_owned(),
        model: "m".into(),
        pid: 1,
        chock_version: "0".into(),
        parent: None,
    })
    .unwrap();
    w.append(TitleSet {
        title: title.to_owned(),
    })
    .unwrap();
    (id, w)
}

fn titles(t: &super::TempState) -> Vec<String> {
    list_sessions(&t.state, None)
        .sessions
        .iter()
        .map(|l| l.summary.row.title.clone().unwrap_or_default())
        .collect()
}

fn index_path(t: &super::TempState) -> std::path::PathBuf {
    t.state.root().join("index/sessions.jsonl")
}

#[test]
fn a_listing_keeps_an_index_and_refolds_only_a_log_that_changed() {
    let t = temp_state();
    let (_a, _) = session(&t, std::path::Path::new("/p"), "a");
    let (_b, mut writer_b) = session(&t, std::path::Path::new("/p"), "b");
    assert_eq!(titles(&t), ["b", "a"]);
    let index = fs::read_to_string(index_path(&t)).unwrap();
    assert_eq!(
        index.lines().count(),
        3,
        "a header and one line a session: {index}"
    );
    // While a log keeps its key, its entry is what a listing reads.
    fs::write(
        index_path(&t),
        index.replace("\"title\":\"a\"", "\"title\":\"kept\""),
    )
    .unwrap();
    assert_eq!(titles(&t), ["b", "kept"]);

    // The index says "b" for b's log as it was; the log moved on, and the
    // listing believes the log.
    writer_b.append(TitleSet { title: "b2".into() }).unwrap();
    assert_eq!(titles(&t), ["b2", "kept"]);
}

#[test]
fn an_index_that_is_stale_truncated_garbled_or_deleted_is_rebuilt_from_the_logs() {
    let t = temp_state();
    session(&t, std::path::Path::new("/p"), "a");
    session(&t, std::path::Path::new("/p"), "b");
    assert_eq!(titles(&t), ["b", "a"]);
    let whole = fs::read_to_string(index_path(&t)).unwrap();

    // A stale entry (a title the log never had, under the log's own key
    // from another moment) is not believed once the key differs.
    let mut lines: Vec<String> = whole.lines().map(str::to_owned).collect();
    let mut of_a: serde_json::Value = serde_json::from_str(&lines[2]).unwrap();
    of_a["s"]["title"] = "lie".into();
    of_a["key"][1] = (of_a["key"][1].as_i64().unwrap() + 1000).into();
    lines[2] = of_a.to_string();
    fs::write(index_path(&t), lines.join("\n")).unwrap();
    assert_eq!(titles(&t), ["b", "a"]);

    // Truncated in the middle of a line.
    fs::write(index_path(&t), &whole[..whole.len() - 40]).unwrap();
    assert_eq!(titles(&t), ["b", "a"]);
    // Garbage, and a header from another version.
    fs::write(index_path(&t), "\u{0}\u{1}not json\n").unwrap();
    assert_eq!(titles(&t), ["b", "a"]);
    fs::write(index_path(&t), "{\"chock_index\":99}\n").unwrap();
    assert_eq!(titles(&t), ["b", "a"]);
    // Deleted, and its directory with it.
    fs::remove_dir_all(t.state.root().join("index")).unwrap();
    assert_eq!(titles(&t), ["b", "a"]);
    assert_eq!(fs::read_to_string(index_path(&t)).unwrap(), whole);
}

#[test]
fn a_torn_or_unreadable_log_among_many_is_reported_every_time_and_hides_nothing() {
    let t = temp_state();
    session(&t, std::path::Path::new("/p"), "a");
    let (torn, w) = session(&t, std::path::Path::new("/p"), "torn");
    drop(w);
    let mut f = fs::OpenOptions::new()
        .append(true)
        .open(t.state.log_path(&torn))
        .unwrap();
    std::io::Write::write_all(&mut f, b"{\"id\":3,\"ty").unwrap();
    // A "log" that is a directory cannot be read by anyone, root included.
    let unreadable = SessionId::new();
    fs::create_dir_all(t.state.log_path(&unreadable)).unwrap();

    for _ in 0..2 {
        let listed = list_sessions(&t.state, None);
        let titles: Vec<_> = listed
            .sessions
            .iter()
            .map(|l| l.summary.row.title.clone().unwrap())
            .collect();
        assert_eq!(titles, ["torn", "a"], "a torn tail never became an event");
        assert_eq!(listed.skipped.len(), 1, "{:?}", listed.skipped);
        assert!(
            listed.skipped[0].1.contains("not a session log"),
            "{:?}",
            listed.skipped
        );
    }
}

#[test]
fn a_session_is_unsettled_from_its_open_until_it_ends_done() {
    use chock_log::event::{EndReason, SessionEnd};
    use chock_log::unsettled;

    let t = temp_state();
    let (id, mut w) = session(&t, std::path::Path::new("/p"), "a");
    let (marks, _) = unsettled::read(&t.state);
    assert_eq!(marks.len(), 1);
    assert_eq!(marks[0].id, id);
    assert_eq!(marks[0].project, std::path::Path::new("/p"));
    assert_eq!(marks[0].pid, std::process::id());
    assert!(marks[0].owner_alive(), "this process opened it");

    w.append(SessionEnd {
        reason: EndReason::Error,
        detail: "x".into(),
    })
    .unwrap();
    assert_eq!(unsettled::read(&t.state).0.len(), 1, "an error keeps it");
    w.append(SessionOpen {
        session_id: id.clone(),
        project: "/p".into(),
        model: "m".into(),
        pid: 1,
        chock_version: "0".into(),
        parent: None,
    })
    .unwrap();
    w.append(SessionEnd {
        reason: EndReason::Done,
        detail: "x".into(),
    })
    .unwrap();
    assert!(unsettled::read(&t.state).0.is_empty());
}

#[test]
fn a_mark_with_a_reused_pid_is_not_taken_for_a_live_owner() {
    let mark = chock_log::unsettled::Unsettled {
        id: SessionId::new(),
        pid: std::process::id(),
        started: 1,
        project: "/p".into(),
    };
    assert!(!mark.owner_alive());
}

#[test]
fn a_long_listing_statted_in_halves_keeps_its_order_and_reports_each_missing_log() {
    // More sessions than a listing stats on one thread (2,048).
    let t = temp_state();
    let mut made = Vec::new();
    for n in 0..2_100 {
        let id = SessionId::new();
        if n % 700 == 3 {
            // A session directory whose log is gone, in each half.
            fs::create_dir_all(t.state.session_dir(&id)).unwrap();
        } else {
            let mut w = LogWriter::create(&t.state, &id).unwrap();
            w.append(TitleSet {
                title: format!("s{n}"),
            })
            .unwrap();
            made.push(id);
        }
    }
    made.sort_unstable_by(|a, b| b.cmp(a));
    let listed = list_sessions(&t.state, None);
    let ids: Vec<SessionId> = listed.sessions.iter().map(|l| l.id.clone()).collect();
    assert_eq!(ids, made, "every session, newest first");
    assert_eq!(listed.skipped.len(), 3, "{:?}", listed.skipped);
    for (path, why) in &listed.skipped {
        assert!(why.starts_with("no session log at "), "{why}");
        assert!(!path.exists());
    }
}
