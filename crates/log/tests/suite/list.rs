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
    let ids: Vec<&SessionId> = all.sessions.iter().map(|(id, _)| id).collect();
    assert_eq!(ids, [&made[2], &made[1], &made[0]]);
    assert_eq!(all.skipped.len(), 2, "{:?}", all.skipped);

    let only_a = list_sessions(&t.state, Some(&a.join("../a")));
    let titles: Vec<&str> = only_a
        .sessions
        .iter()
        .map(|(_, s)| s.title.as_deref().unwrap())
        .collect();
    assert_eq!(titles, ["s2", "s0"]);
}

#[test]
fn an_empty_state_dir_lists_nothing() {
    let t = temp_state();
    let listed = list_sessions(&t.state, None);
    assert!(listed.sessions.is_empty() && listed.skipped.is_empty());
}
