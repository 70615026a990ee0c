//! Serve's listener: a unix socket (mode 0600, the peer's uid checked on
//! every connection and anyone else answered `403 Forbidden`), a TCP address
//! that checks nobody, or whatever systemd passed in `LISTEN_FDS`.
//!
//! The daemon's listener helpers are private to its crate, so the few lines
//! of binding and socket activation are repeated here rather than shared.
//! The check happens before HTTP is parsed: a foreign peer's connection is
//! served by a handler that answers every request with 403 and reaches
//! nothing else.

use std::convert::Infallible;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};

use axum::Router;
use axum::body::Body;
use chock_control::Address;
use hyper::{Response, StatusCode};
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, UnixListener, UnixStream};

use crate::ServeError;

#[derive(Debug)]
pub(crate) enum Listener {
    /// `remove` says serve created the socket file and removes it on shutdown.
    Unix {
        listener: UnixListener,
        path: PathBuf,
        remove: bool,
    },
    Tcp(TcpListener),
}

impl Listener {
    pub(crate) fn address(&self) -> Option<Address> {
        match self {
            Listener::Unix { path, .. } => Some(Address::Unix(path.clone())),
            Listener::Tcp(listener) => listener.local_addr().ok().map(|addr| Address::Tcp {
                host: addr.ip().to_string(),
                port: addr.port(),
            }),
        }
    }

    pub(crate) fn created_path(&self) -> Option<&Path> {
        match self {
            Listener::Unix {
                path, remove: true, ..
            } => Some(path),
            _ => None,
        }
    }
}

/// Binds the unix socket at `path`. A socket file left by a serve that is
/// gone is replaced; a live listener there, or a file that is not a socket,
/// is an error naming the path.
pub(crate) fn bind_unix(path: &Path) -> Result<Listener, ServeError> {
    let err = |source| ServeError::Bind {
        address: format!("unix:{}", path.display()),
        source,
    };
    if let Some(parent) = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty() && !p.exists())
    {
        std::fs::create_dir_all(parent).map_err(err)?;
        std::fs::set_permissions(parent, std::fs::Permissions::from_mode(0o700)).map_err(err)?;
    }
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if !meta.file_type().is_socket() {
            return Err(ServeError::NotASocket(path.to_owned()));
        }
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            return Err(ServeError::AlreadyListening(path.to_owned()));
        }
        std::fs::remove_file(path).map_err(err)?;
    }
    let listener = UnixListener::bind(path).map_err(err)?;
    // The uid check is what keeps others out; the mode keeps them from even
    // knocking.
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(err)?;
    Ok(Listener::Unix {
        listener,
        path: path.to_owned(),
        remove: true,
    })
}

pub(crate) async fn bind_tcp(host: &str, port: u16) -> Result<Listener, ServeError> {
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    let listener = TcpListener::bind((host, port))
        .await
        .map_err(|source| ServeError::Bind {
            address: format!("{host}:{port}"),
            source,
        })?;
    Ok(Listener::Tcp(listener))
}

/// Accepts until the task is aborted; each connection gets its own task, so
/// a slow or broken browser holds up nobody else.
pub(crate) async fn accept_loop(listener: Listener, router: Router) {
    let own = chock_control::own_uid();
    match listener {
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
    if let Err(err) = hyper::server::conn::http1::Builder::new()
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
        .serve_connection(TokioIo::new(stream), service)
        .await;
}

/// Out of descriptors or a transient error: wait a moment rather than spin.
async fn accept_failed(err: &std::io::Error) {
    tracing::warn!(%err, "accept failed");
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
}

/// The sockets systemd passed, when `LISTEN_PID` names this process.
pub(crate) fn activated() -> Result<Option<Vec<Listener>>, ServeError> {
    let pid = std::env::var("LISTEN_PID").ok();
    if pid.as_deref().and_then(|p| p.parse::<u32>().ok()) != Some(std::process::id()) {
        return Ok(None);
    }
    let count: RawFd = std::env::var("LISTEN_FDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| {
            ServeError::Activation("LISTEN_PID is set but LISTEN_FDS is not a number".to_owned())
        })?;
    if count < 1 {
        return Err(ServeError::Activation(
            "LISTEN_FDS passed no sockets".to_owned(),
        ));
    }
    (3..3 + count)
        .map(adopt_fd)
        .collect::<Result<_, _>>()
        .map(Some)
}

fn adopt_fd(raw: RawFd) -> Result<Listener, ServeError> {
    use rustix::net::{AddressFamily, sockopt};
    // A descriptor that is not open must be refused before it is owned:
    // closing it later would be closing something this process never had.
    // SAFETY: the borrow lasts only for this one fcntl, and an fd that is
    // not open makes fcntl fail with EBADF rather than touch anything.
    #[expect(unsafe_code, reason = "probing a socket-activation descriptor")]
    let probe = rustix::io::fcntl_getfd(unsafe { std::os::fd::BorrowedFd::borrow_raw(raw) });
    if let Err(err) = probe {
        return Err(ServeError::Activation(format!(
            "fd {raw} from LISTEN_FDS is not open ({err})"
        )));
    }
    // SAFETY: systemd hands this process the descriptors from 3 to
    // 3 + LISTEN_FDS - 1 and nothing else in it owns them; LISTEN_PID was
    // checked to be this process, and each is adopted once.
    #[expect(
        unsafe_code,
        reason = "taking ownership of a socket-activation descriptor"
    )]
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let bad = |what: String| ServeError::Activation(format!("fd {raw}: {what}"));
    rustix::io::fcntl_setfd(&fd, rustix::io::FdFlags::CLOEXEC).map_err(|e| bad(e.to_string()))?;
    if !sockopt::socket_acceptconn(&fd).map_err(|e| bad(format!("not a socket ({e})")))? {
        return Err(bad("is not a listening socket".to_owned()));
    }
    let family = rustix::net::getsockname(&fd)
        .map_err(|e| bad(e.to_string()))?
        .address_family();
    if family == AddressFamily::UNIX {
        let std = std::os::unix::net::UnixListener::from(fd);
        std.set_nonblocking(true).map_err(|e| bad(e.to_string()))?;
        let path = std
            .local_addr()
            .ok()
            .and_then(|a| a.as_pathname().map(Path::to_owned))
            .unwrap_or_else(|| PathBuf::from(format!("fd {raw}")));
        let listener = UnixListener::from_std(std).map_err(|e| bad(e.to_string()))?;
        Ok(Listener::Unix {
            listener,
            path,
            remove: false,
        })
    } else if family == AddressFamily::INET || family == AddressFamily::INET6 {
        let std = std::net::TcpListener::from(fd);
        std.set_nonblocking(true).map_err(|e| bad(e.to_string()))?;
        Ok(Listener::Tcp(
            TcpListener::from_std(std).map_err(|e| bad(e.to_string()))?,
        ))
    } else {
        Err(bad("is neither a unix nor a TCP socket".to_owned()))
    }
}
