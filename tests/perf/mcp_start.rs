//! `chock run` with MCP servers: wall time from spawning the session to the
//! first request reaching the model, with no server (the peer), with each
//! of three local servers alone, and with all three; then the resident
//! memory of a session holding all three while the model is thinking (the
//! session's own VmRSS and VmHWM, and the servers' processes summed).
//!
//! The servers are the reference ones .ci/run installs under /opt/chock-mcp:
//! mcp-server-time (Python), server-filesystem and server-everything (Node).
//! The target: the servers start side by side, so three cost about the
//! slowest one, not the sum of the three.

use std::path::Path;
use std::time::{Duration, Instant};

use chock_testkit::{TempProject, Turn};

use super::first_request::{chock, fake_model, median, ms, run_ok};

const RUNS: usize = 7;
const NPM: &str = "/opt/chock-mcp/npm/node_modules/@modelcontextprotocol";

fn servers() -> [(&'static str, String); 3] {
    [
        (
            "time",
            ".command = .{ \"/opt/chock-mcp/venv/bin/mcp-server-time\" }".to_owned(),
        ),
        (
            "fs",
            format!(
                ".command = .{{ \"node\", \"{NPM}/server-filesystem/dist/index.js\", \"/workspace\" }}"
            ),
        ),
        (
            "every",
            format!(
                ".command = .{{ \"node\", \"{NPM}/server-everything/dist/index.js\", \"stdio\" }}"
            ),
        ),
    ]
}

fn project(servers: &[(&str, String)]) -> TempProject {
    let project = TempProject::git();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp/session_server.py");
    std::fs::copy(script, project.path().join("s.py")).unwrap();
    let body: String = servers
        .iter()
        .map(|(name, server)| format!("        .{name} = .{{ {server} }},\n"))
        .collect();
    project.write_chock_zon(&format!(
        ".{{\n    .mcp = .{{\n{body}    }},\n    .policy = .{{ .rules = .{{\n        .{{ .action = \"mcp.*\", .decision = .allow }},\n        .{{ .action = \"sandbox.jit\", .decision = .allow }},\n    }} }},\n}}\n"
    ));
    project.commit_all("servers");
    project
}

/// The median time to the first request for `project`, and the tools the
/// model was offered in the last run.
fn to_first_request(project: &Path) -> (Duration, usize) {
    let mut samples = Vec::new();
    let mut tools = 0;
    for _ in 0..RUNS {
        let state = tempfile::tempdir().unwrap();
        let fake = fake_model(state.path(), [Turn::text("ok").into()]);
        let start = Instant::now();
        run_ok(state.path(), project, "hi");
        let first = &fake.requests()[0];
        samples.push(first.at.duration_since(start));
        tools = first.json()["tools"].as_array().map_or(0, Vec::len);
    }
    (median(samples), tools)
}

#[test]
#[ignore = "a measurement; run by hand, see the module docs"]
fn time_to_first_request_with_three_servers() {
    let none = project(&[]);
    let (peer, builtin) = to_first_request(none.path());
    println!(
        "no server: median {:.1} ms, {builtin} tools offered",
        ms(peer)
    );
    let mut slowest = Duration::ZERO;
    let mut sum = Duration::ZERO;
    for server in servers() {
        let one = project(std::slice::from_ref(&server));
        let (alone, tools) = to_first_request(one.path());
        let added = alone.saturating_sub(peer);
        slowest = slowest.max(added);
        sum += added;
        println!(
            "{} alone: median {:.1} ms (+{:.1} ms over none), {} of its tools offered",
            server.0,
            ms(alone),
            ms(added),
            tools - builtin
        );
    }
    let three = project(&servers());
    let (all, tools) = to_first_request(three.path());
    let added = all.saturating_sub(peer);
    println!(
        "all three: median {:.1} ms (+{:.1} ms over none), {} MCP tools offered",
        ms(all),
        ms(added),
        tools - builtin
    );
    println!(
        "added by three against the slowest alone: {:.2}; against the sum of the three: {:.2}",
        added.as_secs_f64() / slowest.as_secs_f64(),
        added.as_secs_f64() / sum.as_secs_f64()
    );
}

/// The same side by side start with servers that cost no CPU while they
/// start (each sleeps 400 ms, then answers): on a busy machine the
/// reference servers' start is bound by the cores they share, and this
/// shows what the session itself does with three at once.
#[test]
#[ignore = "a measurement; run by hand, see the module docs"]
fn time_to_first_request_with_three_servers_that_wait() {
    let sleepy =
        || ".command = .{ \"/usr/bin/python3\", \"/workspace/s.py\", \"sleepy\" }".to_owned();
    let (peer, _) = to_first_request(project(&[]).path());
    let (one, _) = to_first_request(project(&[("a", sleepy())]).path());
    let (three, tools) =
        to_first_request(project(&[("a", sleepy()), ("b", sleepy()), ("c", sleepy())]).path());
    let (one, three) = (one.saturating_sub(peer), three.saturating_sub(peer));
    println!(
        "waiting servers: one adds {:.1} ms, three add {:.1} ms ({} tools); three against one: {:.2}",
        ms(one),
        ms(three),
        tools,
        three.as_secs_f64() / one.as_secs_f64()
    );
}

fn status_kib(pid: u32, field: &str) -> u64 {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return 0;
    };
    status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Every process below `pid` (the sandboxes' pid 1s and what they run).
fn descendants(pid: u32) -> Vec<u32> {
    let mut parents = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
            continue;
        };
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if let Some(ppid) = ppid {
            parents.push((child, ppid));
        }
    }
    let mut found = vec![pid];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(
            parents
                .iter()
                .filter(|(_, p)| *p == parent)
                .map(|(c, _)| *c),
        );
        i += 1;
    }
    found.remove(0);
    found
}

#[test]
#[ignore = "a measurement; run by hand, see the module docs"]
fn resident_memory_with_three_servers() {
    for (label, servers) in [
        ("no server", Vec::new()),
        ("three servers", servers().to_vec()),
    ] {
        let project = project(&servers);
        let state = tempfile::tempdir().unwrap();
        let fake = fake_model(
            state.path(),
            [Turn::text("ok").delay(Duration::from_secs(2)).into()],
        );
        let mut child = chock(state.path())
            .arg("run")
            .arg(project.path())
            .arg("hi")
            .spawn()
            .unwrap();
        fake.wait_for_requests(1, Duration::from_secs(60));
        std::thread::sleep(Duration::from_millis(300));
        let pid = child.id();
        let (rss, hwm) = (status_kib(pid, "VmRSS:"), status_kib(pid, "VmHWM:"));
        let servers_rss: u64 = descendants(pid)
            .iter()
            .map(|p| status_kib(*p, "VmRSS:"))
            .sum();
        assert!(child.wait().unwrap().success());
        println!(
            "{label}: session RSS {:.1} MB (peak {:.1} MB); its sandboxed processes {:.1} MB together",
            rss as f64 / 1024.0,
            hwm as f64 / 1024.0,
            servers_rss as f64 / 1024.0
        );
    }
}
