//! The session's own sockets beside its log (approve.sock, handover.sock):
//! bound by whoever holds the log's lock, so a stale socket a crashed
//! session left is replaced, and made 0600 so only the person's uid gets as
//! far as the peer check.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use tokio::net::UnixListener;

/// Binds `path`, replacing a stale socket, and makes it 0600.
pub(crate) fn bind(path: &Path) -> std::io::Result<UnixListener> {
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
        Err(err) => return Err(err),
    }
    let listener = UnixListener::bind(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    Ok(listener)
}
