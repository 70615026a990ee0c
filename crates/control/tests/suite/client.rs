//! The client against a scripted peer on a real unix socket: the greeting is
//! checked before anything else is sent, and every failure is named.

use std::time::Duration;

use chock_control::{Address, Client, ClientError, GreetingError};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixListener;

/// Accepts one connection, reads the greeting, answers `reply`, and returns
/// every byte the client sent after the greeting.
async fn scripted(
    reply: &'static str,
) -> (
    tempfile::TempDir,
    Address,
    tokio::task::JoinHandle<(String, String)>,
) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d.sock");
    let listener = UnixListener::bind(&path).unwrap();
    let task = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let mut reader = BufReader::new(stream);
        let mut greeting = String::new();
        reader.read_line(&mut greeting).await.unwrap();
        reader.get_mut().write_all(reply.as_bytes()).await.unwrap();
        let mut rest = String::new();
        // The client closes after a refused greeting, so this ends at once
        // with nothing read; a client that wrongly sent its verb is caught.
        let _ = tokio::time::timeout(Duration::from_secs(5), reader.read_line(&mut rest)).await;
        (greeting, rest)
    });
    (dir, Address::Unix(path), task)
}

/// The client's `list /p` against a [`scripted`] peer answering `reply`:
/// what the client got, and the peer's task.
async fn list_against(
    reply: &'static str,
) -> (
    Result<Vec<chock_control::RowLine>, ClientError>,
    tokio::task::JoinHandle<(String, String)>,
) {
    let (_dir, address, task) = scripted(reply).await;
    let listed = Client::new(address).list(std::path::Path::new("/p")).await;
    (listed, task)
}

#[tokio::test]
async fn a_daemon_with_another_number_is_refused_and_asked_nothing() {
    let (listed, task) = list_against("ok chock-control 9\n").await;
    let err = listed.unwrap_err();
    assert!(
        matches!(
            &err,
            ClientError::Greeting {
                error: GreetingError::Mismatch {
                    daemon: 9,
                    client: 1
                },
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .contains("the daemon speaks chock-control 9 and this client chock-control 1"),
        "{err}"
    );
    let (greeting, rest) = task.await.unwrap();
    assert_eq!(greeting, "hello chock-control 1\n");
    assert_eq!(rest, "", "nothing may follow a greeting that did not match");
}

#[tokio::test]
async fn a_matching_daemon_receives_the_verb() {
    let (listed, task) = list_against("ok chock-control 1\n").await;
    let rows = listed.unwrap();
    assert!(rows.is_empty());
    let (_, rest) = task.await.unwrap();
    assert_eq!(rest, "list /p\n");
}

#[tokio::test]
async fn no_daemon_is_named_with_the_way_to_start_one() {
    let dir = tempfile::tempdir().unwrap();
    let address = Address::Unix(dir.path().join("absent.sock"));
    let err = Client::new(address.clone()).ping().await.unwrap_err();
    assert!(matches!(err, ClientError::NotListening { .. }), "{err:?}");
    let text = err.to_string();
    assert!(
        text.starts_with(&format!("no daemon is listening on {address}")),
        "{text}"
    );
    assert!(text.ends_with("start one with 'chock daemon'"), "{text}");
}

#[tokio::test]
async fn a_silent_peer_times_out() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d.sock");
    let _listener = UnixListener::bind(&path).unwrap();
    let err = Client::new(Address::Unix(path))
        .with_timeout(Duration::from_millis(200))
        .ping()
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::Timeout { .. }), "{err:?}");
}
