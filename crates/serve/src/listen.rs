//! Serve's accept loop: on a unix socket the peer's uid is checked on every
//! connection and anyone else is answered `403 Forbidden`; a TCP address
//! checks nobody. Binding the listeners (and socket activation) is shared
//! with the daemon in [`chock_control::listen`].
//!
//! The check happens before HTTP is parsed: a foreign peer's connection is
//! served by a handler that answers every request with 403 and reaches
//! nothing else.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use chock_control::listen::Listener;
use hyper::{Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::UnixStream;
use tokio::sync::Semaphore;

/// The bounds every connection is held to.
#[derive(Debug, Clone)]
pub(crate) struct Limits {
    /// For a request's headers, and for the idle wait before the next one.
    pub(crate) header_timeout: Duration,
    /// One permit per open connection.
    pub(crate) open: Arc<Semaphore>,
    pub(crate) max_connections: usize,
}

/// Accepts until the task is aborted; each connection gets its own task, so
/// a slow or broken browser holds up nobody else. Past the cap on open
/// connections a new one is answered 503 at once and closed, so no number
/// of half-sent requests can take every descriptor.
pub(crate) async fn accept_loop(listener: Listener, router: Router, limits: Limits) {
    let own = chock_control::own_uid();
    match &listener {
        Listener::Unix { listener, .. } => loop {
            match listener.accept().await {
                Ok((stream, _)) => {
                    let refusal = peer_refusal(&stream, own);
                    let router = router.clone();
                    let limits = limits.clone();
                    let permit = Arc::clone(&limits.open).try_acquire_owned();
                    tokio::spawn(async move {
                        match (refusal, permit) {
                            (Some(message), _) => forbid(stream, message, &limits).await,
                            (None, Err(_)) => busy(stream, &limits).await,
                            (None, Ok(permit)) => {
                                serve_http(stream, router, &limits).await;
                                drop(permit);
                            }
                        }
                    });
                }
                Err(err) => accept_failed(&err).await,
            }
        },
        Listener::Tcp(listener) => loop {
            match listener.accept().await {
                Ok((stream, _)) => {
                    let router = router.clone();
                    let limits = limits.clone();
                    let permit = Arc::clone(&limits.open).try_acquire_owned();
                    tokio::spawn(async move {
                        match permit {
                            Err(_) => busy(stream, &limits).await,
                            Ok(permit) => {
                                serve_http(stream, router, &limits).await;
                                drop(permit);
                            }
                        }
                    });
                }
                Err(err) => accept_failed(&err).await,
            }
        },
    }
}

/// Past the cap: a 503 written straight to the socket, without reading
/// the request, then a short drain so the answer is not lost to a reset.
async fn busy<S>(stream: S, limits: &Limits)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    tracing::warn!(
        limit = limits.max_connections,
        "refused a connection: too many open"
    );
    let body = format!(
        "{{\"kind\":\"busy\",\"error\":\"chock serve already has {} connections open, its limit; try again in a moment\"}}\n",
        limits.max_connections
    );
    let response = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nretry-after: 1\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    chock_control::listen::refuse_and_drain(
        stream,
        response.as_bytes(),
        Duration::from_millis(500),
    )
    .await;
}

/// An HTTP/1 server for one connection, with the header and idle timeout.
fn http1(limits: &Limits) -> hyper::server::conn::http1::Builder {
    let mut builder = hyper::server::conn::http1::Builder::new();
    // The header timeout runs from the moment hyper waits for a request, so
    // it is also the idle bound between requests on a kept-alive
    // connection; a live view is a response being written, not idle.
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .max_buf_size(64 << 10);
    builder
}

/// Why this peer may not be served, or `None` when it is serve's own user.
/// A peer the kernel will not name is refused too: an absent answer is never
/// a permissive one.
pub(crate) fn peer_refusal(stream: &UnixStream, own: u32) -> Option<String> {
    match stream.peer_cred() {
        Ok(cred) if cred.uid() == own => None,
        Ok(cred) => Some(format!(
            "refused: uid {} is not uid {own}, the user chock serve runs as; connect as that \
             user, or run the proxy in front of this socket as that user (see docs/serve.md)",
            cred.uid()
        )),
        Err(err) => Some(format!(
            "refused: the kernel would not name the connecting user ({err}); connect as the \
             user that started chock serve"
        )),
    }
}

async fn serve_http<S>(stream: S, router: Router, limits: &Limits)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = TowerToHyperService::new(router);
    // A client may shut its side down once the request is sent (socat,
    // `printf ... | nc`); when that FIN is read with the request, as it is
    // for the connection that socket-activated serve, hyper would otherwise
    // close without answering.
    if let Err(err) = http1(limits)
        .half_close(true)
        .serve_connection(TokioIo::new(stream), service)
        .await
    {
        tracing::debug!(%err, "browser connection ended with an error");
    }
}

async fn forbid(stream: UnixStream, message: String, limits: &Limits) {
    tracing::info!(%message, "refused a connection on serve's socket");
    let service = hyper::service::service_fn(move |_request| {
        let body = format!("403 Forbidden: {message}\n");
        async move {
            Ok::<_, Infallible>(
                Response::builder()
                    .status(StatusCode::FORBIDDEN)
                    .header("content-type", "text/plain; charset=utf-8")
                    .body(Body::from(body))
                    .unwrap_or_else(|_| Response::new(Body::empty())),
            )
        }
    });
    let _ = http1(limits)
        .keep_alive(false)
        .half_close(true)
        .serve_connection(TokioIo::new(stream), service)
        .await;
}

/// Out of descriptors or a transient error: wait a moment rather than spin.
async fn accept_failed(err: &std::io::Error) {
    tracing::warn!(%err, "accept failed");
    tokio::time::sleep(Duration::from_millis(50)).await;
}
