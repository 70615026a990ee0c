//! Where a daemon is: `unix:/path` or `host:port` (`[v6]:port` for an IPv6
//! literal). The default is the state directory's `daemon.sock`, or
//! `$CHOCK_DAEMON` when that is set; the caller passes the state directory so
//! this crate resolves no paths of its own.

use std::fmt;
use std::path::{Path, PathBuf};

/// The environment variable that names the daemon's address.
pub const DAEMON_ENV: &str = "CHOCK_DAEMON";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Address {
    /// A unix socket; the kernel names the peer, so the daemon checks it.
    Unix(PathBuf),
    /// A TCP address; `host` is a name, an IPv4 literal or a bare IPv6 literal.
    Tcp { host: String, port: u16 },
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AddressError {
    #[error("empty daemon address: write unix:/path or host:port")]
    Empty,
    #[error("'{0}' names no socket path: write unix:/path/to/daemon.sock")]
    EmptyPath(String),
    #[error("'{0}' is not a daemon address: write unix:/path or host:port (or [v6 address]:port)")]
    Unrecognised(String),
    #[error("'{0}' has a port that is not a number from 0 to 65535")]
    BadPort(String),
}

impl Address {
    pub fn parse(text: &str) -> Result<Address, AddressError> {
        if text.is_empty() {
            return Err(AddressError::Empty);
        }
        if let Some(path) = text.strip_prefix("unix:") {
            if path.is_empty() {
                return Err(AddressError::EmptyPath(text.to_owned()));
            }
            return Ok(Address::Unix(PathBuf::from(path)));
        }
        let (host, port) = if let Some(rest) = text.strip_prefix('[') {
            let (host, port) = rest
                .split_once("]:")
                .ok_or_else(|| AddressError::Unrecognised(text.to_owned()))?;
            if !host.contains(':') {
                return Err(AddressError::Unrecognised(text.to_owned()));
            }
            (host, port)
        } else {
            let (host, port) = text
                .rsplit_once(':')
                .ok_or_else(|| AddressError::Unrecognised(text.to_owned()))?;
            // A bare IPv6 literal has colons of its own and needs brackets.
            if host.contains(':') {
                return Err(AddressError::Unrecognised(text.to_owned()));
            }
            (host, port)
        };
        if host.is_empty() || host.contains(['/', ' ', '\t']) {
            return Err(AddressError::Unrecognised(text.to_owned()));
        }
        if port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) {
            return Err(AddressError::BadPort(text.to_owned()));
        }
        let port = port
            .parse()
            .map_err(|_| AddressError::BadPort(text.to_owned()))?;
        Ok(Address::Tcp {
            host: host.to_owned(),
            port,
        })
    }

    /// The state directory's own socket.
    pub fn default_for(state_dir: &Path) -> Address {
        Address::Unix(state_dir.join("daemon.sock"))
    }

    /// `$CHOCK_DAEMON` when set and not empty, else the state directory's socket.
    pub fn from_env_or_default(state_dir: &Path) -> Result<Address, AddressError> {
        match std::env::var(DAEMON_ENV) {
            Ok(value) if !value.is_empty() => Address::parse(&value),
            _ => Ok(Address::default_for(state_dir)),
        }
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Address::Unix(path) => write!(f, "unix:{}", path.display()),
            Address::Tcp { host, port } if host.contains(':') => write!(f, "[{host}]:{port}"),
            Address::Tcp { host, port } => write!(f, "{host}:{port}"),
        }
    }
}

impl std::str::FromStr for Address {
    type Err = AddressError;
    fn from_str(text: &str) -> Result<Address, AddressError> {
        Address::parse(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_documented_shape() {
        assert_eq!(
            Address::parse("unix:/run/chock/daemon.sock"),
            Ok(Address::Unix("/run/chock/daemon.sock".into()))
        );
        assert_eq!(
            Address::parse("127.0.0.1:7780"),
            Ok(Address::Tcp {
                host: "127.0.0.1".into(),
                port: 7780
            })
        );
        assert_eq!(
            Address::parse("daemon.example:80"),
            Ok(Address::Tcp {
                host: "daemon.example".into(),
                port: 80
            })
        );
        assert_eq!(
            Address::parse("[::1]:7780"),
            Ok(Address::Tcp {
                host: "::1".into(),
                port: 7780
            })
        );
    }

    #[test]
    fn display_round_trips() {
        for text in ["unix:/a/b.sock", "127.0.0.1:1", "[fe80::1]:65535", "host:0"] {
            assert_eq!(Address::parse(text).unwrap().to_string(), text);
        }
    }

    #[test]
    fn refuses_what_is_not_an_address() {
        assert_eq!(Address::parse(""), Err(AddressError::Empty));
        assert_eq!(
            Address::parse("unix:"),
            Err(AddressError::EmptyPath("unix:".into()))
        );
        assert!(matches!(
            Address::parse("localhost"),
            Err(AddressError::Unrecognised(_))
        ));
        assert!(matches!(
            Address::parse("::1:80"),
            Err(AddressError::Unrecognised(_))
        ));
        assert!(matches!(
            Address::parse("[::1]80"),
            Err(AddressError::Unrecognised(_))
        ));
        assert!(matches!(
            Address::parse("host:99999"),
            Err(AddressError::BadPort(_))
        ));
        assert!(matches!(
            Address::parse("host:+1"),
            Err(AddressError::BadPort(_))
        ));
        assert!(matches!(
            Address::parse("/tmp/sock"),
            Err(AddressError::Unrecognised(_))
        ));
    }
}
