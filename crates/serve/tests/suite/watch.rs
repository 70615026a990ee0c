//! The watch route: the daemon's `watch` as server-sent events, resumed
//! after a dropped connection from the last id with no gap and no repeat.

use pretty_assertions::assert_eq;

use super::{Harness, HasTestDirs, S1};

#[tokio::test(flavor = "multi_thread")]
async fn a_watch_streams_the_log_then_its_appends_then_ends() {
    let h = Harness::boot().await;
    let mut log = h.live_log(S1);
    log.say("one");
    let mut sse = h.watch(S1, 0).await;
    let row = sse.next().await.unwrap();
    assert_eq!(row.event, "row");
    assert_eq!(row.id, None, "the header moves no browser's last id");
    let row: serde_json::Value = serde_json::from_str(&row.data).unwrap();
    assert_eq!(row["id"], S1);
    assert_eq!(sse.next_log().await.id, Some(1));
    let second = sse.next_log().await;
    assert_eq!(second.id, Some(2));
    let event: serde_json::Value = serde_json::from_str(&second.data).unwrap();
    assert_eq!(event["text"], "one");
    // Appended while watching.
    log.say("two");
    assert_eq!(sse.next_log().await.id, Some(3));
    log.end();
    assert_eq!(sse.next_log().await.id, Some(4));
    let end = sse.next().await.unwrap();
    assert_eq!(end.event, "end");
    assert_eq!(sse.next().await, None, "the stream closes after end");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dropped_watch_resumes_from_the_last_event_id_with_no_gap_and_no_repeat() {
    let h = Harness::boot().await;
    let mut log = h.live_log(S1);
    for n in 0..5 {
        log.say(&format!("before {n}"));
    }
    let path = h.watch_path(S1, 0);
    let mut sse = h.sse(&path, None).await;
    sse.next().await.unwrap();
    let mut seen = Vec::new();
    for _ in 0..3 {
        seen.push(sse.next_log().await.id.unwrap());
    }
    drop(sse);
    // Appends while nobody watches.
    for n in 0..4 {
        log.say(&format!("while away {n}"));
    }
    // The browser reconnects to the same URL with Last-Event-ID, which wins
    // over the URL's after=0.
    let mut sse = h.sse(&path, Some(*seen.last().unwrap())).await;
    assert_eq!(sse.next().await.unwrap().event, "row");
    log.say("after");
    log.end();
    while let Some(event) = sse.next().await {
        match event.id {
            Some(id) => seen.push(id),
            None => assert_eq!(event.event, "end"),
        }
    }
    assert_eq!(seen, (1..=12).collect::<Vec<_>>());
    // And a fresh page starting at a tail (?after=) gets only what follows it.
    let mut tail = h.watch(S1, 10).await;
    tail.next().await.unwrap();
    assert_eq!(tail.next_log().await.id, Some(11));
    assert_eq!(tail.next_log().await.id, Some(12));
    assert_eq!(tail.next().await.unwrap().event, "end");
}
