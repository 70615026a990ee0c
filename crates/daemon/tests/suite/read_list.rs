//! `read` and `list` from logs on disk: the events after an id, and one row
//! per session of the project.

use pretty_assertions::assert_eq;

use super::{GREETING, Harness, ids};

#[tokio::test(flavor = "multi_thread")]
async fn read_returns_the_events_after_the_id_then_closes() {
    let h = Harness::boot("finish").await;
    let mut log = h.live_log("s1");
    log.append("user.message", r#""text":"hi""#);
    log.append("title.set", r#""title":"Greeting""#);
    let all = h.client().read("s1", 0).await.unwrap();
    assert_eq!(all.iter().map(|e| e.id).collect::<Vec<_>>(), [1, 2, 3]);
    let lines = h.raw(b"hello chock-control 1\nread s1 1\n").await;
    assert_eq!(lines[0], "ok chock-control 1");
    assert_eq!(ids(&lines[1..]), [2, 3]);
    // Lines come back exactly as the log holds them.
    assert_eq!(
        lines[2],
        r#"{"id":3,"at":"2026-11-29T19:00:00.000003Z","type":"title.set","title":"Greeting"}"#
    );
    assert!(h.client().read("s1", 3).await.unwrap().is_empty());
    assert!(h.client().read("s1", 99).await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn read_skips_a_torn_tail() {
    let h = Harness::boot("finish").await;
    let mut log = h.live_log("s1");
    log.append("user.message", r#""text":"hi""#);
    drop(log);
    let path = h.session_dir("s1").join("log.jsonl");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(br#"{"id":3,"at":"x","ty"#);
    std::fs::write(&path, bytes).unwrap();
    assert_eq!(h.client().read("s1", 0).await.unwrap().len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn list_gives_one_row_per_session_of_that_project_only() {
    let h = Harness::boot("finish").await;
    let mut first = h.live_log("s1");
    first.append("title.set", r#""title":"First""#);
    first.append("approval.request", r#""request":"r9","action":"exec.rm""#);
    let second = h.live_log("s2");
    second.end();
    let other = tempfile::tempdir().unwrap();
    super::LiveLog::create(&h.session_dir("s3"), "s3", other.path().to_str().unwrap());
    let rows = h.client().list(&h.project()).await.unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].started_at, "2026-11-29T19:00:00.000001Z");
    assert_eq!(
        rows[0].row,
        serde_json::json!({
            "id": "s1",
            "project": h.project_text(),
            "status": "running",
            "title": "First",
            "model": "fake",
            "started_at": "2026-11-29T19:00:00.000001Z",
            "last_event_id": 3,
            "pending_approvals": ["r9"],
        })
    );
    assert_eq!(rows[1].row["status"], "ended");
    assert_eq!(rows[1].row["reason"], "done");
    let raw = h
        .raw(format!("hello chock-control 1\nlist {}\n", h.project_text()).as_bytes())
        .await;
    assert!(
        raw[1].starts_with("2026-11-29T19:00:00.000001Z\t{\"id\":\"s1\""),
        "{raw:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn list_of_a_project_with_no_sessions_is_empty() {
    let h = Harness::boot("finish").await;
    assert!(h.client().list(&h.project()).await.unwrap().is_empty());
    let mut input = GREETING.to_vec();
    input.extend_from_slice(format!("list {}\n", h.project_text()).as_bytes());
    assert_eq!(h.raw(&input).await, ["ok chock-control 1"]);
}
