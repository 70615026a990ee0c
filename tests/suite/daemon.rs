//! `chock daemon` as a person (or systemd) runs it: listeners, the --port
//! refusal, a TCP port the system chose, socket activation through
//! LISTEN_FDS with readiness through NOTIFY_SOCKET, and a clean stop.

use chock_control::{Address, Client};

use super::kit::{Running, chock_out};
use super::{Activation, assert_closed_fd_3_refused, assert_port_without_host_refused, chock};

#[test]
fn port_without_host_is_refused_by_name() {
    assert_port_without_host_refused("daemon", "daemon.sock");
}

/// `chock daemon --host <host> --port 0` in a fresh state dir, and an empty
/// project dir to list.
fn on_tcp(host: &str) -> (tempfile::TempDir, tempfile::TempDir, Running) {
    let state = tempfile::tempdir().unwrap();
    let mut command = chock(state.path());
    command.args(["daemon", "--host", host, "--port", "0"]);
    let daemon = Running::spawn(command);
    (state, tempfile::tempdir().unwrap(), daemon)
}

#[tokio::test(flavor = "multi_thread")]
async fn port_zero_prints_the_port_the_system_chose_and_it_answers() {
    let (state, project, mut daemon) = on_tcp("127.0.0.1");
    let unix = daemon.address();
    assert_eq!(unix, Address::Unix(state.path().join("daemon.sock")));
    let tcp = daemon.address();
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
    let (_state, project, mut daemon) = on_tcp("0.0.0.0");
    daemon.address();
    let Address::Tcp { host, port } = daemon.address() else {
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
    first.address();
    let out = chock_out(state.path(), &["daemon"]);
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
    let activation = Activation::new();
    let path = activation.path.clone();
    let mut daemon = activation.start(state.path(), "daemon", "LISTEN_FDNAMES=chock-daemon.socket");
    activation.assert_ready();
    assert_eq!(daemon.address(), Address::Unix(path.clone()));
    let project = tempfile::tempdir().unwrap();
    Client::new(Address::Unix(path.clone()))
        .list(project.path())
        .await
        .unwrap();
    activation.assert_stops_leaving_the_socket(daemon, state.path(), "daemon.sock");
}

#[test]
fn daemon_help_explains_the_listeners() {
    let state = tempfile::tempdir().unwrap();
    let out = chock_out(state.path(), &["daemon", "--help"]);
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
    assert_closed_fd_3_refused(
        "daemon",
        "LISTEN_FDNAMES=chock-daemon.socket",
        "socket activation: chock-daemon.socket (fd 3 from LISTEN_FDS) is not open",
        "daemon.sock",
    );
}
