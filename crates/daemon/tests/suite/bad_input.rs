//! Bad input: garbage bytes, a 10 MB line, a half-closed connection, a
//! thousand connections opened and dropped. Each gets an error or a close,
//! and the daemon keeps serving everyone else with nothing lost.

use pretty_assertions::assert_eq;
use tokio::io::AsyncWriteExt;
use tokio::net::UnixStream;

use super::{GREETING, HasTestDirs, S1, StandIn, TestDaemon, read_all};

async fn still_serving(h: &TestDaemon) {
    let events = h.client().read(S1, 0).await.unwrap();
    assert_eq!(events.len(), 2, "the log and the daemon are intact");
}

/// Sends `input`, closes the write side, and reads every reply line.
async fn send_then_close(h: &TestDaemon, input: &[u8]) -> Vec<String> {
    let mut stream = UnixStream::connect(h.socket()).await.unwrap();
    stream.write_all(input).await.unwrap();
    stream.shutdown().await.unwrap();
    read_all(&mut stream).await
}

async fn harness() -> TestDaemon {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    let mut log = h.live_log(S1);
    log.append("user.message", r#""text":"hi""#);
    std::mem::forget(log); // keep the lock for the test's life
    h
}

#[tokio::test(flavor = "multi_thread")]
async fn garbage_bytes_get_an_error_and_a_close() {
    let h = harness().await;
    assert_eq!(
        h.raw(b"\xff\xfe\x00\x01garbage\n").await,
        ["error line is not UTF-8 text: the protocol is UTF-8 lines"]
    );
    let mut input = GREETING.to_vec();
    input.extend_from_slice(b"\x1b[31m\x07\n");
    assert_eq!(
        h.raw(&input).await,
        [
            "ok chock-control 1",
            "error unknown verb '?[31m?': the verbs are start, adopt, read, list, watch, answer, reply, continue, interrupt, stop, detach"
        ]
    );
    still_serving(&h).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_ten_megabyte_line_is_refused_not_buffered() {
    let h = harness().await;
    for prefix in [&b""[..], GREETING] {
        let mut stream = UnixStream::connect(h.socket()).await.unwrap();
        let (mut read, mut write) = stream.split();
        let mut input = prefix.to_vec();
        input.extend(std::iter::repeat_n(b'a', 10 << 20));
        input.push(b'\n');
        // The daemon stops reading at its limit, so the rest of this write
        // may fail; the reply is what matters.
        let writer = async {
            let _ = write.write_all(&input).await;
            let _ = write.shutdown().await;
        };
        let reader = async {
            let mut bytes = Vec::new();
            let _ = tokio::io::AsyncReadExt::read_to_end(&mut read, &mut bytes).await;
            bytes
        };
        let ((), bytes) = tokio::join!(writer, reader);
        let text = String::from_utf8(bytes).unwrap();
        assert!(
            text.ends_with(
                "error line longer than 1048576 bytes: send one request per line, under the limit\n"
            ),
            "{text}"
        );
    }
    still_serving(&h).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn half_closed_connections_are_answered_or_closed() {
    let h = harness().await;
    // A whole request, then the write side closed: still answered.
    let lines = send_then_close(
        &h,
        format!("hello chock-control 1\nread {S1} 1\n").as_bytes(),
    )
    .await;
    assert_eq!(lines.len(), 2, "{lines:?}");
    // Half a line, then closed: told so.
    assert_eq!(
        send_then_close(&h, format!("hello chock-control 1\nread {S1}").as_bytes()).await,
        [
            "ok chock-control 1",
            "error the connection was closed in the middle of a line: end each line with a newline"
        ]
    );
    // Greeted, then closed with no request: closed quietly.
    assert_eq!(send_then_close(&h, GREETING).await, ["ok chock-control 1"]);
    still_serving(&h).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_thousand_connections_opened_and_dropped_leave_it_serving() {
    let h = harness().await;
    for round in 0..1000 {
        let mut stream = UnixStream::connect(h.socket()).await.unwrap();
        if round % 2 == 1 {
            let _ = stream.write_all(b"hello chock-control 1\nwat").await;
        }
        drop(stream);
    }
    still_serving(&h).await;
    // And a thousand held open at once do not starve a new client either.
    let mut held = Vec::new();
    for _ in 0..1000 {
        held.push(UnixStream::connect(h.socket()).await.unwrap());
    }
    still_serving(&h).await;
    drop(held);
    still_serving(&h).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_connection_that_sends_nothing_is_told_so_and_closed() {
    let h = TestDaemon::boot_with(StandIn::EndsOnRelease, |c| {
        c.line_timeout = std::time::Duration::from_millis(300);
    })
    .await;
    let mut stream = UnixStream::connect(h.socket()).await.unwrap();
    assert_eq!(
        read_all(&mut stream).await,
        ["error nothing complete arrived within 300ms: send one line, ending with a newline"]
    );
    // Greeted, then silent: the same, after the greeting's reply.
    let mut stream = UnixStream::connect(h.socket()).await.unwrap();
    stream.write_all(GREETING).await.unwrap();
    assert_eq!(
        read_all(&mut stream).await,
        [
            "ok chock-control 1",
            "error nothing complete arrived within 300ms: send one line, ending with a newline"
        ]
    );
}
