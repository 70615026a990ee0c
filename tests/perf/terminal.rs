//! The interactive terminal, as a person waits on it (docs/performance.md,
//! "The terminal"): a keystroke's echo at the prompt against the kernel's
//! own echo (`cat` on the same kind of pseudo-terminal), the model's token
//! from its write to the socket to its appearance on the screen, against a
//! one-shot run's plain write to stdout, and the session's peak resident
//! memory (VmHWM) beside the one-shot run's. `tests/pty/latency.py` drives
//! the pseudo-terminal and plays the model; set `CHOCK_PEER` to another
//! build's `chock` (the same commit without the interface) to add its
//! one-shot run's VmHWM.

use std::path::Path;
use std::process::Command;

use chock_testkit::TempProject;

use super::first_request::chock_bin;

/// One mode of the harness: its times (ms), sorted, and its VmHWM (KiB).
fn measure(program: &Path, mode: &str, project: &Path) -> (Vec<f64>, Option<u64>) {
    let state = tempfile::tempdir().unwrap();
    let harness = Path::new(env!("CARGO_MANIFEST_DIR")).join("pty/latency.py");
    let out = Command::new("python3")
        .arg(harness)
        .arg(state.path())
        .arg(project)
        .arg(program)
        .arg(mode)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut times: Vec<f64> = result["ms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_f64().unwrap())
        .collect();
    times.sort_by(f64::total_cmp);
    (times, result["hwm_kib"].as_u64())
}

fn summary(what: &str, times: &[f64]) -> f64 {
    let at = |q: f64| times[((times.len() as f64 * q) as usize).min(times.len() - 1)];
    println!(
        "{what:<34} n={:<4} median {:.3} ms  p99 {:.3} ms  max {:.3} ms",
        times.len(),
        at(0.5),
        at(0.99),
        times[times.len() - 1]
    );
    at(0.5)
}

#[test]
#[ignore = "a measurement; run by hand, see docs/performance.md"]
fn keystroke_echo_first_token_and_memory() {
    let project = TempProject::git();
    let chock = chock_bin();
    let (echo, _) = measure(&chock, "echo", project.path());
    let (kernel, _) = measure(&chock, "kernel", project.path());
    let (token, interactive) = measure(&chock, "token", project.path());
    let (plain, one_shot) = measure(&chock, "oneshot", project.path());
    let e = summary("keystroke echo, chock's prompt", &echo);
    let k = summary("keystroke echo, the kernel (cat)", &kernel);
    let t = summary("token to screen, interactive", &token);
    let p = summary("token to screen, one-shot", &plain);
    println!(
        "ratios of medians: echo {:.2}x the kernel's, token {:.2}x the one-shot's",
        e / k,
        t / p
    );
    println!("VmHWM: interactive {interactive:?} KiB, one-shot {one_shot:?} KiB");
    if let Some(peer) = std::env::var_os("CHOCK_PEER") {
        let (_, peer_hwm) = measure(Path::new(&peer), "oneshot", project.path());
        println!("VmHWM: the peer's one-shot {peer_hwm:?} KiB");
    }
}
