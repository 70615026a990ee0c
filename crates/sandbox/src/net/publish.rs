//! Published ports: `net.serve.<port>` answered allow opens `127.0.0.1:<port>`
//! on the host, and each connection to it is carried to the same port on
//! the sandbox's own loopback through a socket the namespace's helper
//! opened ([`RouterLink::dial`]). The host listener is on 127.0.0.1 and
//! nowhere else: a published port is for the person at this machine.
//!
//! Reported, never guessed: a port under 1024, a port something on the host
//! already listens on, and more than [`MAX_PUBLISHED`] ports in one sandbox.

use std::io;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::sync::Arc;

use tokio::task::JoinHandle;

use super::link::RouterLink;

/// Ports one sandbox may publish. A dev server, its API, a docs preview and
/// a debugger make four; sixteen leaves room without letting a session fill
/// the host's port space.
pub const MAX_PUBLISHED: usize = 16;

/// Why a port was not published.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    /// Under 1024.
    #[error(
        "port {port} was not published: ports under 1024 need privilege this session does not have; serve on a port of 1024 or above"
    )]
    Privileged {
        /// The port.
        port: u16,
    },
    /// Something on the host already listens there.
    #[error(
        "port {port} was not published: something on this machine already listens on 127.0.0.1:{port}; stop it or serve on another port"
    )]
    InUse {
        /// The port.
        port: u16,
    },
    /// Past [`MAX_PUBLISHED`].
    #[error(
        "port {port} was not published: this sandbox already publishes {max} ports, the most one may; stop serving one first"
    )]
    TooMany {
        /// The port.
        port: u16,
        /// The limit.
        max: usize,
    },
    /// Another failure binding the host listener.
    #[error("port {port} was not published: binding 127.0.0.1:{port} failed: {error}")]
    Bind {
        /// The port.
        port: u16,
        /// The error.
        error: io::Error,
    },
}

/// The ports published for one sandbox. Dropping it closes them all.
#[derive(Debug)]
pub struct Published {
    link: Arc<RouterLink>,
    ports: Vec<(u16, JoinHandle<()>)>,
}

impl Published {
    /// Nothing published yet, for the sandbox behind `link`.
    pub fn new(link: Arc<RouterLink>) -> Self {
        Self {
            link,
            ports: Vec::new(),
        }
    }

    /// The ports published, in order.
    pub fn ports(&self) -> Vec<u16> {
        self.ports.iter().map(|(p, _)| *p).collect()
    }

    /// Publishes `port` (a no-op when it already is). Call within a tokio
    /// runtime; the listener runs as a task on it.
    pub fn publish(&mut self, port: u16) -> Result<(), PublishError> {
        if self.ports.iter().any(|(p, _)| *p == port) {
            return Ok(());
        }
        if port < 1024 {
            return Err(PublishError::Privileged { port });
        }
        if self.ports.len() >= MAX_PUBLISHED {
            return Err(PublishError::TooMany {
                port,
                max: MAX_PUBLISHED,
            });
        }
        let addr = SocketAddrV4::new(Ipv4Addr::LOCALHOST, port);
        let listener = std::net::TcpListener::bind(addr)
            .and_then(|l| {
                l.set_nonblocking(true)?;
                tokio::net::TcpListener::from_std(l)
            })
            .map_err(|source| match source.kind() {
                io::ErrorKind::AddrInUse => PublishError::InUse { port },
                io::ErrorKind::PermissionDenied => PublishError::Privileged { port },
                _ => PublishError::Bind {
                    port,
                    error: source,
                },
            })?;
        let link = Arc::clone(&self.link);
        let task = tokio::spawn(async move {
            while let Ok((mut outside, _)) = listener.accept().await {
                let link = Arc::clone(&link);
                tokio::spawn(async move {
                    let inside = link.dial(port).and_then(|s| {
                        s.set_nonblocking(true)?;
                        tokio::net::TcpStream::from_std(s)
                    });
                    match inside {
                        Ok(mut inside) => {
                            let _ = super::carry_both(&mut outside, &mut inside).await;
                        }
                        Err(e) => {
                            tracing::warn!(target: "chock::net", port, "published port: nothing inside the sandbox took the connection: {e}");
                        }
                    }
                });
            }
        });
        self.ports.push((port, task));
        Ok(())
    }
}

impl Drop for Published {
    fn drop(&mut self) {
        for (_, t) in &self.ports {
            t.abort();
        }
    }
}
