//! `all` and `rows`: every project's rows at once, and a feed of the rows
//! as they change, from one watcher shared by every feed.

use std::time::{Duration, Instant};

use chock_control::{ClientError, RowFeed, RowLine};
use pretty_assertions::assert_eq;

use super::{GREETING, HasTestDirs, LiveLog, S1, S2, S3, StandIn, TestDaemon};

fn field(row: &RowLine, name: &str) -> serde_json::Value {
    row.value()[name].clone()
}

/// The next row of `feed` for `session` whose `status` is `status`,
/// within `limit`; rows of other sessions or states are skipped.
async fn next_row_where(
    feed: &mut RowFeed,
    session: &str,
    status: &str,
    limit: Duration,
) -> Result<RowLine, String> {
    next_row_that(feed, limit, &format!("{status} row of {session}"), |row| {
        field(row, "id") == session && field(row, "status") == status
    })
    .await
}

/// The next row of `feed` that `wanted` accepts, within `limit`; `what`
/// names it in the error.
async fn next_row_that(
    feed: &mut RowFeed,
    limit: Duration,
    what: &str,
    wanted: impl Fn(&RowLine) -> bool,
) -> Result<RowLine, String> {
    let deadline = Instant::now() + limit;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, feed.next_row()).await {
            Err(_) => return Err(format!("no {what} within {limit:?}")),
            Ok(Ok(Some(row))) => {
                if wanted(&row) {
                    return Ok(row);
                }
            }
            Ok(Ok(None)) => return Err("the feed closed".to_owned()),
            Ok(Err(err)) => return Err(err.to_string()),
        }
    }
}

/// Session S2 starts, says something and ends: its running row, then its
/// ended one (returned), each within a second on `feed`.
async fn a_second_session_comes_and_ends(h: &TestDaemon, feed: &mut RowFeed) -> RowLine {
    let mut second = h.live_log(S2);
    second.say("hello");
    next_row_where(feed, S2, "running", Duration::from_secs(1))
        .await
        .unwrap();
    second.end();
    next_row_where(feed, S2, "ended", Duration::from_secs(1))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn all_lists_every_project_newest_first() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    h.live_log(S1).end();
    let other = tempfile::tempdir().unwrap();
    LiveLog::create(h.state(), S2, other.path().to_str().unwrap()).end();
    let rows = h.client().list_all().await.unwrap();
    let ids: Vec<_> = rows.iter().map(|r| field(r, "id").clone()).collect();
    assert_eq!(ids, [S2, S1], "{rows:?}");
    // Exactly the `list` shape: the same line for a session in both.
    let listed = h.client().list(&h.project()).await.unwrap();
    assert_eq!(listed, rows[1..]);
}

#[tokio::test(flavor = "multi_thread")]
async fn all_with_a_field_is_malformed() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    let mut input = GREETING.to_vec();
    input.extend_from_slice(b"all /somewhere\n");
    assert_eq!(
        h.raw(&input).await,
        [
            "ok chock-control 1",
            "error malformed 'all' request: expected 'all', got 'all /somewhere'"
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rows_feed_sees_a_second_session_start_and_end_within_a_second() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    h.live_log(S1).end();
    let mut feed = h.client().rows(Some(&h.project())).await.unwrap();
    assert_eq!(feed.initial().len(), 1);
    assert_eq!(field(&feed.initial()[0], "id"), S1);
    let ended = a_second_session_comes_and_ends(&h, &mut feed).await;
    assert_eq!(field(&ended, "reason"), "done");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rows_feed_for_one_project_sees_nothing_of_another() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    let mut feed = h.client().rows(Some(&h.project())).await.unwrap();
    let mut everything = h.client().rows(None).await.unwrap();
    assert!(feed.initial().is_empty());
    let other = tempfile::tempdir().unwrap();
    let mut theirs = LiveLog::create(h.state(), S3, other.path().to_str().unwrap());
    theirs.say("not yours");
    theirs.end();
    // The feed of every project sees it, so the watcher did look...
    next_row_where(&mut everything, S3, "ended", Duration::from_secs(2))
        .await
        .unwrap();
    // ...and the project's own feed, given time, says nothing of it; its
    // own session's row is the next it sends.
    h.live_log(S1).end();
    let mine = next_row_where(&mut feed, S1, "ended", Duration::from_secs(2))
        .await
        .unwrap();
    assert_eq!(field(&mine, "id"), S1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rows_feed_sees_an_owner_vanish_without_an_ending() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    let log = h.live_log(S1);
    let mut feed = h.client().rows(None).await.unwrap();
    assert_eq!(field(&feed.initial()[0], "owned"), true);
    drop(log);
    next_row_that(
        &mut feed,
        Duration::from_secs(3),
        "row saying nobody holds the log",
        |row| field(row, "owned") == false,
    )
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn rows_of_a_project_that_is_not_there_is_refused() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    let err = h
        .client()
        .rows(Some(std::path::Path::new("relative/dir")))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ClientError::Daemon { message, .. }
            if message == "project directory 'relative/dir' is not an absolute path: send the full path"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rows_feed_sees_a_daemon_child_crash() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    let doomed = h
        .client()
        .start(&h.project(), "behave:crash")
        .await
        .unwrap();
    let mut feed = h.client().rows(Some(&h.project())).await.unwrap();
    let pid = feed.initial()[0].value()["child"]["pid"].as_i64().unwrap();
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(i32::try_from(pid).unwrap()).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
    let row = next_row_where(&mut feed, &doomed.session, "ended", Duration::from_secs(2))
        .await
        .unwrap();
    assert_eq!(field(&row, "reason"), "crashed");
    assert_eq!(field(&row, "child")["ended"], "signal 9");
}

/// Between the watcher's looks at every log (five seconds apart, the first
/// at its first tick) a feed's changes come from inotify: a write to a
/// log, a session that appears and its ending, each within a second.
#[tokio::test(flavor = "multi_thread")]
async fn between_full_looks_a_rows_feed_sees_writes_and_new_sessions_at_once() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    let mut first = h.live_log(S1);
    let mut feed = h.client().rows(None).await.unwrap();
    // Past the first tick, which looks at every log.
    tokio::time::sleep(Duration::from_millis(400)).await;
    first.append("title.set", r#""title":"Later""#);
    next_row_that(&mut feed, Duration::from_secs(1), "retitled row", |row| {
        field(row, "id") == S1 && field(row, "title") == "Later"
    })
    .await
    .unwrap();
    a_second_session_comes_and_ends(&h, &mut feed).await;
}
