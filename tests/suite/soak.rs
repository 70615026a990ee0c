//! The soak: sessions through a real `chock daemon` (real `chock run`
//! children, the testkit's fake model) with `chock serve` in front, while
//! bad clients connect to both (garbage bytes, slowloris, never-reading
//! watchers and event streams), session processes are killed with SIGKILL
//! at random points and carried on, and handovers race a person's
//! `chock run --continue`. Loopback only; every loop is bounded in count
//! and the whole run in time, and it stops by itself.
//!
//! It asserts that every session ends, the daemon and serve stay alive and
//! under their memory bounds, a good client is served within a bound
//! throughout, and the crash-consistency properties hold: the log as it was
//! at each kill (its complete lines) is a byte prefix of the final log, and
//! no tool call has more than one result. The figures it prints are in
//! docs/performance.md ("Soak").
//!
//! The short version runs in CI. The long one, by hand:
//!
//! ```text
//! cargo build --release -p chock
//! CHOCK_SOAK=long cargo test --release -p chock-e2e --test e2e -- --nocapture soak
//! ```

use std::collections::HashMap;
use std::io::{BufRead as _, BufReader, Write as _};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use chock_control::{Address, Client};
use chock_log::{SessionId, StateDir};
use chock_testkit::{TempProject, Turn};
use serde_json::{Value, json};

use super::chock;
use super::kit::fake_model;

/// How much of everything a run does.
struct Scale {
    /// The size of the log the never-reading clients watch.
    big_log: usize,
    sessions: usize,
    kills: usize,
    races: usize,
    garbage: usize,
    slow: usize,
    never_reading: usize,
    within: Duration,
}

impl Scale {
    fn from_env() -> Scale {
        if std::env::var("CHOCK_SOAK").as_deref() == Ok("long") {
            Scale {
                big_log: 100 << 20,
                sessions: 100,
                kills: 40,
                races: 10,
                garbage: 1000,
                slow: 50,
                never_reading: 100,
                within: Duration::from_secs(900),
            }
        } else {
            Scale {
                big_log: 20 << 20,
                sessions: 6,
                kills: 3,
                races: 2,
                garbage: 100,
                slow: 10,
                never_reading: 10,
                within: Duration::from_secs(120),
            }
        }
    }
}

/// The memory bound of the daemon and of serve under this load.
const RSS_BOUND_KIB: u64 = 64 << 10;
/// How long a good client may wait for `list` while the bad ones connect.
const SERVED_WITHIN: Duration = Duration::from_secs(5);

/// A process killed and reaped when the test ends, however it ends.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A small xorshift: which session is killed, and when, differs per run
/// (the seed is printed) without a dependency.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

fn first_line(child: &mut Child) -> String {
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    line.trim()
        .strip_prefix("listening on ")
        .unwrap()
        .to_owned()
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn alive(child: &mut Child) -> bool {
    child.try_wait().unwrap().is_none()
}

fn events(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The log's complete lines, as bytes.
fn complete_prefix(log: &Path) -> Vec<u8> {
    let mut bytes = std::fs::read(log).unwrap_or_default();
    let end = bytes
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |at| at + 1);
    bytes.truncate(end);
    bytes
}

fn ended(log: &Path) -> bool {
    events(log)
        .last()
        .is_some_and(|e| e["type"] == "session.end" && e["reason"] != "handover")
        && !chock_log::locks::is_owned(log).unwrap_or(true)
}

/// A long log of an ended session, held by nobody, for the clients that
/// never read: the daemon's memory must not grow with it.
fn big_log(state: &Path, project: &Path, bytes: usize) -> &'static str {
    let id = chock_testkit::S3;
    let dir = state.join("sessions").join(id);
    std::fs::create_dir_all(&dir).unwrap();
    let mut out = std::io::BufWriter::new(std::fs::File::create(dir.join("log.jsonl")).unwrap());
    writeln!(
        out,
        r#"{{"id":1,"at":"2026-11-29T19:00:00Z","type":"session.open","session_id":"{id}","project":"{}","model":"fake","pid":1}}"#,
        project.display()
    )
    .unwrap();
    let text = "x".repeat(4000);
    let (mut written, mut n) = (0, 2);
    while written < bytes {
        let line = format!(
            r#"{{"id":{n},"at":"2026-11-29T19:00:00Z","type":"user.message","text":"{text}"}}"#
        );
        writeln!(out, "{line}").unwrap();
        written += line.len() + 1;
        n += 1;
    }
    writeln!(
        out,
        r#"{{"id":{n},"at":"2026-11-29T19:00:00Z","type":"session.end","reason":"done","detail":"finished"}}"#
    )
    .unwrap();
    out.flush().unwrap();
    id
}

/// The bad clients, each bounded: garbage to the daemon, slowloris to
/// serve, watchers of the daemon and event streams of serve that read
/// nothing. Returns what must stay open until the end.
fn bad_clients(
    scale: &Scale,
    daemon: &Path,
    serve: &str,
    project: &Path,
    watched: &str,
) -> Vec<Box<dyn Send>> {
    let mut held: Vec<Box<dyn Send>> = Vec::new();
    for n in 0..scale.garbage {
        if let Ok(mut stream) = UnixStream::connect(daemon) {
            let junk: Vec<u8> = (0..64).map(|i| (n * 31 + i * 7) as u8).collect();
            let _ = stream.write_all(&junk);
        }
    }
    for _ in 0..scale.slow {
        if let Ok(mut stream) = TcpStream::connect(serve) {
            let _ = stream.write_all(b"GET /api/status HTTP/1.1\r\nhost: 127.0.0.1\r\nx-slow: ");
            held.push(Box::new(stream));
        }
    }
    for _ in 0..scale.never_reading {
        if let Ok(mut stream) = UnixStream::connect(daemon) {
            let _ = write!(
                stream,
                "hello chock-control 1\nwatch {}\t{watched}\t0\n",
                project.display()
            );
            held.push(Box::new(stream));
        }
        if let Ok(mut stream) = TcpStream::connect(serve) {
            let _ = write!(
                stream,
                "GET /api/sessions/{watched}/watch?project={}&after=0 HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n",
                project.display()
            );
            held.push(Box::new(stream));
        }
    }
    held
}

/// A model turn that writes a file, then one that says it is done; ids
/// unique over the run so a repeated result would show.
fn script(n: usize) -> [chock_testkit::Reply; 2] {
    [
        Turn::text("")
            .call(
                &format!("c{n}"),
                "write_file",
                &json!({"path": format!("f{n}.txt"), "content": "x"}),
            )
            .into(),
        // Streamed over about a second, so a session is often mid-call
        // when it is killed or asked to hand over.
        Turn::text(&"Done. ".repeat(40))
            .pieces(5)
            .delay(Duration::from_millis(20))
            .into(),
    ]
}

#[test]
fn soak() {
    let scale = Scale::from_env();
    let started = Instant::now();
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    println!("soak: seed {seed}");
    let mut rng = Rng(seed);
    let state = tempfile::tempdir().unwrap();
    let st = StateDir::at(state.path());
    let project = TempProject::git();
    let project_dir = project.path().canonicalize().unwrap();
    let fake = fake_model(state.path(), []);
    let big = big_log(state.path(), &project_dir, scale.big_log);
    let mut n = 0;
    let mut feed = |count: usize| {
        for _ in 0..count {
            for reply in script(n) {
                fake.push(reply);
            }
            n += 1;
        }
    };
    feed(scale.sessions * 4 + scale.races * 4 + 8);

    let mut daemon = Reaped(
        chock(state.path())
            .arg("daemon")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let daemon_address = Address::parse(&first_line(&mut daemon.0)).unwrap();
    let Address::Unix(daemon_socket) = daemon_address.clone() else {
        unreachable!()
    };
    let mut serve = Reaped(
        chock(state.path())
            .args(["serve", "--host", "127.0.0.1", "--port", "0", "--daemon"])
            .arg(daemon_address.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let serve_address = first_line(&mut serve.0);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let client = Client::new(daemon_address.clone()).with_timeout(Duration::from_secs(30));

    // Sessions through the daemon, and among them kills at random points
    // of the ones running, each carried on by a person's --continue.
    let mut prefixes: HashMap<String, Vec<Vec<u8>>> = HashMap::new();
    let mut continues = Vec::new();
    let mut waits = Vec::new();
    let mut ids: Vec<SessionId> = Vec::new();
    let mut held = Vec::new();
    let every = (scale.sessions / scale.kills.max(1)).max(1);
    let mut killed = 0;
    let mut tries = 0;
    while ids.len() < scale.sessions || (killed < scale.kills && tries < scale.kills * 20) {
        if ids.len() < scale.sessions {
            let started = runtime
                .block_on(client.start(&project_dir, "write a file"))
                .unwrap();
            ids.push(SessionId::parse(&started.session).unwrap());
            if ids.len() == 1 {
                held = bad_clients(&scale, &daemon_socket, &serve_address, &project_dir, big);
            }
            if !ids.len().is_multiple_of(every) {
                continue;
            }
        }
        if killed >= scale.kills {
            continue;
        }
        tries += 1;
        // One of the newest sessions, after a random moment.
        std::thread::sleep(Duration::from_millis(rng.below(200) as u64));
        let recent = &ids[ids.len().saturating_sub(every.max(3))..];
        let id = recent[rng.below(recent.len())].clone();
        let asked = Instant::now();
        let rows = runtime.block_on(client.list(&project_dir)).unwrap();
        waits.push(asked.elapsed());
        let pid = rows
            .iter()
            .find(|r| r.value()["id"] == id.as_str())
            .and_then(|r| r.value()["child"]["pid"].as_u64());
        let log = st.log_path(&id);
        if let Some(pid) = pid.filter(|_| chock_log::locks::is_owned(&log).unwrap_or(false)) {
            let _ = Command::new("kill")
                .args(["-9", &pid.to_string()])
                .stderr(Stdio::null())
                .status();
            std::thread::sleep(Duration::from_millis(100));
            if chock_log::locks::is_owned(&log).unwrap_or(true) {
                continue; // it ended and another took it; not a kill
            }
            killed += 1;
            prefixes
                .entry(id.as_str().to_owned())
                .or_default()
                .push(complete_prefix(&log));
            continues.push(Reaped(
                chock(state.path())
                    .args(["run", "--continue", id.as_str()])
                    .current_dir(&project_dir)
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap(),
            ));
        }
    }

    // Handovers racing a person's --continue.
    let mut races = Vec::new();
    for _ in 0..scale.races {
        let fg = Reaped(
            chock(state.path())
                .args(["run"])
                .arg(&project_dir)
                .arg("write a file")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        );
        let id = listening_session(state.path(), &ids);
        ids.push(id.clone());
        let detach = chock(state.path())
            .args(["detach", id.as_str(), "--wait", "60"])
            .current_dir(&project_dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let log = st.log_path(&id);
        // The person tries to take it back as soon as it is let go.
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut taker = None;
        while Instant::now() < deadline {
            let last = events(&log).last().cloned().unwrap_or_default();
            if last["type"] == "session.end" {
                if last["reason"] == "handover" {
                    taker = Some(Reaped(
                        chock(state.path())
                            .args(["run", "--continue", id.as_str(), "go on"])
                            .current_dir(&project_dir)
                            .stdout(Stdio::null())
                            .stderr(Stdio::null())
                            .spawn()
                            .unwrap(),
                    ));
                }
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        let out = detach.wait_with_output().unwrap();
        races.push((id, out, taker, fg));
    }

    // Every session ends.
    feed(scale.kills * 2 + scale.races * 2);
    let deadline = started + scale.within;
    let mut peak = (0, 0);
    for id in &ids {
        let log = st.log_path(id);
        while !ended(&log) {
            assert!(
                Instant::now() < deadline,
                "session {id} did not end in time: {:?}",
                events(&log).last()
            );
            assert!(alive(&mut daemon.0), "the daemon is alive");
            assert!(alive(&mut serve.0), "serve is alive");
            peak = (
                peak.0.max(rss_kib(daemon.0.id())),
                peak.1.max(rss_kib(serve.0.id())),
            );
            let asked = Instant::now();
            runtime.block_on(client.list(&project_dir)).unwrap();
            waits.push(asked.elapsed());
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    assert!(alive(&mut daemon.0) && alive(&mut serve.0));
    peak = (
        peak.0.max(rss_kib(daemon.0.id())),
        peak.1.max(rss_kib(serve.0.id())),
    );
    drop(held);

    // Crash consistency.
    for (id, before) in &prefixes {
        let log = st.log_path(&SessionId::parse(id).unwrap());
        let after = std::fs::read(&log).unwrap();
        for prefix in before {
            assert!(
                after.starts_with(prefix),
                "session {id}: the log before the kill is a prefix of the final log"
            );
        }
    }
    for id in &ids {
        let mut results: HashMap<String, usize> = HashMap::new();
        for event in events(&st.log_path(id)) {
            if event["type"] == "tool.result" {
                *results
                    .entry(event["call_id"].as_str().unwrap_or("").to_owned())
                    .or_default() += 1;
            }
        }
        assert!(
            results.values().all(|&n| n == 1),
            "session {id}: a tool call has one result: {results:?}"
        );
    }

    // Each handover report says what happened.
    let mut reported = (0, 0);
    for (id, out, _taker, _fg) in &races {
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let log = events(&st.log_path(id));
        let handover = log
            .iter()
            .position(|e| e["type"] == "session.end" && e["reason"] == "handover");
        let next_owner = handover
            .and_then(|at| log[at..].iter().find(|e| e["type"] == "session.open"))
            .and_then(|e| e["pid"].as_u64());
        if out.status.success() {
            reported.0 += 1;
            assert!(stdout.contains("handed session"), "{stdout}{stderr}");
            assert!(
                next_owner.is_some(),
                "{id}: a handover reported done has a next owner"
            );
            assert!(
                !stderr.contains("took it before the daemon"),
                "{stdout}{stderr}"
            );
        } else if stderr.contains("took it before the daemon") {
            reported.1 += 1;
            let said: u64 = stderr
                .split("but process ")
                .nth(1)
                .and_then(|rest| rest.split_whitespace().next())
                .and_then(|pid| pid.parse().ok())
                .unwrap();
            assert_eq!(
                Some(said),
                next_owner,
                "{id}: the process named is the one that took it: {stderr}"
            );
        } else {
            let last = stderr.trim().lines().last().unwrap_or("");
            println!("soak: handover of {id} not made: {last}");
        }
    }
    waits.sort();
    let worst = *waits.last().unwrap();
    println!(
        "soak: {} sessions ({} started through the daemon, {} handover races: {} handed to the daemon, {} taken by the person first), {} kills carried on, {} garbage, {} slowloris, {} never-reading watchers and {} event streams of a {} MB log; peak RSS daemon {:.1} MB, serve {:.1} MB; a list meanwhile: p50 {:?}, max {:?} ({} asked); {:.1} s",
        ids.len(),
        scale.sessions,
        races.len(),
        reported.0,
        reported.1,
        prefixes.values().map(Vec::len).sum::<usize>(),
        scale.garbage,
        scale.slow,
        scale.never_reading,
        scale.never_reading,
        scale.big_log >> 20,
        peak.0 as f64 / 1024.0,
        peak.1 as f64 / 1024.0,
        waits[waits.len() / 2],
        worst,
        waits.len(),
        started.elapsed().as_secs_f64(),
    );
    assert!(peak.0 < RSS_BOUND_KIB, "daemon RSS {} KiB", peak.0);
    assert!(peak.1 < RSS_BOUND_KIB, "serve RSS {} KiB", peak.1);
    assert!(worst < SERVED_WITHIN, "a good client waited {worst:?}");
    drop(continues);
}

/// The session a foreground `chock run` just started: the one not in
/// `known` whose handover.sock is bound (it can be asked).
fn listening_session(state: &Path, known: &[SessionId]) -> SessionId {
    let st = StateDir::at(state);
    chock_testkit::wait_for(Duration::from_secs(30), "the foreground session", || {
        std::fs::read_dir(st.sessions())
            .ok()?
            .flatten()
            .filter_map(|e| SessionId::parse(&e.file_name().to_string_lossy()).ok())
            .find(|id| !known.contains(id) && st.handover_socket(id).exists())
    })
}
