//! `watch`: the header, the events after the id, the appends as they come,
//! the end with the session, and a resume with no gap and no repeat.

use std::time::Duration;

use pretty_assertions::assert_eq;

use super::{HasTestDirs, LiveLog, S1, StandIn, TestDaemon};

async fn next_id(watch: &mut chock_control::Watch) -> Option<u64> {
    tokio::time::timeout(Duration::from_secs(20), watch.next_event())
        .await
        .expect("an event or the end within the deadline")
        .unwrap()
        .map(|e| e.id)
}

#[tokio::test(flavor = "multi_thread")]
async fn watch_sends_the_header_the_backlog_the_appends_and_ends_with_the_session() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    let mut log = h.live_log(S1);
    log.append("user.message", r#""text":"hi""#);
    let mut watch = h.client().watch(&h.project(), S1, 0).await.unwrap();
    assert_eq!(watch.header()["id"], S1);
    assert_eq!(watch.header()["status"], "running");
    assert_eq!(watch.header_row().unwrap().events, 2);
    assert_eq!(next_id(&mut watch).await, Some(1));
    assert_eq!(next_id(&mut watch).await, Some(2));
    for _ in 0..50 {
        let id = log.append("assistant.message", r#""text":"…""#);
        assert_eq!(next_id(&mut watch).await, Some(id));
    }
    let end = log.end();
    assert_eq!(next_id(&mut watch).await, Some(end));
    assert_eq!(
        next_id(&mut watch).await,
        None,
        "the watch ends when the session does"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_resumed_watch_has_no_gap_and_no_repeat() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    let mut log = h.live_log(S1);
    for _ in 0..9 {
        log.append("assistant.message", r#""text":"a""#);
    }
    let mut seen = Vec::new();
    let mut watch = h.client().watch(&h.project(), S1, 0).await.unwrap();
    for _ in 0..5 {
        seen.push(next_id(&mut watch).await.unwrap());
    }
    let last = watch.last_event_id();
    drop(watch);
    // The session carries on while nobody watches.
    for _ in 0..10 {
        log.append("assistant.message", r#""text":"b""#);
    }
    let mut watch = h.client().watch(&h.project(), S1, last).await.unwrap();
    let appender = tokio::spawn(async move {
        for _ in 0..10 {
            log.append("assistant.message", r#""text":"c""#);
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        log.end()
    });
    while let Some(id) = next_id(&mut watch).await {
        seen.push(id);
    }
    let end = appender.await.unwrap();
    assert_eq!(seen, (1..=end).collect::<Vec<_>>());
}

#[tokio::test(flavor = "multi_thread")]
async fn many_watchers_of_one_session_each_get_every_event_once() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    let mut log = h.live_log(S1);
    let mut watches = Vec::new();
    for _ in 0..20 {
        watches.push(h.client().watch(&h.project(), S1, 0).await.unwrap());
    }
    for _ in 0..100 {
        log.append("assistant.message", r#""text":"x""#);
    }
    let end = log.end();
    for mut watch in watches {
        let mut seen = Vec::new();
        while let Some(id) = next_id(&mut watch).await {
            seen.push(id);
        }
        assert_eq!(seen, (1..=end).collect::<Vec<_>>());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn watching_a_log_nobody_holds_ends_after_its_events() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    let mut log = h.live_log(S1);
    log.append("user.message", r#""text":"hi""#);
    drop(log); // its process died without writing an ending
    let mut watch = h.client().watch(&h.project(), S1, 0).await.unwrap();
    // Events, no ending, nobody holding it: it crashed, and says so.
    assert_eq!(watch.header()["status"], "ended");
    assert_eq!(watch.header()["reason"], "crashed");
    assert_eq!(
        watch.header()["owned"],
        false,
        "nobody holds it: its process is gone"
    );
    assert_eq!(next_id(&mut watch).await, Some(1));
    assert_eq!(next_id(&mut watch).await, Some(2));
    assert_eq!(next_id(&mut watch).await, None);
}

#[tokio::test(flavor = "multi_thread")]
async fn watching_a_session_of_another_project_is_refused() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    let _log = h.live_log(S1);
    let other = tempfile::tempdir().unwrap();
    let err = h.client().watch(other.path(), S1, 0).await.unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains(&format!(
            "session {S1} belongs to {}, not",
            h.project_text()
        )),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_watch_follows_a_session_across_a_handover() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    let mut log = h.live_log(S1);
    let mut watch = h.client().watch(&h.project(), S1, 0).await.unwrap();
    assert_eq!(next_id(&mut watch).await, Some(1));
    let handover = log.append("session.end", r#""reason":"handover""#);
    drop(log); // the first owner exits 8 and lets go
    assert_eq!(next_id(&mut watch).await, Some(handover));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let log = LiveLog::adopt(h.state(), S1, &h.project_text());
    let reopened = handover + 1;
    assert_eq!(
        next_id(&mut watch).await,
        Some(reopened),
        "the new owner's session.open"
    );
    let end = log.end();
    assert_eq!(next_id(&mut watch).await, Some(end));
    assert_eq!(next_id(&mut watch).await, None);
    let rows = h.client().list(&h.project()).await.unwrap();
    assert_eq!(rows[0].value()["status"], "ended");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_watch_ends_when_nobody_takes_over_after_a_handover() {
    let h = TestDaemon::boot_with(StandIn::EndsOnRelease, |c| {
        c.handover_grace = Duration::from_millis(300);
    })
    .await;
    let mut log = h.live_log(S1);
    let mut watch = h.client().watch(&h.project(), S1, 0).await.unwrap();
    assert_eq!(next_id(&mut watch).await, Some(1));
    let handover = log.append(
        "session.end",
        r#""reason":"handover","detail":"to the daemon""#,
    );
    drop(log);
    assert_eq!(next_id(&mut watch).await, Some(handover));
    assert_eq!(
        next_id(&mut watch).await,
        None,
        "the grace passed with no new owner"
    );
}
