//! `chock run`: wall time from starting the process to the first request
//! reaching the model (the target is under 20 ms). The peer measured
//! in the same run is `chock --version`, the cost of starting the binary at
//! all, so the ratio shows what a session adds before it talks to a model:
//! config parsing, provider setup, the log's creation and its first events.
//!
//! With `CHOCK_PERF_STRACE=<file>` set, one more run goes through
//! `strace -f -tt -e trace=process,execve -o <file>` (not counted), so the
//! trace shows which processes start before the request and when.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use chock_testkit::{FakeModel, Reply, TempProject, Turn, Wire};

const RUNS: usize = 30;

pub(super) fn chock_bin() -> PathBuf {
    let mut dir = std::env::current_exe().unwrap();
    dir.pop();
    if dir.ends_with("deps") {
        dir.pop();
    }
    dir.join("chock")
}

pub(super) fn chock(state: &Path) -> Command {
    let mut cmd = Command::new(chock_bin());
    cmd.env("CHOCK_STATE_DIR", state)
        .env("XDG_CONFIG_HOME", state.join("config"))
        .env_remove("CHOCK_LOG")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    cmd
}

/// A fake model answering `replies`, configured in `state` as `fake/m`.
pub(super) fn fake_model(state: &Path, replies: impl IntoIterator<Item = Reply>) -> FakeModel {
    let fake = FakeModel::with(replies);
    let dir = state.join("config/chock");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.zon"), fake.config_zon(Wire::OpenAi, "m")).unwrap();
    fake
}

/// `chock run <project> <message>`, which must succeed.
pub(super) fn run_ok(state: &Path, project: &Path, message: &str) {
    let status = chock(state)
        .arg("run")
        .arg(project)
        .arg(message)
        .status()
        .unwrap();
    assert!(status.success());
}

pub(super) fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

pub(super) fn ms(d: Duration) -> f64 {
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
        let fake = fake_model(state.path(), [Turn::text("ok").into()]);

        let start = Instant::now();
        run_ok(state.path(), project.path(), "hi");
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
    if let Some(out) = std::env::var_os("CHOCK_PERF_STRACE") {
        traced(&project, Path::new(&out));
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

/// One run under strace, its trace written to `out`, and when the fake
/// model saw the request, printed so the trace can be read against it.
fn traced(project: &TempProject, out: &Path) {
    let state = tempfile::tempdir().unwrap();
    let fake = fake_model(state.path(), [Turn::text("ok").into()]);
    let inner = chock(state.path());
    let mut cmd = Command::new("strace");
    cmd.args(["-f", "-tt", "-e", "trace=process,execve", "-o"])
        .arg(out)
        .arg(chock_bin())
        .args([std::ffi::OsStr::new("run"), project.path().as_os_str()])
        .arg("hi")
        .envs(inner.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .env_remove("CHOCK_LOG")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let start = Instant::now();
    assert!(cmd.status().unwrap().success());
    let first = fake.requests()[0].at;
    // strace -tt prints the time of day: the request's, to read beside it.
    let wall = std::time::SystemTime::now() - first.elapsed();
    let of_day = wall
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
        % 86_400.0;
    println!(
        "traced run: first request {:.2} ms after spawning strace, at {:02}:{:02}:{:09.6} UTC; trace in {}",
        ms(first.duration_since(start)),
        (of_day / 3600.0) as u64,
        (of_day % 3600.0 / 60.0) as u64,
        of_day % 60.0,
        out.display()
    );
}
