//! `chock run`: wall time from starting the process to the first request
//! reaching the model (the target is under 20 ms). The peer measured
//! in the same run is `chock --version`, the cost of starting the binary at
//! all, so the ratio shows what a session adds before it talks to a model:
//! config parsing, provider setup, the log's creation and its first events.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use chock_testkit::{FakeModel, TempProject, Turn, Wire};

const RUNS: usize = 30;

fn chock_bin() -> PathBuf {
    let mut dir = std::env::current_exe().unwrap();
    dir.pop();
    if dir.ends_with("deps") {
        dir.pop();
    }
    dir.join("chock")
}

fn chock(state: &Path) -> Command {
    let mut cmd = Command::new(chock_bin());
    cmd.env("CHOCK_STATE_DIR", state)
        .env("XDG_CONFIG_HOME", state.join("config"))
        .env_remove("CHOCK_LOG")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    cmd
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[test]
#[ignore = "a measurement; run by hand, see the module docs"]
fn time_to_first_model_request() {
    let project = TempProject::git();
    let mut to_request = Vec::new();
    let mut version = Vec::new();
    for _ in 0..RUNS {
        let state = tempfile::tempdir().unwrap();
        let fake = FakeModel::with([Turn::text("ok").into()]);
        let dir = state.path().join("config/chock");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.zon"), fake.config_zon(Wire::OpenAi, "m")).unwrap();

        let start = Instant::now();
        let status = chock(state.path())
            .arg("run")
            .arg(project.path())
            .arg("hi")
            .status()
            .unwrap();
        assert!(status.success());
        let first = fake.requests()[0].at;
        to_request.push(first.duration_since(start));

        let start = Instant::now();
        assert!(
            chock(state.path())
                .arg("--version")
                .status()
                .unwrap()
                .success()
        );
        version.push(start.elapsed());
    }
    let run = median(to_request.clone());
    let peer = median(version);
    let fastest = to_request.iter().min().copied().unwrap_or_default();
    println!(
        "chock run, start to first request: median {:.2} ms (fastest {:.2} ms) over {RUNS} runs",
        ms(run),
        ms(fastest)
    );
    println!(
        "peer, chock --version start to exit: median {:.2} ms",
        ms(peer)
    );
    println!("ratio: {:.2}", run.as_secs_f64() / peer.as_secs_f64());
}
