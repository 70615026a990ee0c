//! `answer`: delivered only through the session's own approval socket, and
//! `ok answered` only when that socket took it.

use chock_control::{Answer, ClientError};

use super::{HasTestDirs, S1, StandIn, TestDaemon, eventually};

#[tokio::test(flavor = "multi_thread")]
async fn an_answer_reaches_the_session_which_records_it() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    let client = h.client();
    let started = client.start(&h.project(), "push it").await.unwrap();
    let log = std::path::PathBuf::from(&started.log);
    eventually("the approval request", || async {
        std::fs::read_to_string(&log)
            .ok()
            .filter(|t| t.contains("approval.request"))
            .map(drop)
    })
    .await;
    let rows = client.list(&h.project()).await.unwrap();
    assert_eq!(rows[0].value()["pending_approvals"], 1);
    client
        .answer(&h.project(), &started.session, "r1", Answer::Yes)
        .await
        .unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.contains(r#""type": "approval.answer", "request_id": "r1", "answer": "yes""#),
        "{text}"
    );
    // The same request again: the session refuses, and the daemon says so.
    let err = client
        .answer(&h.project(), &started.session, "r1", Answer::No)
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "the daemon at {} said: session {} did not take the answer: no pending request r1",
            h.address(),
            started.session
        )
    );
    h.release(&started.session);
    let mut watch = client
        .watch(&h.project(), &started.session, 0)
        .await
        .unwrap();
    while watch.next_event().await.unwrap().is_some() {}
}

#[tokio::test(flavor = "multi_thread")]
async fn an_answer_nobody_can_take_is_a_failure_never_ok_answered() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    let mut log = h.live_log(S1);
    log.append("approval.request", r#""request_id":"r1""#);
    // Owned and waiting, but with no approval socket to deliver to.
    let raw = h
        .raw(
            format!(
                "hello chock-control 1\nanswer {}\t{S1}\tr1\tyes\n",
                h.project_text()
            )
            .as_bytes(),
        )
        .await;
    assert_eq!(raw.len(), 2, "{raw:?}");
    assert!(
        raw[1].starts_with(&format!(
            "error the answer was not delivered: session {S1} is not taking answers"
        )),
        "{raw:?}"
    );
    assert!(!raw.iter().any(|l| l.contains("ok answered")));
    assert!(
        !raw[1].contains(h.state().to_str().unwrap()),
        "no path is handed out: {raw:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn answering_an_ended_session_is_refused() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    h.live_log(S1).end();
    let err = h
        .client()
        .answer(&h.project(), S1, "r1", Answer::Yes)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ClientError::Daemon { message, .. } if *message == format!("session {S1} has ended: there is nobody to answer")),
        "{err}"
    );
}
