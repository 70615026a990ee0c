//! `chock serve`: a browser in front of a daemon.
//!
//! Serve owns nothing. Every fact the page shows came out of the daemon's
//! control protocol through [`chock_control::Client`]: it never reads a
//! session log, takes a lock or resolves a session directory, and nothing in
//! it asks whether the daemon's address is local. Its own listener is a unix
//! socket whose peer uid is checked (anyone else gets `403 Forbidden`), or a
//! TCP address that checks nobody when a person names one with `--host`.
//! [`Serve::bind`] and [`Serve::serve`] are library calls so a test can boot
//! serve in-process beside an in-process daemon.

#![deny(unsafe_code)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod api;
mod control;
mod error;
pub mod guard;
mod listen;
mod live;
pub mod page;
mod watch;

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use chock_control::listen::{self as listeners, ActivatedSocket, ListenError, Listener};
use chock_control::{Address, Client};

/// The port `--host` listens on when `--port` is not given.
pub const DEFAULT_PORT: u16 = 7781;

/// How long a request's headers may take, and a connection may sit idle.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections open at once (live views included) before a new one is
/// refused with 503.
pub const MAX_CONNECTIONS: usize = 512;

/// How many events the page asks for at a time, and the tail a fresh
/// session view starts from.
pub const PAGE: u64 = 200;

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// A listener could not be bound or taken from systemd.
    #[error(transparent)]
    Listen(#[from] ListenError),
    #[error("cannot start serve's runtime or its signal handlers: {0}")]
    Runtime(std::io::Error),
}

/// Where the daemon is and what to listen on.
#[derive(Debug, Clone)]
pub struct Config {
    /// The daemon every fact comes from.
    pub daemon: Address,
    /// The unix socket to listen on (`serve.sock` in the state directory
    /// unless a person named another).
    pub socket: PathBuf,
    /// A TCP listener instead of the socket, only when a person named a host.
    pub tcp: Option<(String, u16)>,
    /// Take the sockets systemd passed in `LISTEN_FDS`, when it passed any.
    pub socket_activation: bool,
    /// Bounds each connect to the daemon and each read of a reply (not the
    /// wait between a watch's events).
    pub daemon_timeout: Duration,
    /// Names a browser may use for a TCP listener besides its address and
    /// `localhost` (`--allow-host`).
    pub allow_hosts: Vec<String>,
    /// How long a connection may take to send a request's headers, and how
    /// long it may sit idle between requests.
    pub header_timeout: Duration,
    /// How many connections may be open at once; past it a new one is
    /// answered 503 and closed.
    pub max_connections: usize,
    /// How long a request's body may take once its headers have arrived.
    pub body_timeout: Duration,
}

impl Config {
    pub fn new(daemon: Address, socket: PathBuf) -> Config {
        Config {
            daemon,
            socket,
            tcp: None,
            socket_activation: true,
            daemon_timeout: Duration::from_secs(30),
            allow_hosts: Vec::new(),
            header_timeout: HEADER_TIMEOUT,
            max_connections: MAX_CONNECTIONS,
            body_timeout: guard::BODY_TIMEOUT,
        }
    }
}

/// What every request shares: the one way to the daemon.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) client: Client,
}

/// A serve whose listeners are bound and not yet accepting.
#[derive(Debug)]
pub struct Serve {
    listeners: Vec<Listener>,
    shared: Arc<Shared>,
    hosts: Arc<guard::Hosts>,
    limits: listen::Limits,
}

impl Serve {
    /// Binds the listener, or fails naming the address that could not be bound.
    pub async fn bind(config: Config) -> Result<Serve, ServeError> {
        let claimed = listeners::claim_if(config.socket_activation)?;
        Serve::bind_claimed(config, claimed).await
    }

    /// [`Serve::bind`] with the activation sockets already claimed.
    async fn bind_claimed(
        config: Config,
        claimed: Option<Vec<ActivatedSocket>>,
    ) -> Result<Serve, ServeError> {
        let activated = claimed
            .map(|sockets| sockets.into_iter().map(Listener::adopt).collect())
            .transpose()?;
        let listeners = match activated {
            Some(listeners) => listeners,
            None => match &config.tcp {
                Some((host, port)) => vec![listeners::bind_tcp(host, *port).await?],
                None => vec![listeners::bind_unix(&config.socket)?],
            },
        };
        let client = Client::new(config.daemon).with_timeout(config.daemon_timeout);
        // The names are checked only where a browser can reach serve
        // directly; behind a unix socket the proxy names the site.
        let tcp_host = listeners.iter().find_map(|l| match l {
            Listener::Tcp(_) => Some(config.tcp.as_ref().map_or_else(
                || l.address().map(|a| a.to_string()).unwrap_or_default(),
                |(h, _)| h.clone(),
            )),
            Listener::Unix { .. } => None,
        });
        let hosts = guard::Hosts {
            allowed: tcp_host.map(|host| guard::allowed_hosts(&host, &config.allow_hosts)),
            body_timeout: config.body_timeout,
        };
        Ok(Serve {
            listeners,
            shared: Arc::new(Shared { client }),
            hosts: Arc::new(hosts),
            limits: listen::Limits {
                header_timeout: config.header_timeout,
                open: Arc::new(tokio::sync::Semaphore::new(config.max_connections)),
                max_connections: config.max_connections,
            },
        })
    }

    /// The addresses a browser or proxy can reach serve at, as `unix:/path`
    /// or `host:port`.
    pub fn addresses(&self) -> Vec<Address> {
        self.listeners
            .iter()
            .filter_map(Listener::address)
            .collect()
    }

    /// The daemon this serve is a client of.
    pub fn daemon(&self) -> &Address {
        self.shared.client.address()
    }

    /// Tells systemd serve is ready, when it runs under systemd.
    pub fn notify_ready(&self) {
        if let Err(err) = sd_notify::notify(false, &[sd_notify::NotifyState::Ready]) {
            tracing::warn!(%err, "could not tell systemd serve is ready");
        }
    }

    /// Accepts connections until `shutdown` completes, then removes the
    /// socket file it created.
    pub async fn serve(self, shutdown: impl Future<Output = ()>) {
        let router = api::router(Arc::clone(&self.shared), Arc::clone(&self.hosts));
        let limits = self.limits;
        let trimmer = tokio::spawn(chock_control::memory::trim_after_bursts(
            Arc::clone(&limits.open),
            limits.max_connections,
        ));
        listeners::serve_until(
            self.listeners,
            |listener| listen::accept_loop(listener, router.clone(), limits.clone()),
            shutdown,
        )
        .await;
        trimmer.abort();
    }
}

/// Runs serve on its own multi-threaded runtime until SIGTERM or SIGINT.
/// `announce` is called with the bound addresses before the first accept.
pub fn run(config: Config, announce: impl FnOnce(&[Address])) -> Result<(), ServeError> {
    // Before the runtime opens its own descriptors: see chock_control::listen.
    let claimed = listeners::claim_if(config.socket_activation)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    runtime.block_on(async move {
        let shutdown = listeners::terminated().map_err(ServeError::Runtime)?;
        let serve = Serve::bind_claimed(config, claimed).await?;
        announce(&serve.addresses());
        serve.notify_ready();
        serve.serve(shutdown).await;
        Ok(())
    })
}
