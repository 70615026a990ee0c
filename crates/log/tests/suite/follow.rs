//! The follower sees appends as they happen and reports endings.

use std::time::Duration;

use chock_log::event::{EndReason, Handover, SessionEnd, SessionOpen, UserMessage};
use chock_log::{EventId, Follower, LogWriter, SessionId};

use super::{ids, temp_state};

#[test]
fn follows_appends_from_a_last_id_with_inotify() {
    follows_appends_from_a_last_id(true);
}

#[test]
fn follows_appends_from_a_last_id_by_polling() {
    follows_appends_from_a_last_id(false);
}

fn follows_appends_from_a_last_id(inotify: bool) {
    let t = temp_state();
    let (_, path) = super::session_with(&t.state, 3);
    let mut f = if inotify {
        Follower::new(&path, EventId(2)).unwrap()
    } else {
        Follower::polling(&path, EventId(2)).unwrap()
    };
    assert_eq!(ids(&f.next(Duration::from_secs(5)).unwrap()), [3, 4]);
    assert!(f.next(Duration::from_millis(50)).unwrap().is_empty());
    let mut w = LogWriter::open(&path).unwrap();
    let writer = std::thread::spawn(move || {
        for i in 0..20 {
            w.append(UserMessage {
                text: format!("late {i}"),
            })
            .unwrap();
        }
    });
    let mut seen = Vec::new();
    while seen.len() < 20 {
        let got = f.next(Duration::from_secs(10)).unwrap();
        assert!(
            !got.is_empty(),
            "no events within the timeout; saw {seen:?}"
        );
        seen.extend(ids(&got));
    }
    writer.join().unwrap();
    assert_eq!(seen, (5..=24).collect::<Vec<_>>());
    assert_eq!(f.last_id(), EventId(24));
    assert_eq!(
        f.as_fd().is_some(),
        inotify,
        "inotify should be available here"
    );
}

#[test]
fn an_ending_is_reported_and_a_handover_is_followed_through() {
    let t = temp_state();
    let id = SessionId::new();
    let mut w = LogWriter::create(&t.state, &id).unwrap();
    w.append(Handover {
        to: "daemon".into(),
    })
    .unwrap();
    w.append(SessionEnd {
        reason: EndReason::Handover,
        detail: String::new(),
    })
    .unwrap();
    drop(w);
    let path = t.state.log_path(&id);
    let mut f = Follower::new(&path, EventId::NONE).unwrap();
    assert_eq!(f.next(Duration::from_secs(5)).unwrap().len(), 2);
    assert_eq!(f.ended(), Some(EndReason::Handover));
    let mut w = LogWriter::open(&path).unwrap();
    w.append(SessionOpen {
        session_id: id.clone(),
        project: "/p".into(),
        model: "m".into(),
        pid: std::process::id(),
        chock_version: "0".into(),
        parent: None,
    })
    .unwrap();
    assert_eq!(ids(&f.next(Duration::from_secs(5)).unwrap()), [3]);
    assert_eq!(f.ended(), None);
    w.append(SessionEnd {
        reason: EndReason::Done,
        detail: String::new(),
    })
    .unwrap();
    assert_eq!(ids(&f.next(Duration::from_secs(5)).unwrap()), [4]);
    assert_eq!(f.ended(), Some(EndReason::Done));
}

#[test]
fn a_torn_line_is_returned_once_it_is_complete() {
    use std::io::Write;
    let t = temp_state();
    let path = t.state.sessions().join("x/log.jsonl");
    super::write(&path, &super::line(1, "a"));
    let mut f = Follower::new(&path, EventId::NONE).unwrap();
    assert_eq!(ids(&f.next(Duration::from_secs(5)).unwrap()), [1]);
    let whole = super::line(2, "b");
    let (head, tail) = whole.split_at(20);
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(head.as_bytes()).unwrap();
    assert!(f.next(Duration::from_millis(50)).unwrap().is_empty());
    file.write_all(tail.as_bytes()).unwrap();
    assert_eq!(ids(&f.next(Duration::from_secs(5)).unwrap()), [2]);
    assert!(f.take_problems().is_empty());
}
