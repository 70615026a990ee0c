//! One connection: check the peer, take the greeting, read one request,
//! hand it to its verb. Nothing is read past the greeting until the numbers
//! match; a bad line gets an `error` reply and the connection closes,
//! and nothing one connection does can stop the daemon serving the others.

use std::sync::Arc;
use std::time::Duration;

use chock_control::listen::Listener;
use chock_control::{LineError, LineReader, MAX_REQUEST_LINE, PROTOCOL, Reply, Request};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

use crate::Shared;
use crate::verbs::{self, Conn, VerbError};

/// How long to back off when accept fails (out of descriptors, say).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

pub(crate) async fn accept_loop(listener: Listener, shared: Arc<Shared>) {
    match &listener {
        Listener::Unix { listener, .. } => loop {
            match listener.accept().await {
                Ok((stream, _)) => {
                    let shared = Arc::clone(&shared);
                    let permit = Arc::clone(&shared.open).try_acquire_owned();
                    tokio::spawn(async move {
                        if let Err(refusal) = chock_control::check_peer(&stream, shared.uid) {
                            tracing::warn!(%refusal, "refused a unix connection");
                            refuse(stream, &refusal.to_string()).await;
                            return;
                        }
                        let Ok(permit) = permit else {
                            refuse(stream, &too_many(&shared)).await;
                            return;
                        };
                        handle(shared, stream).await;
                        drop(permit);
                    });
                }
                Err(err) => {
                    tracing::warn!(%err, "accept failed on the unix socket");
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                }
            }
        },
        Listener::Tcp(listener) => loop {
            match listener.accept().await {
                Ok((stream, _)) => {
                    let _ = stream.set_nodelay(true);
                    let shared = Arc::clone(&shared);
                    let permit = Arc::clone(&shared.open).try_acquire_owned();
                    tokio::spawn(async move {
                        let Ok(permit) = permit else {
                            refuse(stream, &too_many(&shared)).await;
                            return;
                        };
                        handle(shared, stream).await;
                        drop(permit);
                    });
                }
                Err(err) => {
                    tracing::warn!(%err, "accept failed on the TCP listener");
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                }
            }
        },
    }
}

/// The refusal past the cap on open connections.
fn too_many(shared: &Shared) -> String {
    tracing::warn!(
        limit = shared.max_connections,
        "refused a connection: too many open"
    );
    format!(
        "busy: this daemon already has {} connections open, its limit; try again in a moment",
        shared.max_connections
    )
}

/// Tells a refused peer why, then lets it finish sending its greeting
/// (read and thrown away) so the refusal is not lost to a reset.
async fn refuse<S>(stream: S, message: &str)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let line = Reply::Error(message.to_owned()).to_line();
    chock_control::listen::refuse_and_drain(stream, line.as_bytes(), Duration::from_secs(1)).await;
}

async fn handle<S>(shared: Arc<Shared>, stream: S)
where
    S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    let (read, write) = tokio::io::split(stream);
    let mut conn = Conn {
        lines: LineReader::new(BufReader::new(Box::new(read)), MAX_REQUEST_LINE),
        out: tokio::io::BufWriter::new(Box::new(write)),
        stall: shared.write_stall,
    };
    let Some(first) = next_line(&mut conn, shared.line_timeout).await else {
        return;
    };
    match Request::parse(&first) {
        Ok(Request::Hello { protocol }) if protocol == PROTOCOL => {
            if conn.send(&Reply::Greeting).await.is_err() {
                return;
            }
        }
        Ok(Request::Hello { protocol }) => {
            let _ = conn.send(&Reply::Mismatch { client: protocol }).await;
            return;
        }
        Err(err @ chock_control::RequestError::Malformed { verb: "hello", .. }) => {
            let _ = conn.send(&Reply::Error(err.to_string())).await;
            return;
        }
        Ok(_) | Err(_) => {
            let _ = conn.send(&Reply::NoGreeting { got: first }).await;
            return;
        }
    }
    let Some(line) = next_line(&mut conn, shared.line_timeout).await else {
        return;
    };
    let request = match Request::parse(&line) {
        Ok(request) => request,
        Err(err) => {
            let _ = conn.send(&Reply::Error(err.to_string())).await;
            return;
        }
    };
    let verb = request.verb();
    let session = request.session().unwrap_or("").to_owned();
    tracing::info!(verb, session_id = %session, "request");
    match verbs::dispatch(&shared, request, &mut conn).await {
        Ok(()) => {}
        Err(VerbError::Refuse(message)) => {
            tracing::info!(verb, session_id = %session, %message, "refused");
            let _ = conn.send(&Reply::Error(message)).await;
        }
        Err(VerbError::Gone) => {
            tracing::debug!(verb, session_id = %session, "client went away");
        }
        Err(VerbError::Stalled(stall)) => {
            tracing::info!(verb, session_id = %session, "cut a client that read nothing");
            // Its buffer is full, so the line may never reach it; a client
            // that starts reading again finds it after what was queued.
            let line = Reply::Error(format!(
                "cut: this connection took no bytes for {stall:?} while replies waited; \
                 read them as they come, and reconnect with the last event id you hold"
            ))
            .to_line();
            let _ =
                tokio::time::timeout(Duration::from_secs(1), conn.out.write_all(line.as_bytes()))
                    .await;
            let _ = tokio::time::timeout(Duration::from_secs(1), conn.out.flush()).await;
            return;
        }
    }
    let _ = conn.out.shutdown().await;
}

/// The next request line, or `None` after telling the client why not (or
/// when it simply closed).
async fn next_line(conn: &mut Conn, limit: Duration) -> Option<String> {
    let message = match tokio::time::timeout(limit, conn.lines.next_line()).await {
        Ok(Ok(Some(line))) => return Some(line),
        Ok(Ok(None)) => return None,
        Ok(Err(LineError::Io(_))) => return None,
        Ok(Err(LineError::Unterminated(_))) => {
            "the connection was closed in the middle of a line: end each line with a newline"
                .to_owned()
        }
        Ok(Err(err)) => err.to_string(),
        Err(_) => format!(
            "nothing complete arrived within {limit:?}: send one line, ending with a newline"
        ),
    };
    let _ = conn.send(&Reply::Error(message)).await;
    None
}
