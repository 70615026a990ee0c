//! The daemon's resident memory under never-reading watchers of a long log,
//! and after they leave (docs/performance.md, "Daemon under load"). Two
//! daemons in the same run, one giving freed memory back after the burst
//! (the default) and one keeping it (`--keep-freed-memory`), each on its
//! own copy of a 100 MB log:
//!
//! ```text
//! cargo build --release -p chock
//! cargo test --release -p chock-e2e --test perf -- --ignored --nocapture never_reading
//! ```

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt;
use tokio::net::UnixStream;

use super::{Daemon, QUIET};

const WATCHERS: usize = 100;
const LOG_BYTES: usize = 100 << 20;

/// A 100 MB log of one session, written straight to the file in the log's
/// format (ids from 1), held by nobody.
fn long_log(state: &Path, project: &Path) {
    let dir = state.join("sessions").join(QUIET);
    std::fs::create_dir_all(&dir).unwrap();
    let mut out = std::io::BufWriter::new(std::fs::File::create(dir.join("log.jsonl")).unwrap());
    writeln!(
        out,
        r#"{{"id":1,"at":"2026-11-29T19:00:00Z","type":"session.open","session_id":"{QUIET}","project":"{}","model":"fake","pid":1}}"#,
        project.display()
    )
    .unwrap();
    let text = "x".repeat(4000);
    let mut written = 0;
    let mut id = 2;
    while written < LOG_BYTES {
        let kind = if id % 2 == 0 {
            "user.message"
        } else {
            "assistant.message"
        };
        let line =
            format!(r#"{{"id":{id},"at":"2026-11-29T19:00:00Z","type":"{kind}","text":"{text}"}}"#);
        writeln!(out, "{line}").unwrap();
        written += line.len() + 1;
        id += 1;
    }
    out.flush().unwrap();
}

fn mb(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

async fn measure(keep_freed: bool) {
    let state = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let project_dir = project.path().canonicalize().unwrap();
    long_log(state.path(), &project_dir);
    let daemon = if keep_freed {
        Daemon::start_with(state.path(), &["--keep-freed-memory"])
    } else {
        Daemon::start(state.path())
    };
    let chock_control::Address::Unix(socket) = daemon.address.clone() else {
        unreachable!()
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (rest, _) = daemon.rss_kib();
    let request = format!(
        "hello chock-control 1\nwatch {}\t{QUIET}\t0\n",
        project_dir.display()
    );
    let started = Instant::now();
    let mut held = Vec::new();
    for _ in 0..WATCHERS {
        let mut stream = UnixStream::connect(&socket).await.unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        held.push(stream);
    }
    // While they read nothing, another client is served: how long it waits.
    let mut waits = Vec::new();
    let mut peak_now = 0;
    while started.elapsed() < Duration::from_secs(15) {
        let asked = Instant::now();
        let rows = chock_control::Client::new(daemon.address.clone())
            .list(&project_dir)
            .await
            .unwrap();
        assert_eq!(rows.len(), 1);
        waits.push(asked.elapsed());
        peak_now = peak_now.max(daemon.rss_kib().0);
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let (with_watchers, hwm) = daemon.rss_kib();
    drop(held);
    let left = Instant::now();
    let mut after = Vec::new();
    for at in [5u64, 30, 60] {
        tokio::time::sleep_until((left + Duration::from_secs(at)).into()).await;
        after.push((at, daemon.rss_kib().0));
    }
    waits.sort();
    let p = |q: f64| waits[((waits.len() - 1) as f64 * q) as usize];
    println!(
        "{}: at rest {:.1} MB; {WATCHERS} never-reading watchers of a {} MB log: {:.1} MB (highest seen {:.1} MB, VmHWM {:.1} MB); after they left: {}; a `list` meanwhile: p50 {:?}, max {:?} ({} asked)",
        if keep_freed {
            "keeping freed memory"
        } else {
            "giving it back (default)"
        },
        mb(rest),
        LOG_BYTES >> 20,
        mb(with_watchers),
        mb(peak_now),
        mb(hwm),
        after
            .iter()
            .map(|(at, kib)| format!("{:.1} MB at {at} s", mb(*kib)))
            .collect::<Vec<_>>()
            .join(", "),
        p(0.5),
        p(1.0),
        waits.len(),
    );
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "a measurement: run by hand, see the module docs"]
async fn never_reading_watchers_of_a_long_log() {
    measure(false).await;
    measure(true).await;
}
