//! `diff`, `apply` and `discard` refused before any git runs: a bad id, an
//! unknown one, another project's session, a session with no workspace, a
//! limit that is not a number. (What they do to a real workspace is in the
//! end-to-end suite, tests/suite/daemon_workspace.rs.)

use chock_control::ClientError;
use pretty_assertions::assert_eq;

use super::{GREETING, HasTestDirs, LiveLog, S1, S2, StandIn, TestDaemon};

fn message(err: ClientError) -> String {
    match err {
        ClientError::Daemon { message, .. } => message,
        other => panic!("not the daemon's refusal: {other}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_session_is_refused_by_every_workspace_verb() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    let c = h.client();
    let p = h.project();
    let want = format!(
        "no session {S1} on this daemon's machine: 'list <project directory>' shows the sessions"
    );
    assert_eq!(message(c.diff(&p, S1, 1000).await.unwrap_err()), want);
    assert_eq!(message(c.apply(&p, S1).await.unwrap_err()), want);
    assert_eq!(message(c.discard(&p, S1).await.unwrap_err()), want);
    let bad = message(c.diff(&p, "nope", 1000).await.unwrap_err());
    assert!(bad.starts_with("'nope' is not a session id"), "{bad}");
}

#[tokio::test(flavor = "multi_thread")]
async fn another_projects_session_is_refused_and_left_alone() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    let other = tempfile::tempdir().unwrap();
    let theirs = other.path().canonicalize().unwrap();
    LiveLog::create(h.state(), S2, theirs.to_str().unwrap()).end();
    let before = std::fs::read(h.log_path(S2)).unwrap();
    let c = h.client();
    let p = h.project();
    let want = format!(
        "session {S2} belongs to {}, not {}: name its own project directory",
        theirs.display(),
        p.display()
    );
    assert_eq!(message(c.diff(&p, S2, 1000).await.unwrap_err()), want);
    assert_eq!(message(c.apply(&p, S2).await.unwrap_err()), want);
    assert_eq!(message(c.discard(&p, S2).await.unwrap_err()), want);
    assert_eq!(std::fs::read(h.log_path(S2)).unwrap(), before);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_without_a_workspace_is_said_to_have_none() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    h.live_log(S1).end();
    let c = h.client();
    let p = h.project();
    let want = format!(
        "session {S1} has no workspace: it ran without one, so there is nothing to diff, apply or discard"
    );
    assert_eq!(message(c.diff(&p, S1, 1000).await.unwrap_err()), want);
    assert_eq!(message(c.apply(&p, S1).await.unwrap_err()), want);
    assert_eq!(message(c.discard(&p, S1).await.unwrap_err()), want);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_running_session_is_not_applied_or_discarded() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    let mut log = h.live_log(S1);
    log.say("still going");
    let c = h.client();
    let p = h.project();
    assert_eq!(
        message(c.apply(&p, S1).await.unwrap_err()),
        format!("session {S1} is running: end it first (or wait for it to end), then apply")
    );
    assert_eq!(
        message(c.discard(&p, S1).await.unwrap_err()),
        format!("session {S1} is running: end it first (or wait for it to end), then discard")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_limit_that_is_not_a_number_is_malformed() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    let project = h.project_text();
    for limit in ["lots", "-1", "1e6", ""] {
        let mut input = GREETING.to_vec();
        input.extend_from_slice(format!("diff {project}\t{S1}\t{limit}\n").as_bytes());
        assert_eq!(
            h.raw(&input).await,
            [
                "ok chock-control 1".to_owned(),
                format!(
                    "error malformed 'diff' request: expected 'diff <project directory>\\t<session id>\\t<byte limit>', got 'diff {project}?{S1}?{limit}'"
                )
            ]
        );
    }
}
