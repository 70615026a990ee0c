//! Clients that would hold the daemon up: a line far past the bound sent
//! whole before reading, more connections than the cap, a watcher that
//! never reads a long log. Each meets a bound with an error line, and the
//! daemon keeps serving everyone else.

use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;

use super::{GREETING, HasTestDirs, S1, StandIn, TestDaemon, read_all};

/// A daemon with one session whose log holds `events` user messages of
/// `size` bytes each, and is still owned (it never ends).
async fn with_log(
    adjust: impl FnOnce(&mut chock_daemon::Config),
    events: usize,
    size: usize,
) -> TestDaemon {
    let h = TestDaemon::boot_with(StandIn::EndsOnRelease, adjust).await;
    let mut log = h.live_log(S1);
    let text = "x".repeat(size);
    for _ in 0..events {
        log.say(&text);
    }
    std::mem::forget(log); // keep the lock for the test's life
    h
}

#[tokio::test(flavor = "multi_thread")]
async fn a_ten_megabyte_line_sent_whole_before_reading_gets_the_error_line() {
    let h = with_log(|_| {}, 1, 10).await;
    let mut stream = UnixStream::connect(h.socket()).await.unwrap();
    let mut input = GREETING.to_vec();
    input.extend(std::iter::repeat_n(b'a', 10 << 20));
    input.push(b'\n');
    // A plain client: it writes its whole request, then reads. The daemon
    // reads the line past its bound (throwing it away), so the write is
    // not reset under it.
    stream
        .write_all(&input)
        .await
        .expect("the daemon reads the whole line before it answers");
    assert_eq!(
        read_all(&mut stream).await,
        [
            "ok chock-control 1",
            "error line longer than 1048576 bytes: send one request per line, under the limit"
        ]
    );
    assert_eq!(h.client().read(S1, 0).await.unwrap().len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn connections_past_the_cap_are_told_the_daemon_is_busy() {
    let h = with_log(|c| c.max_connections = 3, 1, 10).await;
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(UnixStream::connect(h.socket()).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut fourth = UnixStream::connect(h.socket()).await.unwrap();
    assert_eq!(
        read_all(&mut fourth).await,
        [
            "error busy: this daemon already has 3 connections open, its limit; try again in a moment"
        ]
    );
    held.pop();
    super::eventually("a freed place serves again", || async {
        h.client().read(S1, 0).await.ok().map(|_| ())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_watcher_that_never_reads_is_cut_after_the_stall_bound() {
    // 16 MB of log: far more than a socket buffer holds.
    let h = with_log(|c| c.write_stall = Duration::from_millis(500), 4000, 4096).await;
    let mut stream = UnixStream::connect(h.socket()).await.unwrap();
    let request = format!(
        "hello chock-control 1\nwatch {}\t{S1}\t0\n",
        h.project_text()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    // Reads nothing, while another client is served within a bound.
    let started = Instant::now();
    assert_eq!(h.client().read(S1, 4000).await.unwrap().len(), 1);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    // The client starts reading again: what was queued, then the cut.
    let mut bytes = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut bytes))
        .await
        .expect("the daemon closed the watch")
        .unwrap();
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines.len() < 4000,
        "it was cut before the log was sent whole"
    );
    // The cut line goes after what was queued, when there is room for it.
    let last = lines.last().unwrap();
    eprintln!(
        "{} lines, the last: {}",
        lines.len(),
        &last[..last.len().min(120)]
    );
    assert!(
        last.starts_with("{")
            || last.starts_with("error cut: this connection took no bytes for 500ms"),
        "{last}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn sockets_left_by_a_session_killed_after_its_ending_are_removed_by_the_next_reader() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    let log = h.live_log(S1);
    log.end();
    let dir = h.state().join("sessions").join(S1);
    for name in ["approve.sock", "handover.sock"] {
        // Bound and never removed: the process was killed.
        drop(std::os::unix::net::UnixListener::bind(dir.join(name)).unwrap());
        assert!(dir.join(name).exists());
    }
    let rows = h.client().list(&h.project()).await.unwrap();
    assert_eq!(rows.len(), 1);
    for name in ["approve.sock", "handover.sock"] {
        assert!(!dir.join(name).exists(), "{name} is removed");
    }
}
