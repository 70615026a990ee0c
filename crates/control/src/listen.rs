//! The listening side that `chock daemon` and `chock serve` share: binding a
//! unix socket (mode 0600, a stale socket file replaced, a live one or a
//! file that is not a socket refused), binding a TCP address, and taking the
//! sockets systemd passes in `LISTEN_FDS`.
//!
//! Socket activation is split in two because of descriptor numbers. The
//! sockets systemd passes sit at descriptors 3 and up, and nothing else in
//! the process may own them; a descriptor that is *not* open there (a
//! broken unit, a mistaken `LISTEN_FDS`) is the next number the process
//! opens, for instance the async runtime's epoll. So [`claim_activated`]
//! runs first, with plain `std` sockets and no runtime, and checks each
//! descriptor is open before taking ownership of it; [`Listener::adopt`]
//! hands the claimed sockets to tokio once a runtime exists.
//!
//! What each server does with a connection (the line protocol, HTTP) and
//! whom it refuses stays in its own crate; only the binding lives here.

use std::io;
use std::os::fd::{BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};

use tokio::net::{TcpListener, UnixListener};

use crate::Address;

/// A listener could not be set up. The daemon and serve turn these into
/// their own errors, which say whose socket it is.
#[derive(Debug, thiserror::Error)]
pub enum ListenError {
    /// Binding or preparing the address failed.
    #[error("cannot listen on {address}: {error}")]
    Bind {
        /// `unix:<path>` or `<host>:<port>`.
        address: String,
        /// What the system said.
        error: io::Error,
    },
    /// A live listener answers on the socket path.
    #[error(
        "something is already listening on unix:{}: use it, or stop it before starting another",
        .0.display()
    )]
    AlreadyListening(PathBuf),
    /// The path exists and is not a socket.
    #[error("{} exists and is not a socket: move it away or pass --socket <path>", .0.display())]
    NotASocket(PathBuf),
    /// `LISTEN_PID` named this process but what was passed is unusable.
    #[error("socket activation: {0}; check the .socket unit")]
    Activation(String),
}

/// A bound listener.
#[derive(Debug)]
pub enum Listener {
    /// A unix socket; `remove` says this process created the file and
    /// removes it on shutdown (an activated socket is systemd's).
    Unix {
        /// The socket.
        listener: UnixListener,
        /// Its path (or the activation name when it has none).
        path: PathBuf,
        /// Whether this process created the file.
        remove: bool,
    },
    /// A TCP socket.
    Tcp(TcpListener),
}

impl Listener {
    /// The address a client reaches this listener at.
    pub fn address(&self) -> Option<Address> {
        match self {
            Listener::Unix { path, .. } => Some(Address::Unix(path.clone())),
            Listener::Tcp(listener) => listener.local_addr().ok().map(|addr| Address::Tcp {
                host: addr.ip().to_string(),
                port: addr.port(),
            }),
        }
    }

    /// The socket file this process created and should remove on shutdown.
    pub fn created_path(&self) -> Option<&Path> {
        match self {
            Listener::Unix {
                path, remove: true, ..
            } => Some(path),
            _ => None,
        }
    }

    /// Hand a claimed activation socket to tokio; needs a runtime.
    pub fn adopt(socket: ActivatedSocket) -> Result<Listener, ListenError> {
        let bad = |name: &str, e: io::Error| ListenError::Activation(format!("{name}: {e}"));
        match socket {
            ActivatedSocket::Unix { listener, path } => Ok(Listener::Unix {
                listener: UnixListener::from_std(listener)
                    .map_err(|e| bad(&path.display().to_string(), e))?,
                path,
                remove: false,
            }),
            ActivatedSocket::Tcp { listener, name } => Ok(Listener::Tcp(
                TcpListener::from_std(listener).map_err(|e| bad(&name, e))?,
            )),
        }
    }
}

/// A socket file this process created goes with its listener, however the
/// server ends (a failure after binding included); systemd's stays.
impl Drop for Listener {
    fn drop(&mut self) {
        if let Some(path) = self.created_path() {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Bind the unix socket at `path`, creating its directory (mode 0700) when
/// missing. A socket file whose listener is gone is replaced.
pub fn bind_unix(path: &Path) -> Result<Listener, ListenError> {
    let err = |source| ListenError::Bind {
        address: format!("unix:{}", path.display()),
        error: source,
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
            return Err(ListenError::NotASocket(path.to_owned()));
        }
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            return Err(ListenError::AlreadyListening(path.to_owned()));
        }
        std::fs::remove_file(path).map_err(err)?;
    }
    let listener = UnixListener::bind(path).map_err(err)?;
    // The peer's uid check is what keeps others out; the mode keeps them
    // from even knocking.
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(err)?;
    Ok(Listener::Unix {
        listener,
        path: path.to_owned(),
        remove: true,
    })
}

/// Bind a TCP address; `[::1]` is how a person writes an IPv6 host next to a
/// port, so the brackets are accepted.
pub async fn bind_tcp(host: &str, port: u16) -> Result<Listener, ListenError> {
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    let listener = TcpListener::bind((host, port))
        .await
        .map_err(|source| ListenError::Bind {
            address: format!("{host}:{port}"),
            error: source,
        })?;
    Ok(Listener::Tcp(listener))
}

/// A socket systemd passed, owned and checked, not yet given to tokio.
#[derive(Debug)]
pub enum ActivatedSocket {
    /// A listening unix socket.
    Unix {
        /// The socket, non-blocking.
        listener: std::os::unix::net::UnixListener,
        /// Its path, or its `LISTEN_FDNAMES` name when it has none.
        path: PathBuf,
    },
    /// A listening TCP socket.
    Tcp {
        /// The socket, non-blocking.
        listener: std::net::TcpListener,
        /// Its `LISTEN_FDNAMES` name, or `fd N`.
        name: String,
    },
}

/// Take the sockets systemd passed, when `LISTEN_PID` names this process;
/// `None` when it was not socket-activated. Call it before opening anything
/// else (before the async runtime): see the module's comment.
pub fn claim_activated() -> Result<Option<Vec<ActivatedSocket>>, ListenError> {
    let pid = std::env::var("LISTEN_PID").ok();
    if pid.as_deref().and_then(|p| p.parse::<u32>().ok()) != Some(std::process::id()) {
        return Ok(None);
    }
    let count: RawFd = std::env::var("LISTEN_FDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| {
            ListenError::Activation("LISTEN_PID is set but LISTEN_FDS is not a number".to_owned())
        })?;
    if count < 1 {
        return Err(ListenError::Activation(
            "LISTEN_FDS passed no sockets".to_owned(),
        ));
    }
    let names: Vec<String> = std::env::var("LISTEN_FDNAMES")
        .map(|v| v.split(':').map(str::to_owned).collect())
        .unwrap_or_default();
    let mut sockets = Vec::new();
    for (index, raw) in (3..3 + count).enumerate() {
        let name = names
            .get(index)
            .filter(|n| !n.is_empty())
            .cloned()
            .unwrap_or_else(|| format!("fd {raw}"));
        sockets.push(claim_fd(raw, &name)?);
    }
    Ok(Some(sockets))
}

/// [`claim_activated`], then [`Listener::adopt`] for each socket: for a
/// caller already inside a runtime that has opened nothing of its own yet.
pub fn activated() -> Result<Option<Vec<Listener>>, ListenError> {
    claim_activated()?
        .map(|sockets| sockets.into_iter().map(Listener::adopt).collect())
        .transpose()
}

/// Take descriptor `raw` as a listening socket, refusing it, without
/// touching it, when it is not open.
pub(crate) fn claim_fd(raw: RawFd, name: &str) -> Result<ActivatedSocket, ListenError> {
    use rustix::net::{AddressFamily, sockopt};
    // A descriptor that is not open must be refused before it is owned:
    // dropping the owner would close whatever this process opens next
    // under that number.
    // SAFETY: the borrow lasts only for this one fcntl, and a descriptor
    // that is not open makes fcntl fail with EBADF rather than touch
    // anything.
    #[expect(unsafe_code, reason = "probing a socket-activation descriptor")]
    let probe = rustix::io::fcntl_getfd(unsafe { BorrowedFd::borrow_raw(raw) });
    if let Err(err) = probe {
        let which = if *name == format!("fd {raw}") {
            format!("fd {raw} from LISTEN_FDS")
        } else {
            format!("{name} (fd {raw} from LISTEN_FDS)")
        };
        return Err(ListenError::Activation(format!(
            "{which} is not open ({err})"
        )));
    }
    // SAFETY: systemd hands this process the descriptors from 3 to
    // 3 + LISTEN_FDS - 1 and nothing else in it owns them; LISTEN_PID was
    // checked to be this process, the descriptor is open, and each is
    // claimed once.
    #[expect(
        unsafe_code,
        reason = "taking ownership of a socket-activation descriptor"
    )]
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let bad = |what: String| ListenError::Activation(format!("{name}: {what}"));
    rustix::io::fcntl_setfd(&fd, rustix::io::FdFlags::CLOEXEC).map_err(|e| bad(e.to_string()))?;
    if !sockopt::socket_acceptconn(&fd).map_err(|e| bad(format!("not a socket ({e})")))? {
        return Err(bad("is not a listening socket".to_owned()));
    }
    let family = rustix::net::getsockname(&fd)
        .map_err(|e| bad(e.to_string()))?
        .address_family();
    if family == AddressFamily::UNIX {
        let listener = std::os::unix::net::UnixListener::from(fd);
        listener
            .set_nonblocking(true)
            .map_err(|e| bad(e.to_string()))?;
        let path = listener
            .local_addr()
            .ok()
            .and_then(|a| a.as_pathname().map(Path::to_owned))
            .unwrap_or_else(|| PathBuf::from(name));
        Ok(ActivatedSocket::Unix { listener, path })
    } else if family == AddressFamily::INET || family == AddressFamily::INET6 {
        let listener = std::net::TcpListener::from(fd);
        listener
            .set_nonblocking(true)
            .map_err(|e| bad(e.to_string()))?;
        Ok(ActivatedSocket::Tcp {
            listener,
            name: name.to_owned(),
        })
    } else {
        Err(bad("is neither a unix nor a TCP socket".to_owned()))
    }
}

#[cfg(test)]
mod tests;

/// Accepts on every listener, each with `accept` (the server's own loop),
/// until `shutdown` completes; then removes the socket files bound here.
/// What a connection already started keeps running on the runtime.
pub async fn serve_until<F>(
    listeners: Vec<Listener>,
    mut accept: impl FnMut(Listener) -> F,
    shutdown: impl Future<Output = ()>,
) where
    F: Future<Output = ()> + Send + 'static,
{
    let mut tasks = tokio::task::JoinSet::new();
    let mut cleanup = Vec::new();
    for listener in listeners {
        if let Some(path) = listener.created_path() {
            cleanup.push(path.to_owned());
        }
        tasks.spawn(accept(listener));
    }
    shutdown.await;
    tasks.abort_all();
    for path in cleanup {
        let _ = std::fs::remove_file(path);
    }
}

/// Completes on SIGTERM or SIGINT; the handlers are installed when this is
/// called, not when the future is first polled, so a signal that comes as
/// soon as a server announces itself stops it cleanly.
pub fn terminated() -> io::Result<impl Future<Output = ()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
    })
}

/// [`claim_activated`] where the server was asked to take activated
/// sockets, `None` otherwise.
pub fn claim_if(socket_activation: bool) -> Result<Option<Vec<ActivatedSocket>>, ListenError> {
    if socket_activation {
        claim_activated()
    } else {
        Ok(None)
    }
}

/// Writes `answer` (a refusal) to a peer whose request is not read, shuts
/// the writing side, then reads and throws away up to 64 KiB of what the
/// peer still sends, for at most `within`, so the answer is not lost to a
/// reset of unread input.
pub async fn refuse_and_drain<S>(mut stream: S, answer: &[u8], within: std::time::Duration)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    if stream.write_all(answer).await.is_err() {
        return;
    }
    let _ = stream.shutdown().await;
    let mut sink = [0u8; 4096];
    let drain = async {
        let mut total = 0;
        while let Ok(n) = stream.read(&mut sink).await {
            total += n;
            if n == 0 || total > 64 << 10 {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(within, drain).await;
}
