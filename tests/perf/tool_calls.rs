//! A session's cost per `run_command`: the time between two consecutive
//! requests to the model brackets one call (the reply's parse, the
//! decision, the sandbox, the command, bringing back its git commits, the
//! log's writes, the next request). The first call also waits for the
//! checkout and fills the session's private git directory; later calls are
//! the steady state. The peer measured in the same run is `chock sandbox --
//! true` from start to exit: the sandbox alone, as a person's command.
//!
//! Two sessions of [`CALLS`] calls each (`TOOL_CALLS` changes the count):
//! one whose command is `true`, one whose command makes a commit (`git
//! commit --allow-empty`), so the difference is what bringing a commit back
//! costs. Each prints the median of the calls after the first twenty
//! apart from the median of the last twenty, so a cost that grows with
//! the session's length shows.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use chock_testkit::{Reply, TempProject, Turn};
use serde_json::json;

use super::first_request::{chock_bin, fake_model, median, ms, run_ok};

const CALLS: usize = 101;

/// How many calls the sessions make.
fn calls() -> usize {
    std::env::var("TOOL_CALLS")
        .ok()
        .and_then(|n| n.parse().ok())
        .filter(|&n| n >= 41)
        .unwrap_or(CALLS)
}

/// The gaps between consecutive model requests of one session that runs
/// `argv` `calls` times.
fn gaps(argv: &[&str], calls: usize) -> Vec<Duration> {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let mut turns: Vec<Reply> = (0..calls)
        .map(|n| {
            Turn::text("")
                .call(&format!("c{n}"), "run_command", &json!({ "command": argv }))
                .into()
        })
        .collect();
    turns.push(Turn::text("done").into());
    let fake = fake_model(state.path(), turns);
    // One turn of `calls` calls and the answer: past the default bound.
    let config = state.path().join("config/chock/config.zon");
    let text = std::fs::read_to_string(&config).unwrap();
    let bounded = format!(
        "{}    .max_model_calls = {},\n}}\n",
        text.trim_end().strip_suffix('}').unwrap(),
        calls + 1
    );
    std::fs::write(&config, bounded).unwrap();
    run_ok(state.path(), project.path(), "go");
    let at: Vec<Instant> = fake.requests().iter().map(|r| r.at).collect();
    assert_eq!(at.len(), calls + 1);
    at.windows(2).map(|w| w[1].duration_since(w[0])).collect()
}

fn sandbox_true(dir: &Path) -> Duration {
    let start = Instant::now();
    let ok = Command::new(chock_bin())
        .args(["sandbox", "--", "true"])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap()
        .success();
    assert!(ok);
    start.elapsed()
}

#[test]
#[ignore = "a measurement; run by hand, see the module docs"]
fn run_command_cost_per_call() {
    let dir = tempfile::tempdir().unwrap();
    let calls = calls();
    let peer = median((0..21).map(|_| sandbox_true(dir.path())).collect());
    for (what, argv) in [
        ("true", &["true"][..]),
        (
            "a commit",
            &["git", "commit", "--allow-empty", "-q", "-m", "x"][..],
        ),
    ] {
        let gaps = gaps(argv, calls);
        let first = gaps[0];
        let steady = median(gaps[1..21].to_vec());
        let last = median(gaps[calls - 20..].to_vec());
        println!(
            "run_command ({what}): first call {:.2} ms, calls 2 to 21 median {:.2} ms, \
             the last 20 of {calls} median {:.2} ms; peer chock sandbox -- true median {:.2} ms; \
             ratios {:.2} and {:.2}",
            ms(first),
            ms(steady),
            ms(last),
            ms(peer),
            steady.as_secs_f64() / peer.as_secs_f64(),
            last.as_secs_f64() / peer.as_secs_f64()
        );
    }
}
