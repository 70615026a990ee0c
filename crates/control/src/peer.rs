//! The unix socket's one check: the kernel's credential on the connection
//! must name this process's own uid. A peer the kernel will not name is
//! refused as well, because an absent answer is never a permissive answer.

use tokio::net::UnixStream;

#[derive(Debug, thiserror::Error)]
pub enum PeerError {
    #[error(
        "refused: the kernel would not name the connecting user ({error}); \
         connect over the unix socket as the user that started {}", .whose.started()
    )]
    Unnamed { error: std::io::Error, whose: Whose },
    #[error(
        "refused: uid {peer} is not uid {own}, the user {} runs as; \
         connect as that user{}", .whose.name(), .whose.or_else()
    )]
    Foreign { peer: u32, own: u32, whose: Whose },
}

/// Whose socket refused the peer, so the refusal names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Whose {
    /// `daemon.sock`.
    Daemon,
    /// A session's own `approve.sock` or `handover.sock`.
    Session,
}

impl Whose {
    fn name(self) -> &'static str {
        match self {
            Whose::Daemon => "this daemon",
            Whose::Session => "this session",
        }
    }

    fn started(self) -> &'static str {
        match self {
            Whose::Daemon => "the daemon",
            Whose::Session => "the session",
        }
    }

    fn or_else(self) -> &'static str {
        match self {
            Whose::Daemon => " or put a proxy running as that user in front",
            Whose::Session => "",
        }
    }
}

/// Checks the connection's peer against `own` (normally the effective uid),
/// for the daemon's socket.
pub fn check_peer(stream: &UnixStream, own: u32) -> Result<(), PeerError> {
    check_peer_of(stream, own, Whose::Daemon)
}

/// [`check_peer`] for a socket that is `whose`, whose refusal names it.
pub fn check_peer_of(stream: &UnixStream, own: u32, whose: Whose) -> Result<(), PeerError> {
    let cred = stream
        .peer_cred()
        .map_err(|error| PeerError::Unnamed { error, whose })?;
    let peer = cred.uid();
    if peer == own {
        Ok(())
    } else {
        Err(PeerError::Foreign { peer, own, whose })
    }
}

/// The uid a daemon compares peers against: its effective uid.
pub fn own_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}
