//! `chock serve` as a person (or systemd) runs it: the --port refusal, its
//! default socket, a TCP port the system chose, socket activation through
//! LISTEN_FDS with readiness through NOTIFY_SOCKET, and a clean stop.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::{activated_with_fd_3_closed, chock, chock_bin};

/// A serve process, killed when dropped.
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

    fn next_line(&mut self) -> String {
        self.lines.next().expect("a line from chock serve").unwrap()
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

/// `GET path` over a connected stream; the whole reply.
fn get<S: Read + Write>(mut stream: S, path: &str) -> String {
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: serve\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).unwrap();
    reply
}

#[test]
fn port_without_host_is_refused_by_name() {
    let state = tempfile::tempdir().unwrap();
    let out = chock(state.path())
        .args(["serve", "--port", "7000"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with("chock: --port was given without --host"),
        "{err}"
    );
    assert!(!state.path().join("serve.sock").exists());
}

#[test]
fn a_bad_daemon_address_is_refused_before_listening() {
    let state = tempfile::tempdir().unwrap();
    let out = chock(state.path())
        .args(["serve", "--daemon", "localhost"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("'localhost' is not a daemon address"), "{err}");
}

#[test]
fn serve_listens_on_serve_sock_and_says_which_daemon_it_serves() {
    let state = tempfile::tempdir().unwrap();
    let mut command = chock(state.path());
    command.arg("serve");
    let mut serve = Running::spawn(command);
    let socket = state.path().join("serve.sock");
    assert_eq!(
        serve.next_line(),
        format!("listening on unix:{}", socket.display())
    );
    assert_eq!(
        serve.next_line(),
        format!(
            "serving the daemon at unix:{}",
            state.path().join("daemon.sock").display()
        )
    );
    let reply = get(
        std::os::unix::net::UnixStream::connect(&socket).unwrap(),
        "/api/status",
    );
    // No daemon runs here: serve says so and keeps running.
    assert!(
        reply.starts_with("HTTP/1.1 503 Service Unavailable"),
        "{reply}"
    );
    assert!(reply.contains(r#""kind":"daemon_down""#), "{reply}");
    let page = get(
        std::os::unix::net::UnixStream::connect(&socket).unwrap(),
        "/",
    );
    assert!(page.starts_with("HTTP/1.1 200 OK"), "{page}");
    assert!(serve.terminate().success());
    assert!(!socket.exists(), "the socket is removed on a clean stop");
}

#[test]
fn host_with_port_zero_prints_the_port_the_system_chose() {
    let state = tempfile::tempdir().unwrap();
    let mut command = chock(state.path());
    command.args(["serve", "--host", "127.0.0.1", "--port", "0"]);
    let mut serve = Running::spawn(command);
    let line = serve.next_line();
    let address = line.strip_prefix("listening on 127.0.0.1:").expect(&line);
    let port: u16 = address.parse().unwrap();
    assert_ne!(port, 0);
    let page = get(
        std::net::TcpStream::connect(("127.0.0.1", port)).unwrap(),
        "/",
    );
    assert!(page.starts_with("HTTP/1.1 200 OK"), "{page}");
    assert!(
        !state.path().join("serve.sock").exists(),
        "--host swaps the socket for TCP"
    );
}

#[test]
fn socket_activation_takes_the_passed_fd_and_notifies_readiness() {
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
    // LISTEN_PID must be serve's own pid: the shell exports its pid and then
    // becomes serve with exec, keeping it.
    let mut command = Command::new("/bin/sh");
    command
        .args([
            "-c",
            r#"export LISTEN_PID=$$ LISTEN_FDS=1; exec "$0" serve"#,
        ])
        .arg(chock_bin())
        .env("CHOCK_STATE_DIR", state.path())
        .env("NOTIFY_SOCKET", &notify_path)
        .env_remove("CHOCK_DAEMON");
    // SAFETY: between fork and exec only dup2 or fcntl runs, both
    // async-signal-safe; it puts the listening socket at descriptor 3, as
    // systemd does, without the close-on-exec flag.
    unsafe {
        command.pre_exec(move || {
            // dup2 onto itself keeps close-on-exec, so clear it by hand.
            let failed = if fd == 3 {
                libc::fcntl(3, libc::F_SETFD, 0) == -1
            } else {
                libc::dup2(fd, 3) == -1
            };
            if failed {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut serve = Running::spawn(command);
    let mut buf = [0u8; 256];
    let n = notify.recv(&mut buf).unwrap();
    assert_eq!(String::from_utf8_lossy(&buf[..n]).trim_end(), "READY=1");
    assert_eq!(
        serve.next_line(),
        format!("listening on unix:{}", path.display())
    );
    let page = get(std::os::unix::net::UnixStream::connect(&path).unwrap(), "/");
    assert!(page.starts_with("HTTP/1.1 200 OK"), "{page}");
    assert!(
        !state.path().join("serve.sock").exists(),
        "no socket of its own under activation"
    );
    assert!(serve.terminate().success());
    assert!(path.exists(), "systemd's socket is systemd's to remove");
}

#[test]
fn socket_activation_refuses_a_passed_fd_that_is_not_open() {
    let state = tempfile::tempdir().unwrap();
    let out = activated_with_fd_3_closed(state.path(), "serve", "");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("socket activation: fd 3 from LISTEN_FDS is not open"),
        "{stderr}"
    );
    assert!(stderr.contains("check the .socket unit"), "{stderr}");
    assert!(out.stdout.is_empty(), "nothing announced");
    assert!(
        !state.path().join("serve.sock").exists(),
        "serve falls back to no socket of its own"
    );
}
