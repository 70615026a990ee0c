//! `start` and `adopt`: a child per session, the reply once it holds its
//! log, an error when it exits first, and a crashed child that takes down
//! its own session and nothing else.

use std::path::PathBuf;

use pretty_assertions::assert_eq;

use super::{HasTestDirs, S1, StandIn, TestDaemon, eventually};

async fn status(h: &TestDaemon, session: &str) -> serde_json::Value {
    let rows = h.client().list(&h.project()).await.unwrap();
    rows.into_iter()
        .map(|r| r.value())
        .find(|r| r["id"] == session)
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn start_replies_with_the_session_and_its_log_once_the_child_has_opened_it() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    let started = h
        .client()
        .start(&h.project(), "fix\tthe tests")
        .await
        .unwrap();
    assert_eq!(
        PathBuf::from(&started.log),
        h.session_dir(&started.session).join("log.jsonl")
    );
    // The reply comes once the session.open naming the project is in the
    // log, so a watch or an answer right after it finds the session.
    let events = h.client().read(&started.session, 0).await.unwrap();
    assert!(
        events[0].line.contains(r#""type": "session.open""#),
        "{events:?}"
    );
    let row = wait_for_row(
        &h,
        &started.session,
        "the child to ask its question",
        |row| row["status"] == "waiting",
    )
    .await;
    assert_eq!(row["status"], "waiting");
    let events = h.client().read(&started.session, 0).await.unwrap();
    assert!(
        events[1].line.contains(r#""text": "fix\tthe tests""#),
        "{events:?}"
    );
    assert!(row["child"]["pid"].as_u64().unwrap() > 0);
    h.release(&started.session);
    let mut watch = h
        .client()
        .watch(&h.project(), &started.session, 0)
        .await
        .unwrap();
    while watch.next_event().await.unwrap().is_some() {}
    let row = wait_for_row(&h, &started.session, "the child to be reaped", |row| {
        row["child"]["ended"] == "exit 0"
    })
    .await;
    assert_eq!(
        (row["status"].as_str(), row["reason"].as_str()),
        (Some("ended"), Some("done"))
    );
}

/// Polls the session's row until `holds` says it holds; that row.
async fn wait_for_row(
    h: &TestDaemon,
    session: &str,
    what: &str,
    holds: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let holds = &holds;
    eventually(what, move || async move {
        let row = status(h, session).await;
        holds(&row).then_some(row)
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_child_that_exits_before_its_log_is_an_error_not_a_session() {
    let h = TestDaemon::boot(StandIn::ExitEarly).await;
    let err = h
        .client()
        .start(&h.project(), "anything")
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("ended (exit 3) before it held the session's log"),
        "{text}"
    );
    assert!(h.client().list(&h.project()).await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_child_killed_with_sigkill_leaves_the_daemon_serving_others() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    let doomed = h
        .client()
        .start(&h.project(), "behave:crash")
        .await
        .unwrap();
    let other = h.client().start(&h.project(), "carry on").await.unwrap();
    let pid = status(&h, &doomed.session).await["child"]["pid"]
        .as_i64()
        .unwrap();
    let mut watch = h
        .client()
        .watch(&h.project(), &doomed.session, 0)
        .await
        .unwrap();
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(pid as i32).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
    // The watcher of the dead session sees its events and then the end.
    while watch.next_event().await.unwrap().is_some() {}
    let row = wait_for_row(&h, &doomed.session, "the crash to be recorded", |row| {
        row["reason"] == "crashed"
    })
    .await;
    assert_eq!(row["status"], "ended");
    assert_eq!(row["child"]["ended"], "signal 9");
    assert_eq!(
        row["detail"],
        "its process ended (signal 9) without writing an ending"
    );
    // Everyone else is still served.
    assert_eq!(status(&h, &other.session).await["status"], "waiting");
    h.client()
        .answer(
            &h.project(),
            &other.session,
            "r1",
            chock_control::Answer::Yes,
        )
        .await
        .unwrap();
    h.release(&other.session);
    let mut watch = h
        .client()
        .watch(&h.project(), &other.session, 0)
        .await
        .unwrap();
    let mut last = String::new();
    while let Some(event) = watch.next_event().await.unwrap() {
        last = event.line;
    }
    assert!(last.contains(r#""type": "session.end""#), "{last}");
}

#[tokio::test(flavor = "multi_thread")]
async fn adopt_runs_chock_run_adopt_on_a_log_nobody_holds() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    let mut log = h.live_log(S1);
    log.append("user.message", r#""text":"hi""#);
    drop(log); // the first owner let go without handing it over
    let err = h.client().adopt(&h.project(), S1).await.unwrap_err();
    assert!(
        err.to_string().contains(&format!(
            "session {S1} is not waiting to be adopted: its log does not end with a handover (the last process to open it was {})",
            std::process::id()
        )),
        "{err}"
    );
    let mut log = chock_testkit::LiveLog::adopt(h.state(), S1, &h.project_text());
    log.append(
        "session.end",
        r#""reason":"handover","detail":"to the daemon""#,
    );
    drop(log);
    let adopted = h.client().adopt(&h.project(), S1).await.unwrap();
    assert_eq!(adopted.session, S1);
    // Now the daemon's child holds it: a second adopt says so (ok), and
    // runs no second child.
    let pid = child_pid(&h).await;
    let again = h.client().adopt(&h.project(), S1).await.unwrap();
    assert_eq!(again.session, S1);
    assert_eq!(child_pid(&h).await, pid);
    h.release(S1);
    let mut watch = h.client().watch(&h.project(), S1, 4).await.unwrap();
    let mut kinds = Vec::new();
    while let Some(event) = watch.next_event().await.unwrap() {
        let value: serde_json::Value = serde_json::from_str(&event.line).unwrap();
        kinds.push(value["type"].as_str().unwrap().to_owned());
    }
    assert_eq!(
        kinds,
        [
            "session.open",
            "assistant.message",
            "turn.end",
            "session.end"
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn adopt_of_a_session_someone_holds_or_of_another_project_is_refused() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    let _held = h.live_log(S1);
    let err = h.client().adopt(&h.project(), S1).await.unwrap_err();
    assert!(
        err.to_string().contains(&format!(
            "session {S1} is still owned by process {}: hand it over with 'chock detach {S1}'",
            std::process::id()
        )),
        "{err}"
    );
    let other = tempfile::tempdir().unwrap();
    let err = h.client().adopt(other.path(), S1).await.unwrap_err();
    assert!(err.to_string().contains("belongs to"), "{err}");
}

/// The daemon's own child for S1, as its row names it.
async fn child_pid(h: &TestDaemon) -> u64 {
    let rows = h.client().list(&h.project()).await.unwrap();
    let row = rows.iter().find(|r| r.value()["id"] == S1).unwrap();
    row.value()["child"]["pid"].as_u64().unwrap()
}

/// A log that ends with a handover nobody took, whose adopting child waits
/// `delay` seconds before it takes the lock.
fn handed_over(h: &TestDaemon, delay: &str) {
    let mut log = h.live_log(S1);
    log.append("user.message", r#""text":"hi""#);
    log.append(
        "session.end",
        r#""reason":"handover","detail":"to the daemon""#,
    );
    drop(log);
    std::fs::write(
        h.state().join("sessions").join(S1).join("adopt-delay"),
        delay,
    )
    .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_adopt_that_another_process_beat_to_the_lock_says_so_and_is_not_ok() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    handed_over(&h, "1");
    let (client, project) = (h.client(), h.project());
    let adopt = client.adopt(&project, S1);
    let person = async {
        // A person's `chock run --continue` takes the log while the
        // daemon's child is still starting.
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        chock_testkit::LiveLog::adopt(h.state(), S1, &h.project_text())
    };
    let (adopted, _theirs) = tokio::join!(adopt, person);
    let err = adopted.unwrap_err().to_string();
    assert!(
        err.contains(&format!(
            "session {S1} was taken by process {} before this daemon's child could hold it: \
             it carries on in that process, not in the daemon",
            std::process::id()
        )),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn two_adopts_at_once_run_one_child_and_both_say_the_daemon_has_it() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    handed_over(&h, "0.5");
    let (one, two, project) = (h.client(), h.client(), h.project());
    let (a, b) = tokio::join!(one.adopt(&project, S1), two.adopt(&project, S1));
    assert_eq!(a.unwrap().session, S1);
    assert_eq!(b.unwrap().session, S1);
    let rows = h.client().list(&h.project()).await.unwrap();
    let row = &rows.iter().find(|r| r.value()["id"] == S1).unwrap().value();
    assert_eq!(row["owned"], true, "{row}");
    assert!(
        row["child"]["ended"].is_null(),
        "the child that holds it is the row's: {row}"
    );
    h.release(S1);
}
