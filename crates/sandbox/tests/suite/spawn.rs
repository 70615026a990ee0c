//! Spawning and waiting: exit codes, signals by name, bad input, piped
//! stdio, pidfd readiness under a current-thread tokio runtime, signal
//! forwarding, and jit for Node.

use std::io::Read;
use std::time::{Duration, Instant};

use chock_sandbox::{ExitStatus, Sandbox, SandboxSpec, SpawnError, SpecError};

use super::Fx;

/// Runs `argv` in `sandbox` to its end; how it ended.
fn run_to_end(sandbox: &Sandbox, argv: &[&str]) -> ExitStatus {
    sandbox.spawn(argv).unwrap().wait().unwrap()
}

#[test]
fn the_exit_code_comes_through() {
    let fx = Fx::new();
    let st = run_to_end(&fx.sandbox(), &["sh", "-c", "exit 7"]);
    assert_eq!(st, ExitStatus::Code(7));
}

#[test]
fn a_signal_is_reported_by_name() {
    let fx = Fx::new();
    let st = run_to_end(&fx.sandbox(), &["sh", "-c", "kill -SEGV $$"]);
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

/// Whatever this process ignores or catches, the command starts with every
/// signal at its default: Rust's ignored SIGPIPE, a handler, and an unusual
/// real-time signal the caller happens to ignore.
#[test]
fn the_command_starts_with_every_signal_at_its_default() {
    extern "C" fn handler(_: libc::c_int) {}
    // SAFETY: changing dispositions in this test's own process (nextest
    // runs each test in a process of its own).
    unsafe {
        libc::signal(libc::SIGRTMIN() + 5, libc::SIG_IGN);
        libc::signal(
            libc::SIGUSR1,
            handler as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
    }
    let fx = Fx::new();
    let mut child = fx.sandbox().spawn(&["cat", "/proc/self/status"]).unwrap();
    let mut out = String::new();
    std::fs::File::from(child.stdout.take().unwrap())
        .read_to_string(&mut out)
        .unwrap();
    assert!(child.wait().unwrap().success());
    let masks: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("SigIgn:") || l.starts_with("SigCgt:"))
        .collect();
    assert_eq!(
        masks,
        ["SigIgn:\t0000000000000000", "SigCgt:\t0000000000000000"]
    );
}

/// What the new root's `/etc` and `/dev` rules grant (one landlock rule
/// each, covering the binds beneath them): the bound `/etc` directories and
/// large files read, the copied small files read, the device nodes read and
/// written; and what they do not: nothing new in either directory.
#[test]
fn the_etc_and_dev_of_the_new_root_work_and_stay_closed() {
    let fx = Fx::new();
    let script = r#"
        set -e
        for f in /etc/passwd /etc/ld.so.cache /etc/ssl/certs/ca-certificates.crt; do
            if [ -e "$f" ]; then head -c 1 "$f" > /dev/null; fi
        done
        ls /etc/alternatives > /dev/null
        head -c 8 /dev/urandom | wc -c
        head -c 8 /dev/zero | wc -c
        echo gone > /dev/null
        if echo x > /etc/new 2>/dev/null; then echo wrote-etc; fi
        if echo x > /dev/new 2>/dev/null; then echo wrote-dev; fi
        if echo x > /etc/passwd 2>/dev/null; then echo wrote-passwd; fi
        echo done
    "#;
    let mut child = fx.sandbox().spawn(&["sh", "-c", script]).unwrap();
    let mut out = String::new();
    std::fs::File::from(child.stdout.take().unwrap())
        .read_to_string(&mut out)
        .unwrap();
    assert!(child.wait().unwrap().success(), "{out}");
    assert_eq!(out, "8\n8\ndone\n");
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
    let st = run_to_end(&fx.sandbox(), &[node, "-e", "1"]);
    assert!(!st.success(), "node must fail without jit: {st}");

    let mut spec = fx.spec();
    spec.jit = true;
    let st = run_to_end(&Sandbox::new(spec).unwrap(), &[node, "-e", "1"]);
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

/// The network namespace comes from pid 1's helper, or where there is none
/// from pid 1 itself: fresh either way, with a working loopback, and the
/// host's loopback out of reach.
#[test]
fn the_network_namespace_is_fresh_with_its_loopback_up_by_either_path() {
    let fx = Fx::new();
    let host = fx.outside(&["netns"]).unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    for itself in [false, true] {
        let mut s = fx.sandbox();
        s.force_netns(itself, false);
        let inside = fx.inside_of(&s, &["netns"]).unwrap();
        assert!(inside.starts_with("net:["), "{inside}");
        assert_ne!(inside, host, "pid 1 made it itself: {itself}");
        assert_eq!(
            fx.inside_of(&s, &["tcp", &addr]),
            Err(libc::ECONNREFUSED),
            "pid 1 made it itself: {itself}"
        );
    }
}

/// The network namespace's helper is gone before the command starts: the
/// command sees pid 1 and itself, nothing else.
#[test]
fn the_command_sees_only_pid_1_and_itself() {
    let fx = Fx::new();
    for itself in [false, true] {
        let mut s = fx.sandbox();
        s.force_netns(itself, false);
        let seen = fx.inside_of(&s, &["pids"]).unwrap();
        let own = seen
            .split("(self ")
            .nth(1)
            .and_then(|p| p.strip_suffix(')'))
            .unwrap();
        assert_eq!(seen, format!("1 {own} (self {own})"), "helper: {}", !itself);
    }
}

/// On one CPU there is nothing to run the helper beside pid 1: pid 1 makes
/// the network namespace itself, and the command is pid 2.
#[test]
fn on_one_cpu_pid_1_makes_the_network_namespace_itself() {
    let fx = Fx::new();
    let s = fx.sandbox();
    // SAFETY: this test's process (nextest runs each test alone) pins
    // itself to its first allowed CPU.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        assert_eq!(
            libc::sched_getaffinity(0, size_of::<libc::cpu_set_t>(), &mut set),
            0
        );
        let first = (0..libc::CPU_SETSIZE as usize)
            .find(|&c| libc::CPU_ISSET(c, &set))
            .unwrap();
        let mut one: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(first, &mut one);
        assert_eq!(
            libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &one),
            0
        );
    }
    let seen = fx.inside_of(&s, &["pids"]).unwrap();
    assert_eq!(seen, "1 2 (self 2)");
    let inside = fx.inside_of(&s, &["netns"]).unwrap();
    assert_ne!(inside, fx.outside(&["netns"]).unwrap());
}

/// A network namespace refused (an LSM rule, a sysctl) is a user-namespace
/// sandbox that cannot be built: the command runs in the degraded mode,
/// which says so, as when user namespaces are refused.
#[test]
fn a_refused_network_namespace_degrades_and_says_so() {
    let fx = Fx::new();
    let mut s = fx.sandbox();
    s.force_netns(false, true);
    let mut child = s.spawn(&[fx.probe.to_str().unwrap(), "euid"]).unwrap();
    let r = child.report().clone();
    assert!(!r.namespaces, "{r}");
    assert!(
        r.degraded.iter().any(|d| d.starts_with(
            "network namespaces refused by the kernel: running with landlock and seccomp only"
        )),
        "{r}"
    );
    assert_eq!(child.wait().unwrap(), ExitStatus::Code(0));
}
