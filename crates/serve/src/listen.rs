//! Serve's accept loop: on a unix socket the peer's uid is checked on every
//! connection and anyone else is answered `403 Forbidden`; a TCP address
//! checks nobody. Binding the listeners (and socket activation) is shared
//! with the daemon in [`chock_control::listen`].
//!
//! The check happens before HTTP is parsed: a foreign peer's connection is
//! served by a handler that answers every request with 403 and reaches
//! nothing else.

use std::convert::Infallible;

use axum::Router;
use axum::body::Body;
use chock_control::listen::Listener;
use hyper::{Response, StatusCode};
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::UnixStream;

/// Accepts until the task is aborted; each connection gets its own task, so
/// a slow or broken browser holds up nobody else.
pub(crate) async fn accept_loop(listener: Listener, router: Router) {
    let own = chock_control::own_uid();
    match &listener {
        Listener::Unix { listener, .. } => loop {
            match listener.accept().await {
                Ok((stream, _)) => {
                    let refusal = peer_refusal(&stream, own);
                    let router = router.clone();
                    tokio::spawn(async move {
                        match refusal {
                            None => serve_http(stream, router).await,
                            Some(message) => forbid(stream, message).await,
                        }
                    });
                }
                Err(err) => accept_failed(&err).await,
            }
        },
        Listener::Tcp(listener) => loop {
            match listener.accept().await {
                Ok((stream, _)) => {
                    tokio::spawn(serve_http(stream, router.clone()));
                }
                Err(err) => accept_failed(&err).await,
            }
        },
    }
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

async fn serve_http<S>(stream: S, router: Router)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = TowerToHyperService::new(router);
    // A client may shut its side down once the request is sent (socat,
    // `printf ... | nc`); when that FIN is read with the request, as it is
    // for the connection that socket-activated serve, hyper would otherwise
    // close without answering.
    if let Err(err) = hyper::server::conn::http1::Builder::new()
        .half_close(true)
        .serve_connection(TokioIo::new(stream), service)
        .await
    {
        tracing::debug!(%err, "browser connection ended with an error");
    }
}

async fn forbid(stream: UnixStream, message: String) {
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
    let _ = hyper::server::conn::http1::Builder::new()
        .keep_alive(false)
        .half_close(true)
        .serve_connection(TokioIo::new(stream), service)
        .await;
}

/// Out of descriptors or a transient error: wait a moment rather than spin.
async fn accept_failed(err: &std::io::Error) {
    tracing::warn!(%err, "accept failed");
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
}
