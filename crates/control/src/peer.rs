//! The unix socket's one check: the kernel's credential on the connection
//! must name this process's own uid. A peer the kernel will not name is
//! refused as well, because an absent answer is never a permissive answer.

use tokio::net::UnixStream;

#[derive(Debug, thiserror::Error)]
pub enum PeerError {
    #[error(
        "refused: the kernel would not name the connecting user ({0}); \
         connect over the unix socket as the user that started the daemon"
    )]
    Unnamed(std::io::Error),
    #[error(
        "refused: uid {peer} is not uid {own}, the user this daemon runs as; \
         connect as that user or put a proxy running as that user in front"
    )]
    Foreign { peer: u32, own: u32 },
}

/// Checks the connection's peer against `own` (normally the effective uid).
pub fn check_peer(stream: &UnixStream, own: u32) -> Result<(), PeerError> {
    let cred = stream.peer_cred().map_err(PeerError::Unnamed)?;
    let peer = cred.uid();
    if peer == own {
        Ok(())
    } else {
        Err(PeerError::Foreign { peer, own })
    }
}

/// The uid a daemon compares peers against: its effective uid.
pub fn own_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}
