//! The session's own sockets beside its log (approve.sock, handover.sock):
//! bound by whoever holds the log's lock, so a stale socket a crashed
//! session left is replaced, and made 0600 so only the person's uid gets as
//! far as the peer check; a peer that fails the check is refused the same
//! way on each.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{UnixListener, UnixStream};

/// How long a refused peer's input is read before its connection closes.
const REFUSAL_DRAIN: Duration = Duration::from_secs(1);

/// Binds `path`, replacing a stale socket, and makes it 0600.
pub fn bind(path: &Path) -> std::io::Result<UnixListener> {
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
        Err(err) => return Err(err),
    }
    let listener = UnixListener::bind(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    Ok(listener)
}

/// Sends a refused peer its one `line` and closes. What it sent first is
/// read and dropped (at most `max` bytes, for at most a second): a unix
/// socket closed with unread input resets the connection, and the peer
/// would lose the refusal it was just sent.
pub async fn refuse(mut stream: UnixStream, line: &str, max: usize) {
    let _ = stream.write_all(line.as_bytes()).await;
    let _ = stream.shutdown().await;
    let mut sink = [0u8; 4096];
    let mut left = max;
    let drain = async {
        while left > 0 {
            match stream.read(&mut sink).await {
                Ok(0) | Err(_) => break,
                Ok(n) => left = left.saturating_sub(n),
            }
        }
    };
    let _ = tokio::time::timeout(REFUSAL_DRAIN, drain).await;
}

/// A session's socket, bound with [`bind`] and removed when dropped.
#[derive(Debug)]
pub struct OwnedSocket {
    listener: UnixListener,
    path: PathBuf,
    /// What the warnings call it (`approve.sock`).
    name: &'static str,
}

impl OwnedSocket {
    /// Binds `path` (see [`bind`]); `name` is how warnings call it.
    pub fn bind(path: &Path, name: &'static str) -> std::io::Result<OwnedSocket> {
        Ok(OwnedSocket {
            listener: bind(path)?,
            path: path.to_owned(),
            name,
        })
    }

    /// The next connection: a failed accept (out of descriptors, say) is
    /// logged and tried again shortly, never the end of the socket.
    pub async fn accept(&self) -> UnixStream {
        loop {
            match self.listener.accept().await {
                Ok((stream, _)) => return stream,
                Err(err) => {
                    tracing::warn!(path = %self.path.display(), %err, "accept on {} failed", self.name);
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
    }
}

impl Drop for OwnedSocket {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Removes the socket file at `path` when nothing listens on it (a session
/// killed after its ending, before it removed its sockets, leaves them
/// behind); true when it removed one. A socket something answers on, and
/// anything that is not a socket, is left alone.
pub fn remove_if_stale(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt as _;
    let is_socket = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_socket());
    if !is_socket {
        return false;
    }
    match std::os::unix::net::UnixStream::connect(path) {
        Err(err) if err.kind() == std::io::ErrorKind::ConnectionRefused => {
            std::fs::remove_file(path).is_ok()
        }
        _ => false,
    }
}
