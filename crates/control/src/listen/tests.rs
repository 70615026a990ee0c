//! Claiming activation descriptors and binding unix sockets, with the
//! refusals each can meet.

use std::os::fd::IntoRawFd;

use super::*;

#[test]
fn a_descriptor_that_is_not_open_is_refused_untouched() {
    // Descriptors are handed out lowest first, so one this high is never
    // open in a test process.
    let err = claim_fd(1_000_000, "chock.socket").unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with(
            "socket activation: chock.socket (fd 1000000 from LISTEN_FDS) is not open"
        ),
        "{text}"
    );
    assert!(text.ends_with("check the .socket unit"), "{text}");
}

#[test]
fn a_socket_that_is_not_listening_is_refused() {
    let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    let err = claim_fd(a.into_raw_fd(), "fd 9").unwrap_err();
    assert_eq!(
        err.to_string(),
        "socket activation: fd 9: is not a listening socket; check the .socket unit"
    );
}

#[test]
fn a_file_is_refused_as_not_a_socket() {
    let file = tempfile::tempfile().unwrap();
    let err = claim_fd(file.into_raw_fd(), "fd 5").unwrap_err();
    assert!(
        err.to_string()
            .starts_with("socket activation: fd 5: not a socket"),
        "{err}"
    );
}

#[tokio::test]
async fn a_listening_unix_socket_is_claimed_with_its_path_and_adopted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.sock");
    let std = std::os::unix::net::UnixListener::bind(&path).unwrap();
    let claimed = claim_fd(std.into_raw_fd(), "fd 3").unwrap();
    let listener = Listener::adopt(claimed).unwrap();
    assert_eq!(listener.address(), Some(Address::Unix(path.clone())));
    assert_eq!(listener.created_path(), None, "systemd's file, not ours");
    let _client = tokio::net::UnixStream::connect(&path).await.unwrap();
}

#[tokio::test]
async fn a_listening_tcp_socket_is_claimed_and_adopted() {
    let std = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = std.local_addr().unwrap().port();
    let claimed = claim_fd(std.into_raw_fd(), "web").unwrap();
    let listener = Listener::adopt(claimed).unwrap();
    assert_eq!(
        listener.address(),
        Some(Address::Tcp {
            host: "127.0.0.1".into(),
            port
        })
    );
}

#[tokio::test]
async fn bind_unix_replaces_a_stale_socket_and_refuses_a_live_one_or_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run/x.sock");
    let first = bind_unix(&path).unwrap();
    assert_eq!(first.created_path(), Some(path.as_path()));
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert!(matches!(
        bind_unix(&path),
        Err(ListenError::AlreadyListening(p)) if p == path
    ));
    drop(first);
    let again = bind_unix(&path).unwrap();
    drop(again);
    let file = dir.path().join("file");
    std::fs::write(&file, "keep me").unwrap();
    assert!(matches!(bind_unix(&file), Err(ListenError::NotASocket(_))));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep me");
}
