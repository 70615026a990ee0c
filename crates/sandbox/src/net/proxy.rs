//! The host-side proxy: one task per client connection, whatever listener
//! it arrived on (the router's in-namespace listener, or a unix socket).
//! The first byte picks the protocol (5: SOCKS5, 4: SOCKS4, refused;
//! anything else: HTTP). Every destination goes through [`Proxy::open`]:
//! decide the host, resolve it, drop internal addresses no rule names,
//! dial. A refusal is answered in the client's own protocol and logged
//! with the rule that would permit it.
//!
//! Bounds: a connection cap (a client past it gets a clear refusal while
//! the others keep working), a handshake deadline, a header size limit, a
//! connect deadline. The person's answer to an ask is not under the
//! handshake deadline: a question waits as long as the person does.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream, UnixListener};

use super::decide::{Decider, HostVerdict};
use super::resolve::{Resolver, is_internal};
use super::{http, socks};

/// How the proxy is bounded, and the test resolver map.
#[derive(Debug, Clone)]
pub struct ProxyConfig {
    /// Connections served at once; one more is refused with a message.
    pub max_connections: usize,
    /// Time a client has to send its request (not counting a person's
    /// answer).
    pub handshake_timeout: Duration,
    /// Time a dial to the destination may take.
    pub connect_timeout: Duration,
    /// Names resolved without DNS (tests: `allowed.test` -> `127.0.0.1`).
    /// The internal-address check applies to these answers too.
    pub resolve_overrides: Vec<(String, std::net::IpAddr)>,
}

impl Default for ProxyConfig {
    fn default() -> Self {
        Self {
            max_connections: 256,
            handshake_timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(30),
            resolve_overrides: Vec::new(),
        }
    }
}

/// Why a destination was not reached, and how to tell the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The policy refused the host, or it was malformed (HTTP 403, SOCKS 2).
    Policy(String),
    /// It resolved only to internal addresses no rule names (403, SOCKS 2).
    Internal(String),
    /// It did not resolve (HTTP 502, SOCKS 4).
    Resolve(String),
    /// The dial failed (HTTP 502, SOCKS 5).
    Connect(String),
}

impl Refusal {
    pub(crate) fn message(&self) -> &str {
        match self {
            Refusal::Policy(m)
            | Refusal::Internal(m)
            | Refusal::Resolve(m)
            | Refusal::Connect(m) => m,
        }
    }
}

/// The router's proxy. Cheap to clone; every clone shares the same cap.
#[derive(Clone)]
pub struct Proxy {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proxy")
            .field("active", &self.active())
            .finish_non_exhaustive()
    }
}

struct Inner {
    decider: Arc<dyn Decider>,
    resolver: Resolver,
    config: ProxyConfig,
    active: AtomicUsize,
}

/// An accept that failed for want of descriptors or memory, or because the
/// client left first, is survived: the router pauses briefly (the pending
/// connection stays queued) and goes on serving. Anything else ends it.
pub(crate) async fn accept_failed(e: io::Error) -> io::Result<()> {
    let transient = matches!(
        e.raw_os_error(),
        Some(
            libc::EMFILE
                | libc::ENFILE
                | libc::ENOBUFS
                | libc::ENOMEM
                | libc::ECONNABORTED
                | libc::EINTR
        )
    );
    if !transient {
        return Err(e);
    }
    tracing::warn!(target: "chock::net", "accepting a connection failed ({e}); retrying shortly");
    tokio::time::sleep(Duration::from_millis(50)).await;
    Ok(())
}

/// Decrements the active count when a connection's task ends.
struct Slot(Arc<Inner>);

impl Slot {
    /// Counts one more connection; the flag says whether it is over the
    /// cap (the connection is then refused, still holding its slot until
    /// the refusal is sent).
    fn take(inner: &Arc<Inner>) -> (Self, bool) {
        let prev = inner.active.fetch_add(1, Ordering::AcqRel);
        (
            Self(Arc::clone(inner)),
            prev >= inner.config.max_connections,
        )
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.active.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Proxy {
    /// A proxy deciding with `decider`.
    pub fn new(decider: Arc<dyn Decider>, config: ProxyConfig) -> Self {
        let mut resolver = Resolver::default();
        for (name, ip) in &config.resolve_overrides {
            resolver
                .overrides
                .entry(name.trim_end_matches('.').to_ascii_lowercase())
                .or_default()
                .push(*ip);
        }
        Self {
            inner: Arc::new(Inner {
                decider,
                resolver,
                config,
                active: AtomicUsize::new(0),
            }),
        }
    }

    /// Connections being served now.
    pub fn active(&self) -> usize {
        self.inner.active.load(Ordering::Acquire)
    }

    /// Serves a unix-socket listener until it fails.
    pub async fn serve_unix(&self, listener: UnixListener) -> io::Result<()> {
        loop {
            match listener.accept().await {
                Ok((s, _)) => self.spawn(s),
                Err(e) => accept_failed(e).await?,
            }
        }
    }

    /// Serves a TCP listener (the router's, inside the namespace) until it
    /// fails.
    pub async fn serve_tcp(&self, listener: TcpListener) -> io::Result<()> {
        loop {
            match listener.accept().await {
                Ok((s, _)) => {
                    let _ = s.set_nodelay(true);
                    self.spawn(s);
                }
                Err(e) => accept_failed(e).await?,
            }
        }
    }

    /// Serves one client connection on a task of its own.
    pub fn spawn<S>(&self, stream: S)
    where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let (slot, over) = Slot::take(&self.inner);
        let this = self.clone();
        tokio::spawn(async move {
            let _slot = slot;
            if over {
                this.refuse_busy(stream).await;
            } else {
                this.serve(stream).await;
            }
        });
    }

    /// Serves one connection whose destination is already known (accepted
    /// on a fake resolver's address): decided, resolved, checked and
    /// dialled like any other, under the same connection cap. A refusal is
    /// a reset; its reason is in the log.
    pub(crate) fn spawn_to(&self, stream: TcpStream, host: String, port: u16) {
        let (slot, over) = Slot::take(&self.inner);
        let this = self.clone();
        tokio::spawn(async move {
            let _slot = slot;
            if over {
                tracing::warn!(target: "chock::net", host, port,
                    "refused: the sandbox's router already serves {} connections, its limit; close some and retry",
                    this.inner.config.max_connections);
                return super::fake::reset(stream);
            }
            let mut client = stream;
            match this.open(&host, port).await {
                Ok(mut up) => {
                    let _ = super::carry_both(&mut client, &mut up).await;
                }
                Err(_) => super::fake::reset(client),
            }
        });
    }

    async fn refuse_busy<S: AsyncRead + AsyncWrite + Unpin>(&self, mut s: S) {
        let msg = format!(
            "the sandbox's router already serves {} connections, its limit; close some and retry",
            self.inner.config.max_connections
        );
        tracing::warn!(target: "chock::net", "{msg}");
        let mut first = [0u8; 1];
        let read = tokio::time::timeout(Duration::from_secs(1), s.read(&mut first)).await;
        if matches!(read, Ok(Ok(1))) && first[0] == 5 {
            // No acceptable method: the client stops before asking anything.
            let _ = s.write_all(&[5, 0xff]).await;
        } else {
            let _ = http::respond(&mut s, 503, "Service Unavailable", &msg).await;
        }
    }

    async fn serve<S: AsyncRead + AsyncWrite + Unpin + Send + 'static>(&self, mut s: S) {
        let mut first = [0u8; 1];
        let t = self.inner.config.handshake_timeout;
        match tokio::time::timeout(t, s.read(&mut first)).await {
            Ok(Ok(1)) => {}
            _ => return,
        }
        match first[0] {
            5 => socks::serve(self, s).await,
            4 => {
                // SOCKS4 reply: request rejected.
                tracing::warn!(target: "chock::net", "refused a SOCKS4 request: only SOCKS5 is spoken");
                let _ = s.write_all(&[0, 0x5b, 0, 0, 0, 0, 0, 0]).await;
            }
            b => http::serve(self, s, b).await,
        }
    }

    pub(crate) fn handshake_timeout(&self) -> Duration {
        self.inner.config.handshake_timeout
    }

    /// Decides, resolves, checks and dials `host:port`.
    pub(crate) async fn open(&self, host: &str, port: u16) -> Result<TcpStream, Refusal> {
        let r = self.open_inner(host, port).await;
        if let Err(e) = &r {
            tracing::warn!(target: "chock::net", host, port, "refused: {}", e.message());
        }
        r
    }

    async fn open_inner(&self, host: &str, port: u16) -> Result<TcpStream, Refusal> {
        if port == 0 {
            return Err(Refusal::Policy(format!(
                "{host}:0 is not a port to connect to"
            )));
        }
        match self.inner.decider.decide(host).await {
            HostVerdict::Allow => {}
            HostVerdict::Refuse(m) => return Err(Refusal::Policy(m)),
        }
        let addrs = self
            .inner
            .resolver
            .resolve(host, port)
            .await
            .map_err(|e| Refusal::Resolve(format!("{host} did not resolve: {e}")))?;
        let mut internal: Vec<SocketAddr> = Vec::new();
        let usable: Vec<SocketAddr> = addrs
            .into_iter()
            .filter(|a| {
                let ok = !is_internal(a.ip()) || self.inner.decider.names_address(a.ip());
                if !ok {
                    internal.push(*a);
                }
                ok
            })
            .collect();
        if usable.is_empty() {
            return Err(match internal.first() {
                Some(a) => {
                    let action = chock_policy::Action::net_connect(&a.ip().to_string())
                        .map(|x| x.as_str().to_owned())
                        .unwrap_or_else(|_| format!("net.connect.{}", a.ip()));
                    Refusal::Internal(format!(
                        "{host} resolves to {}, an internal address (loopback, private or link-local), \
                         which no rule names; a name is never enough to reach this machine or its \
                         network: to permit it, add .{{ .action = \"{action}\", .decision = .allow }} \
                         to chock.zon",
                        a.ip()
                    ))
                }
                None => Refusal::Resolve(format!("{host} resolved to no address")),
            });
        }
        let mut last = None;
        for a in usable {
            match tokio::time::timeout(self.inner.config.connect_timeout, TcpStream::connect(a))
                .await
            {
                Ok(Ok(s)) => {
                    let _ = s.set_nodelay(true);
                    return Ok(s);
                }
                Ok(Err(e)) => last = Some(format!("{a}: {e}")),
                Err(_) => last = Some(format!("{a}: timed out")),
            }
        }
        Err(Refusal::Connect(format!(
            "could not connect to {host}:{port} ({})",
            last.unwrap_or_default()
        )))
    }
}
