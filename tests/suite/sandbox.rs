//! `chock sandbox`: a person runs one command the way `run_command` does,
//! and gets the command's own exit status back.

use std::process::Stdio;
use std::time::{Duration, Instant};

use super::chock;
use super::kit::chock_out;

fn run(ws: &std::path::Path, env: &[(&str, &str)], args: &[&str]) -> std::process::Output {
    let state = tempfile::tempdir().unwrap();
    let mut cmd = chock(state.path());
    cmd.arg("sandbox")
        .arg("--workspace")
        .arg(ws)
        .arg("--")
        .args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

#[test]
fn the_commands_exit_code_is_chocks() {
    let ws = tempfile::tempdir().unwrap();
    let out = run(ws.path(), &[], &["sh", "-c", "echo hi > f; cat f; exit 3"]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "hi\n");
    assert!(ws.path().join("f").exists());
}

#[test]
fn a_signal_becomes_128_plus_and_is_named() {
    let ws = tempfile::tempdir().unwrap();
    let out = run(ws.path(), &[], &["sh", "-c", "kill -TERM $$"]);
    assert_eq!(out.status.code(), Some(143));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("SIGTERM") && err.contains("143"), "{err}");
}

#[test]
fn a_missing_command_exits_127_and_is_named() {
    let ws = tempfile::tempdir().unwrap();
    let out = run(ws.path(), &[], &["chock-no-such-program"]);
    assert_eq!(out.status.code(), Some(127));
    assert!(String::from_utf8_lossy(&out.stderr).contains("chock-no-such-program"));
}

#[test]
fn a_missing_workspace_exits_125_and_is_named() {
    let out = run(
        std::path::Path::new("/nonexistent/chock-ws"),
        &[],
        &["true"],
    );
    assert_eq!(out.status.code(), Some(125));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/chock-ws"));
}

#[test]
fn without_user_namespaces_it_runs_and_says_so() {
    let ws = tempfile::tempdir().unwrap();
    let out = run(
        ws.path(),
        &[("CHOCK_SANDBOX_FORCE", "no-userns")],
        &["true"],
    );
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("user namespaces unavailable"), "{err}");
}

#[test]
fn without_namespaces_or_landlock_it_refuses() {
    let ws = tempfile::tempdir().unwrap();
    let marker = ws.path().join("ran");
    let script = format!("touch {}", marker.display());
    let out = run(
        ws.path(),
        &[("CHOCK_SANDBOX_FORCE", "no-userns,no-landlock")],
        &["sh", "-c", &script],
    );
    assert_eq!(out.status.code(), Some(125));
    assert!(String::from_utf8_lossy(&out.stderr).contains("refusing"));
    assert!(!marker.exists(), "the command must not have run");
}

#[test]
fn the_command_dies_with_chock() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let secs = format!("9999.{}", std::process::id());
    let mut child = chock(state.path())
        .arg("sandbox")
        .arg("--workspace")
        .arg(ws.path())
        .args(["--", "sleep", &secs])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    // The sleep itself, not chock (whose own command line holds the same
    // words): the command must have started before chock is killed.
    let alive = || {
        std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
            std::fs::read(e.path().join("comm")).is_ok_and(|c| c == b"sleep\n")
                && std::fs::read(e.path().join("cmdline"))
                    .is_ok_and(|c| c.split(|b| *b == 0).any(|a| a == secs.as_bytes()))
        })
    };
    let end = Instant::now() + Duration::from_secs(60);
    while !alive() {
        assert!(Instant::now() < end, "the sandboxed sleep never started");
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let end = Instant::now() + Duration::from_secs(60);
    while alive() {
        assert!(Instant::now() < end, "the sandboxed sleep outlived chock");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The window between the clone and the child arming its parent-death
/// signal: chock killed there must not leave a child that goes on to build
/// the sandbox and run the command. `pause-child` holds the child in that
/// window long enough to kill chock deterministically.
#[test]
fn a_child_whose_chock_died_before_it_was_armed_runs_nothing() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let secs = format!("9998.{}", std::process::id());
    let script = format!("touch started; exec sleep {secs}");
    let mut child = chock(state.path())
        .env("CHOCK_SANDBOX_FORCE", "pause-child=800")
        .arg("sandbox")
        .arg("--workspace")
        .arg(ws.path())
        .args(["--", "sh", "-c", &script])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Both chock and its clone (the same program image, not yet executed
    // anything) carry the command line; two of them means the clone exists.
    let copies = || {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter(|e| {
                std::fs::read(e.path().join("cmdline"))
                    .is_ok_and(|c| c.split(|b| *b == 0).any(|a| a == script.as_bytes()))
            })
            .count()
    };
    let end = Instant::now() + Duration::from_secs(60);
    while copies() < 2 {
        assert!(Instant::now() < end, "the sandbox's child never appeared");
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let end = Instant::now() + Duration::from_secs(60);
    while copies() > 0 {
        assert!(
            Instant::now() < end,
            "the child outlived chock and is still running"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !ws.path().join("started").exists(),
        "the command ran after chock had died"
    );
}

#[test]
fn allow_jit_lets_node_run() {
    let Some(node) = ["/usr/bin/node", "/usr/local/bin/node"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
    else {
        println!("skipped: node is not installed (.ci/run installs it)");
        return;
    };
    let ws = tempfile::tempdir().unwrap();
    assert_ne!(
        run(ws.path(), &[], &[node, "-e", "1"]).status.code(),
        Some(0)
    );
    let state = tempfile::tempdir().unwrap();
    let out = chock(state.path())
        .args(["sandbox", "--allow-jit", "--workspace"])
        .arg(ws.path())
        .args(["--", node, "-e", "console.log(6*7)"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "42\n");
}

#[test]
fn help_explains_the_exit_statuses() {
    let state = tempfile::tempdir().unwrap();
    let out = chock_out(state.path(), &["sandbox", "--help"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("--allow-jit") && text.contains("127") && text.contains("128"),
        "{text}"
    );
}
