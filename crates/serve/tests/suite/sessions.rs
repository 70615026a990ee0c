//! list, the session's row, read in pages, start and answer, each through
//! its route against a real daemon.

use pretty_assertions::assert_eq;

use super::{Harness, HasTestDirs, S1, S2, Sse, eventually};

#[tokio::test(flavor = "multi_thread")]
async fn list_gives_the_projects_sessions_as_rows() {
    let h = Harness::boot().await;
    let mut one = h.live_log(S1);
    one.say("first");
    one.end();
    let mut two = h.live_log(S2);
    two.append("title.set", r#""title":"Second""#);
    let reply = h.get(&format!("/api/sessions?{}", h.pq())).await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.body);
    let json = reply.json();
    let rows = json["sessions"].as_array().unwrap();
    let ids: Vec<_> = rows.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [S2, S1], "newest first, as the daemon lists them");
    assert_eq!(rows[0]["title"], "Second");
    assert_eq!(rows[0]["status"], "running");
    assert_eq!(rows[1]["status"], "ended");
    assert_eq!(rows[1]["events"], 3);
    drop(two);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sessions_row_comes_from_list() {
    let h = Harness::boot().await;
    let mut log = h.live_log(S1);
    log.say("hello");
    let reply = h.get(&format!("/api/sessions/{S1}?{}", h.pq())).await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.body);
    let row = reply.json();
    assert_eq!(row["id"], S1);
    assert_eq!(row["events"], 2);
    assert_eq!(row["project"], h.project_text());
}

#[tokio::test(flavor = "multi_thread")]
async fn events_come_in_pages_read_from_the_daemon() {
    let h = Harness::boot().await;
    let mut log = h.live_log(S1);
    for n in 2..=450 {
        log.say(&format!("message {n}"));
    }
    let ids = |reply: &super::Reply| -> (Vec<u64>, bool) {
        let json = reply.json();
        let ids = json["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["id"].as_u64().unwrap())
            .collect();
        (ids, json["more"].as_bool().unwrap())
    };
    let first = h
        .get(&format!("/api/sessions/{S1}/events?after=0&limit=200"))
        .await;
    assert_eq!(first.status.as_u16(), 200, "{}", first.body);
    assert_eq!(ids(&first), ((1..=200).collect(), false));
    let last = h
        .get(&format!("/api/sessions/{S1}/events?before=451&limit=200"))
        .await;
    assert_eq!(ids(&last), ((251..=450).collect(), true));
    let middle = h
        .get(&format!("/api/sessions/{S1}/events?before=251"))
        .await;
    assert_eq!(ids(&middle), ((51..=250).collect(), true));
    let oldest = h
        .get(&format!("/api/sessions/{S1}/events?before=51&limit=200"))
        .await;
    assert_eq!(ids(&oldest), ((1..=50).collect(), false));
    // The events are the log's own lines.
    assert_eq!(first.json()["events"][1]["text"], "message 2");
    assert_eq!(first.json()["events"][0]["type"], "session.open");
}

/// Start a session through serve, see it ask, answer Yes, see it finish.
#[tokio::test(flavor = "multi_thread")]
async fn start_then_answer_runs_a_session_to_its_end() {
    let h = Harness::boot().await;
    let body = serde_json::json!({"project": h.project_text(), "message": "push it"});
    let reply = h.post("/api/sessions", &body.to_string()).await;
    assert_eq!(reply.status.as_u16(), 201, "{}", reply.body);
    let session = reply.json()["session"].as_str().unwrap().to_owned();
    let mut sse: Sse = h.watch(&session, 0).await;
    assert_eq!(sse.next().await.unwrap().event, "row");
    loop {
        let event = sse.next_log().await;
        if event.data.contains(r#""type": "approval.request""#) {
            break;
        }
    }
    let reply = h.answer(&session, "r1", "yes").await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.body);
    assert_eq!(reply.json(), serde_json::json!({"answered": true}));
    let mut types = Vec::new();
    while let Some(event) = sse.next().await {
        if event.event == "end" {
            break;
        }
        let json: serde_json::Value = serde_json::from_str(&event.data).unwrap();
        types.push(json["type"].as_str().unwrap().to_owned());
        if json["type"] == "approval.answer" {
            assert_eq!(json["answer"], "yes");
        }
    }
    assert_eq!(
        types,
        ["approval.answer", "assistant.message", "session.end"]
    );
    // Answering again: the session has ended, and the page is told so.
    let reply = h.answer(&session, "r1", "yes").await;
    reply.assert_error(409, "refused", "has ended: there is nobody to answer");
    let row = eventually("the ended row", || async {
        let row = h.row(&session).await;
        (row["status"] == "ended").then_some(row)
    })
    .await;
    assert_eq!(row["reason"], "done");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_answer_the_session_did_not_take_is_not_reported_as_given() {
    let h = Harness::boot().await;
    let body = serde_json::json!({"project": h.project_text(), "message": "push it"});
    let session = h.post("/api/sessions", &body.to_string()).await.json()["session"]
        .as_str()
        .unwrap()
        .to_owned();
    eventually("the question", || async {
        let row = h.row(&session).await;
        (row["pending_approvals"] == 1).then_some(())
    })
    .await;
    h.answer(&session, "r9", "no").await.assert_error(
        409,
        "refused",
        "did not take the answer: no pending request r9",
    );
    let reply = h.answer(&session, "r1", "no").await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.body);
}
