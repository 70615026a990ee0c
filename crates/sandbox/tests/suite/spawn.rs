//! Spawning and waiting: exit codes, signals by name, bad input, piped
//! stdio, pidfd readiness under a current-thread tokio runtime, signal
//! forwarding, and jit for Node.

use std::io::Read;
use std::time::{Duration, Instant};

use chock_sandbox::{ExitStatus, Sandbox, SandboxSpec, SpawnError, SpecError};

use super::Fx;

#[test]
fn the_exit_code_comes_through() {
    let fx = Fx::new();
    let st = fx
        .sandbox()
        .spawn(&["sh", "-c", "exit 7"])
        .unwrap()
        .wait()
        .unwrap();
    assert_eq!(st, ExitStatus::Code(7));
}

#[test]
fn a_signal_is_reported_by_name() {
    let fx = Fx::new();
    let st = fx
        .sandbox()
        .spawn(&["sh", "-c", "kill -SEGV $$"])
        .unwrap()
        .wait()
        .unwrap();
    assert_eq!(st, ExitStatus::Signal(libc::SIGSEGV));
    assert_eq!(st.to_string(), "killed by SIGSEGV (exit status 139)");
}

#[test]
fn a_missing_workspace_is_refused_by_name() {
    let err = Sandbox::new(SandboxSpec::new("/nonexistent/chock-workspace")).unwrap_err();
    assert!(matches!(err, SpecError::WorkspaceMissing { .. }));
    assert!(
        err.to_string().contains("/nonexistent/chock-workspace"),
        "{err}"
    );
}

#[test]
fn a_missing_command_is_reported_with_status_127() {
    let fx = Fx::new();
    let err = fx.sandbox().spawn(&["chock-no-such-program"]).unwrap_err();
    assert!(matches!(err, SpawnError::NotFound { .. }), "{err:?}");
    assert!(
        err.to_string().contains("chock-no-such-program") && err.to_string().contains("127"),
        "{err}"
    );
}

#[test]
fn a_file_that_is_not_executable_is_reported_with_status_126() {
    let fx = Fx::new();
    let path = fx.ws.join("notexec");
    std::fs::write(&path, "#!/bin/sh\n").unwrap();
    let err = fx.sandbox().spawn(&[path.to_str().unwrap()]).unwrap_err();
    assert!(matches!(err, SpawnError::NotExecutable { .. }), "{err:?}");
    assert!(err.to_string().contains("126"), "{err}");
}

#[test]
fn piped_stdout_carries_the_output_and_the_workspace_is_writable() {
    let fx = Fx::new();
    let mut child = fx
        .sandbox()
        .spawn(&["sh", "-c", "echo hello > out.txt; cat out.txt; pwd"])
        .unwrap();
    let mut out = String::new();
    std::fs::File::from(child.stdout.take().unwrap())
        .read_to_string(&mut out)
        .unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(out, format!("hello\n{}\n", fx.ws.display()));
    assert_eq!(
        std::fs::read_to_string(fx.ws.join("out.txt")).unwrap(),
        "hello\n"
    );
}

#[test]
fn kill_ends_the_whole_sandbox_and_wait_returns() {
    let fx = Fx::new();
    let mut child = fx.sandbox().spawn(&["sleep", "60"]).unwrap();
    assert!(child.try_wait().unwrap().is_none());
    child.kill().unwrap();
    let start = Instant::now();
    assert_eq!(child.wait().unwrap(), ExitStatus::Signal(libc::SIGKILL));
    assert!(start.elapsed() < Duration::from_secs(5));
}

#[test]
fn sigterm_is_forwarded_to_the_command() {
    let fx = Fx::new();
    let mut child = fx.sandbox().spawn(&["sleep", "60"]).unwrap();
    // Pid 1 installs its forwarding handlers right after forking the
    // command; retry until the command itself reports the signal.
    child.signal(libc::SIGTERM).unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    let st = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        assert!(Instant::now() < deadline, "sleep never ended");
        child.signal(libc::SIGTERM).unwrap();
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(st, ExitStatus::Signal(libc::SIGTERM));
}

#[test]
fn the_pidfd_can_be_awaited_on_a_current_thread_runtime() {
    let fx = Fx::new();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let sandbox = fx.sandbox();
    let st = rt.block_on(async {
        let child = sandbox.spawn(&["sh", "-c", "sleep 0.1; exit 3"]).unwrap();
        // SAFETY: the pidfd stays open and the same for the child's lifetime.
        let fd = unsafe { tokio::io::unix::AsyncFd::register(child) }
            .map_err(|e| e.to_string())
            .unwrap();
        let mut guard = fd.readable().await.unwrap();
        guard.clear_ready();
        drop(guard);
        fd.into_inner().try_wait().unwrap()
    });
    assert_eq!(st, Some(ExitStatus::Code(3)));
}

#[test]
fn the_report_names_every_layer() {
    let fx = Fx::new();
    let child = fx.sandbox().spawn(&["true"]).unwrap();
    let r = child.report().clone();
    assert!(r.namespaces && r.seccomp && !r.jit, "{r}");
    assert!(
        r.is_complete() || matches!(r.landlock, chock_sandbox::LandlockState::Partial { .. }),
        "{r}"
    );
}

fn node() -> Option<&'static str> {
    ["/usr/bin/node", "/usr/local/bin/node"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
}

#[test]
fn node_needs_jit() {
    let Some(node) = node() else {
        println!("skipped: node is not installed (.ci/run installs it)");
        return;
    };
    let fx = Fx::new();
    let st = fx
        .sandbox()
        .spawn(&[node, "-e", "1"])
        .unwrap()
        .wait()
        .unwrap();
    assert!(!st.success(), "node must fail without jit: {st}");

    let mut spec = fx.spec();
    spec.jit = true;
    let st = Sandbox::new(spec)
        .unwrap()
        .spawn(&[node, "-e", "1"])
        .unwrap()
        .wait()
        .unwrap();
    assert!(st.success(), "node must run with jit: {st}");
}

#[test]
fn wait_command_reports_before_teardown_and_wait_agrees() {
    let fx = Fx::new();
    let mut child = fx.sandbox().spawn(&["sh", "-c", "exit 5"]).unwrap();
    assert_eq!(child.wait_command().unwrap(), ExitStatus::Code(5));
    assert_eq!(child.wait().unwrap(), ExitStatus::Code(5));

    let mut child = fx.sandbox().spawn(&["sleep", "60"]).unwrap();
    child.kill().unwrap();
    assert_eq!(
        child.wait_command().unwrap(),
        ExitStatus::Signal(libc::SIGKILL)
    );
}
