//! Model calls over a kept connection: a session of [`CALLS`] `run_command`
//! calls against `keepalive_model.py`, a plain Python `http.server` that
//! keeps connections alive and writes each event-stream frame on its own,
//! once with Nagle's algorithm left on (the module's default) and once with
//! `TCP_NODELAY` on its sockets, in the same run. The figure is the median
//! gap between consecutive model requests after the first; with Nagle on,
//! a reused connection whose client delays its ACK makes each call wait
//! about 40 ms for the rest of the answer. The peer is the same session
//! against the server with Nagle off.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use chock_testkit::TempProject;

use super::first_request::{median, ms, run_ok};

const CALLS: usize = 21;

fn later_gaps(nodelay: bool) -> Duration {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let times = state.path().join("times");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/perf/keepalive_model.py");
    let mut server = Command::new("python3");
    server.arg(script).arg(CALLS.to_string()).arg(&times);
    if nodelay {
        server.arg("--nodelay");
    }
    let mut server = server.stdout(Stdio::piped()).spawn().unwrap();
    let mut port = String::new();
    BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut port)
        .unwrap();
    let dir = state.path().join("config/chock");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("config.zon"),
        format!(
            ".{{\n    .providers = .{{\n        .py = .{{ .kind = .openai, .base_url = \"http://127.0.0.1:{}/v1\" }},\n    }},\n    .model = \"py/m\",\n}}\n",
            port.trim()
        ),
    )
    .unwrap();
    run_ok(state.path(), project.path(), "go");
    let _ = server.kill();
    let _ = server.wait();
    let at: Vec<f64> = std::fs::read_to_string(&times)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(at.len(), CALLS + 1);
    let gaps: Vec<Duration> = at
        .windows(2)
        .map(|w| Duration::from_secs_f64(w[1] - w[0]))
        .collect();
    median(gaps[1..].to_vec())
}

#[test]
#[ignore = "a measurement; run by hand, see the module docs"]
fn model_calls_over_a_kept_connection() {
    let on = later_gaps(false);
    let off = later_gaps(true);
    println!(
        "keep-alive server, Nagle on: later calls median {:.2} ms; Nagle off (peer): {:.2} ms; ratio {:.2}",
        ms(on),
        ms(off),
        on.as_secs_f64() / off.as_secs_f64()
    );
    assert!(
        on < Duration::from_millis(30),
        "a model call waits on a delayed ACK: {:.2} ms",
        ms(on)
    );
}
