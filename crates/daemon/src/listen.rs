//! The daemon's listeners: its unix socket (mode 0600, peer uid checked on
//! every connection), an optional TCP address (nobody checked: put a proxy
//! in front), or whatever systemd passed in `LISTEN_FDS`.

use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};

use chock_control::Address;
use tokio::net::{TcpListener, UnixListener};

use crate::DaemonError;

#[derive(Debug)]
pub(crate) enum Listener {
    /// `remove` is the path this daemon created and removes on shutdown.
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
}

/// Binds the unix socket at `path`. A socket file left by a daemon that is
/// gone is replaced; a live daemon there, or a file that is not a socket,
/// is an error that names the path.
pub(crate) fn bind_unix(path: &Path) -> Result<Listener, DaemonError> {
    let err = |source| DaemonError::Bind {
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
            return Err(DaemonError::NotASocket(path.to_owned()));
        }
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            return Err(DaemonError::AlreadyListening(path.to_owned()));
        }
        std::fs::remove_file(path).map_err(err)?;
    }
    let listener = UnixListener::bind(path).map_err(err)?;
    // The uid check is what keeps others out; the mode keeps them from
    // even knocking.
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(err)?;
    Ok(Listener::Unix {
        listener,
        path: path.to_owned(),
        remove: true,
    })
}

pub(crate) async fn bind_tcp(host: &str, port: u16) -> Result<Listener, DaemonError> {
    // `[::1]` is how a person writes an IPv6 host next to a port.
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    let listener = TcpListener::bind((host, port))
        .await
        .map_err(|source| DaemonError::Bind {
            address: format!("{host}:{port}"),
            source,
        })?;
    Ok(Listener::Tcp(listener))
}

/// The sockets systemd passed, when `LISTEN_PID` names this process.
/// `None` when this process was not socket-activated.
pub(crate) fn activated() -> Result<Option<Vec<Listener>>, DaemonError> {
    let pid = std::env::var("LISTEN_PID").ok();
    if pid.as_deref().and_then(|p| p.parse::<u32>().ok()) != Some(std::process::id()) {
        return Ok(None);
    }
    let count: RawFd = std::env::var("LISTEN_FDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| {
            DaemonError::Activation("LISTEN_PID is set but LISTEN_FDS is not a number".to_owned())
        })?;
    if count < 1 {
        return Err(DaemonError::Activation(
            "LISTEN_FDS passed no sockets".to_owned(),
        ));
    }
    let names: Vec<String> = std::env::var("LISTEN_FDNAMES")
        .map(|v| v.split(':').map(str::to_owned).collect())
        .unwrap_or_default();
    let mut listeners = Vec::new();
    for (index, raw) in (3..3 + count).enumerate() {
        let name = names
            .get(index)
            .cloned()
            .unwrap_or_else(|| format!("fd {raw}"));
        listeners.push(adopt_fd(raw, &name)?);
    }
    Ok(Some(listeners))
}

fn adopt_fd(raw: RawFd, name: &str) -> Result<Listener, DaemonError> {
    use rustix::net::{AddressFamily, sockopt};
    // SAFETY: systemd's protocol hands this process the descriptors from 3 to
    // 3 + LISTEN_FDS - 1 and nothing else in it owns them; LISTEN_PID was
    // checked to be this process, so they were meant for us, and this is
    // called once per descriptor.
    #[expect(
        unsafe_code,
        reason = "taking ownership of a socket-activation descriptor"
    )]
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let bad = |what: String| DaemonError::Activation(format!("{name}: {what}"));
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
            .unwrap_or_else(|| PathBuf::from(name));
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
