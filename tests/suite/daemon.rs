//! `chock daemon` as a person (or systemd) runs it: listeners, the --port
//! refusal, a TCP port the system chose, socket activation through
//! LISTEN_FDS with readiness through NOTIFY_SOCKET, and a clean stop.

use std::io::{BufRead, BufReader};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use chock_control::{Address, Client};

use super::{activated_with_fd_3_closed, chock, chock_bin};

/// A daemon process that is stopped with SIGTERM when dropped.
struct Running {
    child: Child,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
}

impl Running {
    fn spawn(mut command: Command) -> Running {
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Running { child, lines }
    }

    fn next_address(&mut self) -> Address {
        let line = self.lines.next().expect("a 'listening on' line").unwrap();
        let address = line
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("{line}"));
        Address::parse(address).unwrap()
    }

    fn terminate(&mut self) -> std::process::ExitStatus {
        rustix::process::kill_process(
            rustix::process::Pid::from_child(&self.child),
            rustix::process::Signal::TERM,
        )
        .unwrap();
        self.child.wait().unwrap()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn port_without_host_is_refused_by_name() {
    let state = tempfile::tempdir().unwrap();
    let out = chock(state.path())
        .args(["daemon", "--port", "7000"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with("chock: --port was given without --host"),
        "{err}"
    );
    assert!(
        !state.path().join("daemon.sock").exists(),
        "no listener was opened"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn port_zero_prints_the_port_the_system_chose_and_it_answers() {
    let state = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let mut command = chock(state.path());
    command.args(["daemon", "--host", "127.0.0.1", "--port", "0"]);
    let mut daemon = Running::spawn(command);
    let unix = daemon.next_address();
    assert_eq!(unix, Address::Unix(state.path().join("daemon.sock")));
    let tcp = daemon.next_address();
    let Address::Tcp { host, port } = &tcp else {
        panic!("{tcp}")
    };
    assert_eq!(host, "127.0.0.1");
    assert_ne!(*port, 0);
    for address in [unix, tcp] {
        let rows = Client::new(address).list(project.path()).await.unwrap();
        assert!(rows.is_empty());
    }
    let mode = std::fs::metadata(state.path().join("daemon.sock")).unwrap();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode.permissions()) & 0o777,
        0o600
    );
    assert!(daemon.terminate().success());
    assert!(
        !state.path().join("daemon.sock").exists(),
        "a stopped daemon removes its socket"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn host_0_0_0_0_is_accepted_unguarded() {
    let state = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let mut command = chock(state.path());
    command.args(["daemon", "--host", "0.0.0.0", "--port", "0"]);
    let mut daemon = Running::spawn(command);
    daemon.next_address();
    let Address::Tcp { host, port } = daemon.next_address() else {
        panic!("a TCP address")
    };
    assert_eq!(host, "0.0.0.0");
    let loopback = Address::Tcp {
        host: "127.0.0.1".into(),
        port,
    };
    Client::new(loopback).list(project.path()).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_second_daemon_on_the_same_socket_is_refused() {
    let state = tempfile::tempdir().unwrap();
    let mut command = chock(state.path());
    command.arg("daemon");
    let mut first = Running::spawn(command);
    first.next_address();
    let out = chock(state.path()).arg("daemon").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("a daemon is already listening on unix:"),
        "{err}"
    );
    Client::new(Address::Unix(state.path().join("daemon.sock")))
        .ping()
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn socket_activation_takes_the_passed_fd_and_notifies_readiness() {
    let state = tempfile::tempdir().unwrap();
    let sockets = tempfile::tempdir().unwrap();
    let path = sockets.path().join("activated.sock");
    let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    let notify_path = sockets.path().join("notify.sock");
    let notify = std::os::unix::net::UnixDatagram::bind(&notify_path).unwrap();
    notify
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let fd = listener.as_raw_fd();
    // LISTEN_PID must be the daemon's own pid: the shell exports its pid and
    // then becomes the daemon with exec, keeping it.
    let mut command = Command::new("/bin/sh");
    command
        .args(["-c", r#"export LISTEN_PID=$$ LISTEN_FDS=1 LISTEN_FDNAMES=chock-daemon.socket; exec "$0" daemon"#])
        .arg(chock_bin())
        .env("CHOCK_STATE_DIR", state.path())
        .env("NOTIFY_SOCKET", &notify_path)
        .env_remove("CHOCK_DAEMON");
    // SAFETY: between fork and exec only dup2 runs, which is
    // async-signal-safe; it puts the listening socket at descriptor 3, as
    // systemd does, without the close-on-exec flag.
    unsafe {
        command.pre_exec(move || {
            if libc::dup2(fd, 3) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut daemon = Running::spawn(command);
    let mut buf = [0u8; 256];
    let n = notify.recv(&mut buf).unwrap();
    assert_eq!(String::from_utf8_lossy(&buf[..n]).trim_end(), "READY=1");
    assert_eq!(daemon.next_address(), Address::Unix(path.clone()));
    let project = tempfile::tempdir().unwrap();
    Client::new(Address::Unix(path.clone()))
        .list(project.path())
        .await
        .unwrap();
    assert!(
        !state.path().join("daemon.sock").exists(),
        "no socket of its own under activation"
    );
    assert!(daemon.terminate().success());
    assert!(path.exists(), "a socket systemd owns is left for systemd");
    drop(listener);
}

#[test]
fn daemon_help_explains_the_listeners() {
    let state = tempfile::tempdir().unwrap();
    let out = chock(state.path())
        .args(["daemon", "--help"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "--socket <PATH>",
        "--host <ADDR>",
        "--port <N>",
        "mode 0600",
    ] {
        assert!(text.contains(needle), "{needle} missing from:\n{text}");
    }
    assert!(!text.contains("run-exe"), "test-only flags stay hidden");
}

#[test]
fn socket_activation_refuses_a_passed_fd_that_is_not_open() {
    let state = tempfile::tempdir().unwrap();
    let out =
        activated_with_fd_3_closed(state.path(), "daemon", "LISTEN_FDNAMES=chock-daemon.socket");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr
            .contains("socket activation: chock-daemon.socket (fd 3 from LISTEN_FDS) is not open"),
        "{stderr}"
    );
    assert!(stderr.contains("check the .socket unit"), "{stderr}");
    assert!(out.stdout.is_empty(), "nothing announced");
    assert!(
        !state.path().join("daemon.sock").exists(),
        "the daemon falls back to no socket of its own"
    );
}
