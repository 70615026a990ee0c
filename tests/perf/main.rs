//! Whole-process measurements of `chock daemon`, ignored by default (they
//! print figures and assert nothing about speed). Run with:
//!
//! ```text
//! cargo build --release -p chock
//! cargo test --release -p chock-e2e --test perf -- --ignored --nocapture --test-threads 1
//! ```
//!
//! `watchers`: 100 watchers on one busy session; for every append, the time
//! until each watcher has it. `idle`: the daemon's resident memory with 1,000
//! idle connections, and with 1,000 idle watches.

#![expect(clippy::unwrap_used, reason = "a measurement harness fails loudly")]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use chock_control::{Address, Client};

const BUSY: &str = "20261129-190000-001-00000001";
const QUIET: &str = "20261129-190000-002-00000002";

fn chock_bin() -> PathBuf {
    let mut dir = std::env::current_exe().unwrap();
    dir.pop();
    if dir.ends_with("deps") {
        dir.pop();
    }
    dir.join("chock")
}

struct Daemon {
    child: Child,
    address: Address,
}

impl Daemon {
    fn start(state: &Path) -> Daemon {
        Daemon::start_with(state, &[])
    }

    fn start_with(state: &Path, args: &[&str]) -> Daemon {
        let mut child = Command::new(chock_bin())
            .arg("daemon")
            .args(args)
            .env("CHOCK_STATE_DIR", state)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let address = Address::parse(line.trim().strip_prefix("listening on ").unwrap()).unwrap();
        Daemon { child, address }
    }

    fn rss_kib(&self) -> (u64, u64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse().ok())
                .unwrap_or(0)
        };
        (field("VmRSS:"), field("VmHWM:"))
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A session log this harness writes with the real writer, holding the
/// lock as an owner would.
struct Log {
    writer: chock_log::LogWriter,
}

impl Log {
    fn create(state: &Path, id: &str, project: &Path) -> Log {
        let id = chock_log::SessionId::parse(id).unwrap();
        let writer = chock_log::LogWriter::create(&chock_log::StateDir::at(state), &id).unwrap();
        let mut log = Log { writer };
        log.append(&format!(
            r#""type":"session.open","session_id":"{id}","project":"{}","model":"fake""#,
            project.display()
        ));
        log
    }

    /// Appends `{"type":...,<rest>}` with the send time in `sent_ns`.
    fn append(&mut self, rest: &str) -> u64 {
        let line = format!(
            r#"{{"id":1,"at":"2026-11-29T19:00:00Z","sent_ns":{},{rest}}}"#,
            now_ns()
        );
        let event = chock_log::Event::parse(line.as_bytes()).unwrap();
        self.writer.append(event.body).unwrap().id.0
    }
}

fn now_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

fn sent_ns(line: &str) -> u128 {
    let at = line.find(r#""sent_ns":"#).unwrap() + r#""sent_ns":"#.len();
    let digits: String = line[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().unwrap()
}

fn percentile(sorted: &[u128], p: f64) -> f64 {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index] as f64 / 1e6
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "a measurement: run by hand, see the module docs"]
async fn watchers() {
    const WATCHERS: usize = 100;
    const EVENTS: usize = 1000;
    let state = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let project_dir = project.path().canonicalize().unwrap();
    let daemon = Daemon::start(state.path());
    let mut log = Log::create(state.path(), BUSY, &project_dir);
    let mut tasks = Vec::new();
    for _ in 0..WATCHERS {
        let mut watch = Client::new(daemon.address.clone())
            .watch(&project_dir, BUSY, 1)
            .await
            .unwrap();
        tasks.push(tokio::spawn(async move {
            let mut delays = Vec::with_capacity(EVENTS);
            while let Some(event) = watch.next_event().await.unwrap() {
                let received = now_ns();
                // The measuring side does as little as it can: find the
                // send time without parsing the whole event.
                if event.line.contains(r#""type":"tick""#) {
                    delays.push(received.saturating_sub(sent_ns(&event.line)));
                }
            }
            delays
        }));
    }
    let started = Instant::now();
    for _ in 0..EVENTS {
        log.append(r#""type":"tick""#);
        // A busy session: 500 events a second.
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    log.append(r#""type":"session.end","reason":"done","detail":"finished""#);
    let mut all = Vec::new();
    for task in tasks {
        let delays = task.await.unwrap();
        assert_eq!(delays.len(), EVENTS, "every watcher gets every event");
        all.extend(delays);
    }
    all.sort_unstable();
    println!(
        "daemon watchers: {WATCHERS} watchers x {EVENTS} appends in {:.1} s: append->receipt p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        started.elapsed().as_secs_f64(),
        percentile(&all, 0.50),
        percentile(&all, 0.99),
        percentile(&all, 1.0),
    );
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "a measurement: run by hand, see the module docs"]
async fn idle() {
    const CONNECTIONS: usize = 1000;
    let state = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let project_dir = project.path().canonicalize().unwrap();
    let daemon = Daemon::start(state.path());
    let Address::Unix(socket) = daemon.address.clone() else {
        unreachable!()
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (base, _) = daemon.rss_kib();
    let mut held = Vec::new();
    for _ in 0..CONNECTIONS {
        let mut stream = tokio::net::UnixStream::connect(&socket).await.unwrap();
        tokio::io::AsyncWriteExt::write_all(&mut stream, b"hello chock-control 1\n")
            .await
            .unwrap();
        held.push(stream);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (greeted, _) = daemon.rss_kib();
    drop(held);
    let _log = Log::create(state.path(), QUIET, &project_dir);
    let mut watches = Vec::new();
    for _ in 0..CONNECTIONS {
        watches.push(
            Client::new(daemon.address.clone())
                .watch(&project_dir, QUIET, 0)
                .await
                .unwrap(),
        );
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (watching, peak) = daemon.rss_kib();
    println!(
        "daemon idle: RSS {:.1} MB at rest, {:.1} MB with {CONNECTIONS} greeted idle connections, \
         {:.1} MB with {CONNECTIONS} idle watches (peak {:.1} MB)",
        base as f64 / 1024.0,
        greeted as f64 / 1024.0,
        watching as f64 / 1024.0,
        peak as f64 / 1024.0,
    );
}

#[cfg(test)]
mod approval_rss;
mod codex;
mod daemon_load;
mod first_request;
mod history;
mod keepalive;
mod lsp_edit;
mod mcp_start;
mod prompt_cache;
mod terminal;
mod tool_calls;
