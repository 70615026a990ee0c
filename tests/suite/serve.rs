//! `chock serve` as a person (or systemd) runs it: the --port refusal, its
//! default socket, a TCP port the system chose, socket activation through
//! LISTEN_FDS with readiness through NOTIFY_SOCKET, and a clean stop.

use std::io::{Read, Write};

use super::kit::{Running, chock_out};
use super::{Activation, assert_closed_fd_3_refused, assert_port_without_host_refused, chock};

/// `GET path` over a connected stream; the whole reply.
fn get<S: Read + Write>(stream: S, path: &str) -> String {
    get_as(stream, path, "serve")
}

/// [`get`] naming `host` in the request's Host header.
fn get_as<S: Read + Write>(mut stream: S, path: &str, host: &str) -> String {
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).unwrap();
    reply
}

#[test]
fn port_without_host_is_refused_by_name() {
    assert_port_without_host_refused("serve", "serve.sock");
}

#[test]
fn a_bad_daemon_address_is_refused_before_listening() {
    let state = tempfile::tempdir().unwrap();
    let out = chock_out(state.path(), &["serve", "--daemon", "localhost"]);
    // A --daemon that is not an address is a command line that does not
    // parse: exit 2, as docs/cli.md says.
    assert_eq!(out.status.code(), Some(2));
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
    let page = get_as(
        std::net::TcpStream::connect(("127.0.0.1", port)).unwrap(),
        "/",
        &format!("127.0.0.1:{port}"),
    );
    assert!(page.starts_with("HTTP/1.1 200 OK"), "{page}");
    // A name it was not started for is refused (DNS rebinding).
    let refused = get(
        std::net::TcpStream::connect(("127.0.0.1", port)).unwrap(),
        "/",
    );
    assert!(refused.starts_with("HTTP/1.1 403"), "{refused}");
    assert!(
        !state.path().join("serve.sock").exists(),
        "--host swaps the socket for TCP"
    );
}

#[test]
fn socket_activation_takes_the_passed_fd_and_notifies_readiness() {
    let state = tempfile::tempdir().unwrap();
    let activation = Activation::new();
    let path = &activation.path;
    let mut serve = activation.start(state.path(), "serve", "");
    activation.assert_ready();
    assert_eq!(
        serve.next_line(),
        format!("listening on unix:{}", path.display())
    );
    let page = get(std::os::unix::net::UnixStream::connect(path).unwrap(), "/");
    assert!(page.starts_with("HTTP/1.1 200 OK"), "{page}");
    activation.assert_stops_leaving_the_socket(serve, state.path(), "serve.sock");
}

#[test]
fn socket_activation_refuses_a_passed_fd_that_is_not_open() {
    assert_closed_fd_3_refused(
        "serve",
        "",
        "socket activation: fd 3 from LISTEN_FDS is not open",
        "serve.sock",
    );
}
