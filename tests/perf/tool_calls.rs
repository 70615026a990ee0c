//! A session's cost per `run_command`: the time between two consecutive
//! requests to the model brackets one call (the reply's parse, the
//! decision, the sandbox, the command, bringing back its git commits, the
//! log's writes, the next request). The first call also waits for the
//! checkout and fills the session's private git directory; later calls are
//! the steady state. The peer measured in the same run is `chock sandbox --
//! true` from start to exit: the sandbox alone, as a person's command.
//!
//! Two sessions of [`CALLS`] calls each: one whose command is `true`, one
//! whose command makes a commit (`git commit --allow-empty`), so the
//! difference is what bringing a commit back costs.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use chock_testkit::{Reply, TempProject, Turn};
use serde_json::json;

use super::first_request::{chock_bin, fake_model, median, ms, run_ok};

const CALLS: usize = 21;

/// The gaps between consecutive model requests of one session that runs
/// `argv` [`CALLS`] times.
fn gaps(argv: &[&str]) -> Vec<Duration> {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let mut turns: Vec<Reply> = (0..CALLS)
        .map(|n| {
            Turn::text("")
                .call(&format!("c{n}"), "run_command", &json!({ "command": argv }))
                .into()
        })
        .collect();
    turns.push(Turn::text("done").into());
    let fake = fake_model(state.path(), turns);
    run_ok(state.path(), project.path(), "go");
    let at: Vec<Instant> = fake.requests().iter().map(|r| r.at).collect();
    assert_eq!(at.len(), CALLS + 1);
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
    let peer = median((0..CALLS).map(|_| sandbox_true(dir.path())).collect());
    for (what, argv) in [
        ("true", &["true"][..]),
        (
            "a commit",
            &["git", "commit", "--allow-empty", "-q", "-m", "x"][..],
        ),
    ] {
        let gaps = gaps(argv);
        let first = gaps[0];
        let steady = median(gaps[1..].to_vec());
        println!(
            "run_command ({what}): first call {:.2} ms, later calls median {:.2} ms over {} calls; \
             peer chock sandbox -- true median {:.2} ms; ratio {:.2}",
            ms(first),
            ms(steady),
            CALLS - 1,
            ms(peer),
            steady.as_secs_f64() / peer.as_secs_f64()
        );
    }
}
