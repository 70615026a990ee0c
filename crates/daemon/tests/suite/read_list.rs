//! `read` and `list` from logs on disk: the events after an id, and one row
//! per session of the project.

use pretty_assertions::assert_eq;

use super::{GREETING, HasTestDirs, LiveLog, S1, S2, S3, StandIn, TestDaemon, ids};

#[tokio::test(flavor = "multi_thread")]
async fn read_returns_the_events_after_the_id_then_closes() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    let mut log = h.live_log(S1);
    log.append("user.message", r#""text":"hi""#);
    log.append("title.set", r#""title":"Greeting""#);
    let all = h.client().read(S1, 0).await.unwrap();
    assert_eq!(all.iter().map(|e| e.id).collect::<Vec<_>>(), [1, 2, 3]);
    let lines = h
        .raw(format!("hello chock-control 1\nread {S1} 1\n").as_bytes())
        .await;
    assert_eq!(lines[0], "ok chock-control 1");
    assert_eq!(ids(&lines[1..]), [2, 3]);
    // Lines come back exactly as the log holds them.
    let log_text = std::fs::read_to_string(h.session_dir(S1).join("log.jsonl")).unwrap();
    assert_eq!(lines[1..], log_text.lines().skip(1).collect::<Vec<_>>()[..]);
    assert!(
        lines[2].contains(r#""type":"title.set","title":"Greeting""#),
        "{}",
        lines[2]
    );
    assert!(h.client().read(S1, 3).await.unwrap().is_empty());
    assert!(h.client().read(S1, 99).await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn read_skips_a_torn_tail() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    let mut log = h.live_log(S1);
    log.append("user.message", r#""text":"hi""#);
    drop(log);
    let path = h.session_dir(S1).join("log.jsonl");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(br#"{"id":3,"at":"x","ty"#);
    std::fs::write(&path, bytes).unwrap();
    assert_eq!(h.client().read(S1, 0).await.unwrap().len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn list_gives_one_row_per_session_of_that_project_only() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    let mut first = h.live_log(S1);
    first.append("title.set", r#""title":"First""#);
    first.append(
        "approval.request",
        r#""request_id":"r9","action":"exec.rm""#,
    );
    let second = h.live_log(S2);
    second.end();
    let other = tempfile::tempdir().unwrap();
    LiveLog::create(h.state(), S3, other.path().to_str().unwrap());
    let rows = h.client().list(&h.project()).await.unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    // Newest first, as every listing of sessions is.
    let (ended, running) = (&rows[0], &rows[1]);
    assert_eq!(running.value()["id"], S1);
    assert_eq!(running.value()["project"], h.project_text());
    assert_eq!(running.value()["status"], "waiting");
    assert_eq!(running.value()["title"], "First");
    assert_eq!(running.value()["model"], "fake");
    assert_eq!(running.value()["events"], 3);
    assert_eq!(running.value()["pending_approvals"], 1);
    assert_eq!(
        running.started_at,
        running.value()["started_at"].as_str().unwrap()
    );
    let row = running.session_row().unwrap();
    assert_eq!(row.id, S1);
    assert_eq!(ended.value()["id"], S2);
    assert_eq!(ended.value()["status"], "ended");
    assert_eq!(ended.value()["reason"], "done");
    let raw = h
        .raw(format!("hello chock-control 1\nlist {}\n", h.project_text()).as_bytes())
        .await;
    assert_eq!(raw.len(), 3, "{raw:?}");
    let line = chock_control::RowLine::parse(&raw[2]).unwrap();
    assert_eq!(line.started_at, running.started_at);
    assert_eq!(line.value()["id"], S1);
}

#[tokio::test(flavor = "multi_thread")]
async fn list_of_a_project_with_no_sessions_is_empty() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    assert!(h.client().list(&h.project()).await.unwrap().is_empty());
    let mut input = GREETING.to_vec();
    input.extend_from_slice(format!("list {}\n", h.project_text()).as_bytes());
    assert_eq!(h.raw(&input).await, ["ok chock-control 1"]);
}

/// The id, status and events of every row `list` gives, newest first.
async fn listed(h: &TestDaemon) -> Vec<(String, String, u64)> {
    let rows = h.client().list(&h.project()).await.unwrap();
    rows.iter()
        .map(|row| {
            let row = row.value();
            (
                row["id"].as_str().unwrap().to_owned(),
                row["status"].as_str().unwrap().to_owned(),
                row["events"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_listing_remade_from_memory_shows_every_change_since_the_last() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    let project = h.project_text();
    let row = |id: &str, status: &str, events: u64| (id.to_owned(), status.to_owned(), events);
    let mut first = h.live_log(S1);
    let second = h.live_log(S2);
    let third = LiveLog::create(h.state(), S3, &project);
    let all_running = vec![
        row(S3, "running", 1),
        row(S2, "running", 1),
        row(S1, "running", 1),
    ];
    assert_eq!(listed(&h).await, all_running);
    // Nothing changed: the same rows again.
    assert_eq!(listed(&h).await, all_running);
    // A log that grew is folded again.
    first.append("title.set", r#""title":"First""#);
    let rows = h.client().list(&h.project()).await.unwrap();
    assert_eq!(rows[2].value()["title"], "First");
    assert_eq!(rows[2].value()["events"], 2);
    // A log whose owner let go of it, unchanged on disk, is a crash now.
    drop(second);
    assert_eq!(
        listed(&h).await,
        [
            row(S3, "running", 1),
            row(S2, "ended", 1),
            row(S1, "running", 2)
        ]
    );
    // A session whose log is gone is gone from the list.
    drop(third);
    std::fs::remove_dir_all(h.session_dir(S3)).unwrap();
    assert_eq!(
        listed(&h).await,
        [row(S2, "ended", 1), row(S1, "running", 2)]
    );
    // Many changes at once are read through the index, and the rows made
    // then are remembered as well.
    let mut many: Vec<(String, LiveLog)> = (0..80)
        .map(|_| {
            let id = chock_log::SessionId::new().as_str().to_owned();
            let log = LiveLog::create(h.state(), &id, &project);
            (id, log)
        })
        .collect();
    first.append("user.message", r#""text":"more""#);
    let rows = listed(&h).await;
    assert_eq!(rows.len(), 82);
    assert!(rows.contains(&row(S1, "running", 3)), "{rows:?}");
    assert!(rows.iter().filter(|r| r.1 == "running").count() == 81);
    many[0].1.append("user.message", r#""text":"one more""#);
    let rows = listed(&h).await;
    let id = many[0].0.clone();
    assert!(rows.contains(&row(&id, "running", 2)), "{rows:?}");
    drop(many.pop());
    let rows = listed(&h).await;
    assert_eq!(
        rows.iter().filter(|r| r.1 == "ended").count(),
        2,
        "{rows:?}"
    );
}
