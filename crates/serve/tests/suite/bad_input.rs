//! Bad input: a daemon that is down, a daemon with another protocol number,
//! an unknown session, a request the route does not take. Each gets a
//! clear error (status, kind, message), and serve keeps serving.

use std::time::Duration;

use chock_control::Address;
use chock_testkit::RunningDaemon;
use pretty_assertions::assert_eq;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use super::{Harness, HasTestDirs, S1, S2};

#[tokio::test(flavor = "multi_thread")]
async fn a_daemon_that_is_down_is_named_and_serve_recovers_when_it_comes_up() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("daemon.sock");
    let h = Harness::boot_serve_only(Address::Unix(socket.clone())).await;
    let down = format!("no daemon is listening on unix:{}", socket.display());
    h.get("/api/status")
        .await
        .assert_error(503, "daemon_down", &down);
    h.get(&format!("/api/sessions?{}", h.pq()))
        .await
        .assert_error(503, "daemon_down", "start one with 'chock daemon'");
    h.get(&format!("/api/sessions/{S1}/watch?{}", h.pq()))
        .await
        .assert_error(503, "daemon_down", &down);
    // The daemon comes up: the same serve answers.
    let daemon = RunningDaemon::start(RunningDaemon::config(dir.path(), "/bin/false".into())).await;
    assert_eq!(h.get("/api/status").await.status.as_u16(), 200);
    drop(daemon);
}

/// A daemon that answers the greeting with another number.
pub(crate) async fn other_protocol_daemon(socket: std::path::PathBuf) {
    let listener = tokio::net::UnixListener::bind(socket).unwrap();
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            tokio::spawn(async move {
                let mut stream = BufReader::new(stream);
                let mut line = String::new();
                let _ = stream.read_line(&mut line).await;
                let _ = stream.get_mut().write_all(b"ok chock-control 2\n").await;
                let _ =
                    tokio::time::timeout(Duration::from_secs(5), stream.read_line(&mut line)).await;
            });
        }
    });
}

#[tokio::test(flavor = "multi_thread")]
async fn a_daemon_with_another_protocol_number_is_named_with_both_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("daemon.sock");
    other_protocol_daemon(socket.clone()).await;
    let h = Harness::boot_serve_only(Address::Unix(socket)).await;
    let reply = h.get("/api/status").await;
    reply.assert_error(
        502,
        "protocol",
        "the daemon speaks chock-control 2 and this client chock-control 1",
    );
    let json = reply.json();
    assert_eq!(json["daemon_protocol"], 2);
    assert_eq!(json["serve_protocol"], 1);
    h.get(&format!("/api/sessions?{}", h.pq()))
        .await
        .assert_error(502, "protocol", "chock-control 2");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_session_is_a_404_on_every_route() {
    let h = Harness::boot().await;
    h.live_log(S1).end();
    let pq = h.pq();
    h.get(&format!("/api/sessions/{S2}?{pq}"))
        .await
        .assert_error(
            404,
            "unknown_session",
            &format!("no session {S2} in project"),
        );
    h.get(&format!("/api/sessions/{S2}/events?after=0"))
        .await
        .assert_error(404, "unknown_session", &format!("no session {S2}"));
    h.get(&format!("/api/sessions/{S2}/watch?{pq}"))
        .await
        .assert_error(404, "unknown_session", &format!("no session {S2}"));
    h.answer(S2, "r1", "yes").await.assert_error(
        404,
        "unknown_session",
        &format!("no session {S2}"),
    );
    let reply = serde_json::json!({"project": h.project_text(), "request": "r1", "text": "main"});
    h.post(&format!("/api/sessions/{S2}/reply"), &reply.to_string())
        .await
        .assert_error(404, "unknown_session", &format!("no session {S2}"));
    h.get("/api/sessions/nope/events").await.assert_error(
        400,
        "bad_request",
        "'nope' is not a session id",
    );
    h.get(&format!("/api/sessions/nope/watch?{pq}"))
        .await
        .assert_error(400, "bad_request", "'nope' is not a session id");
    assert_eq!(h.get("/api/status").await.status.as_u16(), 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_body_or_query_the_route_does_not_take_is_refused_and_nothing_is_lost() {
    let h = Harness::boot().await;
    let mut log = h.live_log(S1);
    log.say("keep me");
    let log_path = h.state().join("sessions").join(S1).join("log.jsonl");
    let before = std::fs::read(&log_path).unwrap();
    let project = h.project_text();
    let json = |v: serde_json::Value| v.to_string();
    let cases: Vec<(&str, String, String, u16, &str)> = vec![
        (
            "POST",
            "/api/sessions".into(),
            "not json".into(),
            400,
            "this route takes a JSON body",
        ),
        (
            "POST",
            "/api/sessions".into(),
            json(serde_json::json!({"project": project})),
            422,
            "missing field `message`",
        ),
        (
            "POST",
            "/api/sessions".into(),
            json(serde_json::json!({"project": project, "message": "x", "extra": 1})),
            422,
            "unknown field `extra`",
        ),
        (
            "POST",
            "/api/sessions".into(),
            json(serde_json::json!({"project": project, "message": "  "})),
            400,
            "the message is empty",
        ),
        (
            "POST",
            "/api/sessions".into(),
            json(serde_json::json!({"project": "relative/dir", "message": "x"})),
            400,
            "is not an absolute path",
        ),
        (
            "POST",
            "/api/sessions".into(),
            json(serde_json::json!({"project": "/no/such/dir", "message": "x"})),
            400,
            "no project directory /no/such/dir",
        ),
        (
            "POST",
            format!("/api/sessions/{S1}/answer"),
            json(serde_json::json!({"project": project, "request": "r1", "answer": "maybe"})),
            422,
            "unknown variant `maybe`",
        ),
        (
            "POST",
            format!("/api/sessions/{S1}/answer"),
            "[]".into(),
            422,
            "this route takes a JSON body",
        ),
        (
            "POST",
            format!("/api/sessions/{S1}/reply"),
            json(serde_json::json!({"project": project, "request": "r1", "text": " \n "})),
            400,
            "the reply is empty",
        ),
        (
            "POST",
            format!("/api/sessions/{S1}/reply"),
            json(serde_json::json!({"project": project, "request": "r1", "answer": "yes"})),
            422,
            "unknown field `answer`",
        ),
    ];
    for (method, path, body, status, says) in cases {
        h.request(
            method,
            &path,
            &[("content-type", "application/json")],
            Some(&body),
        )
        .await
        .assert_error(status, "bad_request", says);
    }
    // No content type at all.
    h.request("POST", "/api/sessions", &[], Some("{}"))
        .await
        .assert_error(415, "bad_request", "Content-Type");
    // Queries.
    // Without a project, /api/sessions lists every project's sessions;
    // the routes of one session still need theirs.
    h.get(&format!("/api/sessions/{S1}")).await.assert_error(
        400,
        "bad_request",
        "name the project",
    );
    h.get(&format!("/api/sessions?{}&colour=red", h.pq()))
        .await
        .assert_error(400, "bad_request", "unknown field `colour`");
    h.get(&format!("/api/sessions/{S1}/events?after=1&before=3"))
        .await
        .assert_error(400, "bad_request", "not both");
    h.get(&format!("/api/sessions/{S1}/events?limit=lots"))
        .await
        .assert_error(400, "bad_request", "bad query string");
    h.request(
        "GET",
        &format!("/api/sessions/{S1}/watch?{}", h.pq()),
        &[("last-event-id", "seven")],
        None,
    )
    .await
    .assert_error(
        400,
        "bad_request",
        "Last-Event-ID \"seven\" is not an event id",
    );
    // Serve still serves, and the log is as it was.
    assert_eq!(h.get("/api/status").await.status.as_u16(), 200);
    assert_eq!(std::fs::read(&log_path).unwrap(), before);
    let rows = h.get(&format!("/api/sessions?{}", h.pq())).await.json();
    assert_eq!(rows["sessions"][0]["events"], 2);
    drop(log);
}
