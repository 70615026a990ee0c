//! The session's side of the exchange against the client library, over a
//! real socket on one `current_thread` runtime, as the session runs it.

use std::time::Duration;

use chock_control::handover::{HandoverClient, HandoverError, Holdings, SessionLine};

use super::*;

const WAIT: Duration = Duration::from_secs(5);

use chock_testkit::runtime;

/// Runs `test` with the socket served beside it, as `drive` does.
fn served(test: impl AsyncFnOnce(&HandoverSocket, &Path)) {
    runtime().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("handover.sock");
        let socket = HandoverSocket::bind(&path).unwrap();
        tokio::select! {
            () = test(&socket, &path) => {}
            never = socket.serve() => match never {},
        }
        drop(socket);
        assert!(!path.exists(), "the socket file is removed with the socket");
    });
}

async fn until_asked(socket: &HandoverSocket) {
    tokio::time::timeout(WAIT, async {
        while !socket.asked() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the ask is taken");
}

/// A client that has asked, once the session has taken the ask.
async fn asking(socket: &HandoverSocket, path: &Path) -> HandoverClient {
    let client = HandoverClient::ask(path).await.unwrap();
    until_asked(socket).await;
    client
}

/// The session at a boundary with nothing held while `client` reads its
/// `ready` and confirms: the boundary and the `ready` line.
async fn confirmed_at_boundary(
    socket: &HandoverSocket,
    client: &mut HandoverClient,
    last_event: u64,
    workspace: Option<&Path>,
) -> (Boundary, SessionLine) {
    let client_side = async {
        let ready = client.next(WAIT).await.unwrap();
        assert!(matches!(ready, SessionLine::Ready { .. }), "{ready:?}");
        client.confirm().await.unwrap();
        ready
    };
    tokio::join!(socket.at_boundary(NONE, last_event, workspace), client_side)
}

const NONE: Holdings = Holdings {
    commands: 0,
    subagents: 0,
};

const ONE_COMMAND: Holdings = Holdings {
    commands: 1,
    subagents: 0,
};

#[test]
fn an_ask_is_answered_ready_at_the_boundary_and_a_confirm_hands_over() {
    served(async |socket, path| {
        assert_eq!(chock_testkit::permission_bits(path), 0o600);
        assert_eq!(
            socket.at_boundary(NONE, 3, None).await,
            Boundary::Continue,
            "no ask, no handover"
        );
        let mut client = asking(socket, path).await;
        let (boundary, ready) =
            confirmed_at_boundary(socket, &mut client, 7, Some(Path::new("/w"))).await;
        assert_eq!(
            ready,
            SessionLine::Ready {
                last_event: 7,
                workspace: Some("/w".into())
            }
        );
        assert_eq!(boundary, Boundary::HandOver);
        socket.take_confirmed().unwrap().done(9).await;
        assert_eq!(
            client.next(WAIT).await.unwrap(),
            SessionLine::HandedOver { ending: 9 }
        );
    });
}

#[test]
fn background_work_is_named_once_and_the_ask_stays_open_until_it_ends() {
    served(async |socket, path| {
        let mut client = asking(socket, path).await;
        assert_eq!(
            socket.at_boundary(ONE_COMMAND, 5, None).await,
            Boundary::Continue
        );
        assert_eq!(
            client.next(WAIT).await.unwrap(),
            SessionLine::Holding(ONE_COMMAND)
        );
        // The same count again is not said again, and the ask stays open.
        assert_eq!(
            socket.at_boundary(ONE_COMMAND, 8, None).await,
            Boundary::Continue
        );
        assert!(socket.asked());
        let (boundary, ready) = confirmed_at_boundary(socket, &mut client, 11, None).await;
        assert!(matches!(ready, SessionLine::Ready { last_event: 11, .. }));
        assert_eq!(boundary, Boundary::HandOver);
    });
}

#[test]
fn a_client_that_leaves_before_confirming_changes_nothing_and_a_new_ask_is_taken() {
    served(async |socket, path| {
        let mut client = asking(socket, path).await;
        let client_side = async {
            assert!(matches!(
                client.next(WAIT).await.unwrap(),
                SessionLine::Ready { .. }
            ));
            drop(client); // Ctrl-C between ready and confirm
        };
        let (boundary, ()) = tokio::join!(socket.at_boundary(NONE, 4, None), client_side);
        assert_eq!(boundary, Boundary::Continue);
        assert!(!socket.asked());
        assert!(socket.take_confirmed().is_none());

        // A client that went away while waiting for the boundary does not
        // block the next one.
        let gone = asking(socket, path).await;
        drop(gone);
        let mut next = HandoverClient::ask(path).await.unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        let (boundary, _) = confirmed_at_boundary(socket, &mut next, 6, None).await;
        assert_eq!(boundary, Boundary::HandOver);
    });
}

#[test]
fn a_second_asker_and_a_malformed_ask_are_refused_by_name() {
    served(async |socket, path| {
        let _first = asking(socket, path).await;
        let mut second = HandoverClient::ask(path).await.unwrap();
        match second.next(WAIT).await.unwrap() {
            SessionLine::Error(message) => {
                assert!(message.contains("already asking"), "{message}");
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
        let mut raw = UnixStream::connect(path).await.unwrap();
        tokio::io::AsyncWriteExt::write_all(&mut raw, b"give it to me\n")
            .await
            .unwrap();
        let mut reply = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut raw, &mut reply)
            .await
            .unwrap();
        assert_eq!(
            reply,
            "error malformed ask: expected 'handover', got 'give it to me'\n"
        );
        assert!(socket.asked(), "the first ask is still open");
    });
}

#[test]
fn a_session_that_never_reaches_a_boundary_lets_the_client_time_out() {
    served(async |_socket, path| {
        let mut client = HandoverClient::ask(path).await.unwrap();
        let err = client.next(Duration::from_millis(200)).await.unwrap_err();
        assert!(matches!(err, HandoverError::Timeout { .. }), "{err}");
    });
}

#[test]
fn the_last_boundary_waits_for_background_work_while_the_client_asks() {
    served(async |socket, path| {
        let mut client = asking(socket, path).await;
        // The work is recorded ended after three looks.
        let looks = Cell::new(0);
        let held = || {
            looks.set(looks.get() + 1);
            Some((if looks.get() > 3 { NONE } else { ONE_COMMAND }, None))
        };
        let client_side = async {
            assert_eq!(
                client.next(WAIT).await.unwrap(),
                SessionLine::Holding(ONE_COMMAND)
            );
            assert!(matches!(
                client.next(WAIT).await.unwrap(),
                SessionLine::Ready { last_event: 12, .. }
            ));
            client.confirm().await.unwrap();
        };
        let (boundary, ()) = tokio::join!(socket.wait_at_last_boundary(held, || 12), client_side);
        assert_eq!(boundary, Boundary::HandOver);
        assert_eq!(looks.get(), 4);
    });
}

#[test]
fn a_client_that_gives_up_ends_the_wait_at_the_last_boundary() {
    served(async |socket, path| {
        let mut client = asking(socket, path).await;
        let one = Holdings {
            commands: 0,
            subagents: 1,
        };
        let client_side = async {
            assert_eq!(client.next(WAIT).await.unwrap(), SessionLine::Holding(one));
            drop(client); // its --wait ran out
        };
        let (boundary, ()) = tokio::join!(
            socket.wait_at_last_boundary(|| Some((one, None)), || 3),
            client_side
        );
        assert_eq!(boundary, Boundary::Continue);
        assert!(!socket.asked());
    });
}
