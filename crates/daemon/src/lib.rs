//! `chock daemon`: the process that owns sessions and the only thing a
//! frontend talks to.
//!
//! It listens (unix socket by default, TCP when asked, or sockets passed by
//! systemd), greets each connection, and answers one verb per connection from
//! the session logs. It never runs the agent loop and never writes a log:
//! `start` and `adopt` spawn a child `chock run` per session, and `answer`
//! goes to the session's own approval socket. [`Daemon::bind`] and
//! [`Daemon::serve`] are library calls so a test can boot a daemon in a
//! temporary state directory in-process.

#![deny(unsafe_code)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod children;
mod conn;
mod feed;
mod prune;
mod rows;
mod store;
mod verbs;

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use chock_control::Address;
use chock_control::listen::{self, ActivatedSocket, ListenError, Listener};

use crate::children::Children;
use crate::feed::Feeds;
use crate::store::Store;

/// The port `--host` listens on when `--port` is not given.
pub const DEFAULT_PORT: u16 = 7780;
/// Connections open at once, past which a new one is refused as busy.
pub const MAX_CONNECTIONS: usize = 1024;
/// The most diff one `diff` reply carries, whatever the client asks.
pub const MAX_DIFF: u64 = 32 << 20;
/// How long a reply may wait on a client that reads nothing.
pub const WRITE_STALL: Duration = Duration::from_secs(60);

#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    /// A listener could not be bound or taken from systemd.
    #[error(transparent)]
    Listen(ListenError),
    #[error(
        "a daemon is already listening on unix:{}: use it, or stop it before starting another",
        .0.display()
    )]
    AlreadyListening(PathBuf),
    #[error("cannot start the daemon's runtime or its signal handlers: {0}")]
    Runtime(std::io::Error),
}

impl From<ListenError> for DaemonError {
    /// The shared errors, except that a live socket is named as a daemon's.
    fn from(err: ListenError) -> DaemonError {
        match err {
            ListenError::AlreadyListening(path) => DaemonError::AlreadyListening(path),
            other => DaemonError::Listen(other),
        }
    }
}

/// What to listen on and how to run sessions.
#[derive(Debug, Clone)]
pub struct Config {
    /// The state directory: session logs live under `sessions/`.
    pub state_dir: PathBuf,
    /// The unix socket; `None` means `<state dir>/daemon.sock`.
    pub socket: Option<PathBuf>,
    /// A TCP listener, only when a person named a host.
    pub tcp: Option<(String, u16)>,
    /// The `chock` executable whose `run` subcommand each session is.
    pub chock_exe: PathBuf,
    /// Take the sockets systemd passed in `LISTEN_FDS`, when it passed any.
    pub socket_activation: bool,
    /// How long `start` and `adopt` wait for the child to hold its log.
    pub start_timeout: Duration,
    /// How long a connection may take to send its greeting, then its request.
    pub line_timeout: Duration,
    /// How long a watch waits after a `handover` ending for the next owner.
    pub handover_grace: Duration,
    /// The retention policy the daemon runs by itself, when it runs one.
    pub prune: Option<Prune>,
    /// How many connections may be open at once; past it a connection is
    /// told the daemon is busy and closed.
    pub max_connections: usize,
    /// How long one reply write may wait for a client that takes no bytes
    /// before that client is cut.
    pub write_stall: Duration,
    /// Give the allocator's free memory back after a burst of connections
    /// (`chock_control::memory`); off only to measure what it saves.
    pub return_memory: bool,
}

/// `chock workspace prune` with its defaults, run by the daemon every
/// `every` (first after five minutes, or `every` when shorter).
#[derive(Debug, Clone)]
pub struct Prune {
    /// The chock executable to run it with.
    pub exe: PathBuf,
    /// How often.
    pub every: Duration,
}

impl Config {
    pub fn new(state_dir: PathBuf, chock_exe: PathBuf) -> Config {
        Config {
            state_dir,
            socket: None,
            tcp: None,
            chock_exe,
            socket_activation: true,
            start_timeout: Duration::from_secs(30),
            line_timeout: Duration::from_secs(30),
            handover_grace: Duration::from_secs(10),
            prune: None,
            max_connections: MAX_CONNECTIONS,
            write_stall: WRITE_STALL,
            return_memory: true,
        }
    }
}

/// What every connection shares.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) store: Store,
    pub(crate) feeds: Arc<Feeds>,
    pub(crate) children: Arc<Children>,
    /// The watcher `rows` feeds share.
    pub(crate) rows: rows::RowHub,
    pub(crate) chock_exe: PathBuf,
    pub(crate) uid: u32,
    pub(crate) start_timeout: Duration,
    pub(crate) line_timeout: Duration,
    pub(crate) handover_grace: Duration,
    pub(crate) max_connections: usize,
    /// One permit per open connection.
    pub(crate) open: Arc<tokio::sync::Semaphore>,
    pub(crate) write_stall: Duration,
    pub(crate) return_memory: bool,
    /// Endings (a session's id and its number of events) whose leftover
    /// sockets were already looked for.
    pub(crate) swept: std::sync::Mutex<std::collections::HashSet<String>>,
    /// The rows the last listing sent.
    pub(crate) listed: verbs::ListMemory,
}

/// A daemon whose listeners are bound and not yet accepting.
#[derive(Debug)]
pub struct Daemon {
    listeners: Vec<Listener>,
    shared: Arc<Shared>,
    prune: Option<Prune>,
}

impl Daemon {
    /// Binds every listener, or fails naming the one that could not be bound.
    pub async fn bind(config: Config) -> Result<Daemon, DaemonError> {
        let claimed = listen::claim_if(config.socket_activation)?;
        Daemon::bind_claimed(config, claimed).await
    }

    /// [`Daemon::bind`] with the activation sockets already claimed.
    async fn bind_claimed(
        config: Config,
        claimed: Option<Vec<ActivatedSocket>>,
    ) -> Result<Daemon, DaemonError> {
        raise_fd_limit();
        let activated = claimed
            .map(|sockets| sockets.into_iter().map(Listener::adopt).collect())
            .transpose()?;
        let listeners = match activated {
            Some(listeners) => {
                if config.socket.is_some() || config.tcp.is_some() {
                    tracing::warn!(
                        "socket activation passed sockets; --socket and --host are ignored"
                    );
                }
                listeners
            }
            None => {
                let socket = config
                    .socket
                    .clone()
                    .unwrap_or_else(|| config.state_dir.join("daemon.sock"));
                let mut listeners = vec![listen::bind_unix(&socket)?];
                if let Some((host, port)) = &config.tcp {
                    listeners.push(listen::bind_tcp(host, *port).await?);
                }
                listeners
            }
        };
        let prune = config.prune;
        let shared = Arc::new(Shared {
            store: Store::new(config.state_dir),
            feeds: Arc::default(),
            children: Arc::default(),
            rows: rows::RowHub::default(),
            chock_exe: config.chock_exe,
            uid: chock_control::own_uid(),
            start_timeout: config.start_timeout,
            line_timeout: config.line_timeout,
            handover_grace: config.handover_grace,
            max_connections: config.max_connections,
            open: Arc::new(tokio::sync::Semaphore::new(config.max_connections)),
            write_stall: config.write_stall,
            return_memory: config.return_memory,
            swept: std::sync::Mutex::default(),
            listed: verbs::ListMemory::default(),
        });
        Ok(Daemon {
            listeners,
            shared,
            prune,
        })
    }

    /// The addresses a client can reach this daemon at, in the form
    /// `--daemon` and `$CHOCK_DAEMON` take.
    pub fn addresses(&self) -> Vec<Address> {
        self.listeners
            .iter()
            .filter_map(Listener::address)
            .collect()
    }

    /// Tells systemd the daemon is ready, when it runs under systemd.
    pub fn notify_ready(&self) {
        if let Err(err) = sd_notify::notify(false, &[sd_notify::NotifyState::Ready]) {
            tracing::warn!(%err, "could not tell systemd the daemon is ready");
        }
    }

    /// Accepts connections until `shutdown` completes, then removes the
    /// socket files it created. Sessions it started keep running.
    pub async fn serve(self, shutdown: impl Future<Output = ()>) {
        let shared = self.shared;
        if let Some(prune) = self.prune {
            tokio::spawn(prune::every(prune, shared.store.state().root().to_owned()));
        }
        let trimmer = shared.return_memory.then(|| {
            tokio::spawn(chock_control::memory::trim_after_bursts(
                Arc::clone(&shared.open),
                shared.max_connections,
            ))
        });
        listen::serve_until(
            self.listeners,
            |listener| conn::accept_loop(listener, Arc::clone(&shared)),
            shutdown,
        )
        .await;
        if let Some(trimmer) = trimmer {
            trimmer.abort();
        }
    }
}

/// Runs a daemon on its own multi-threaded runtime until SIGTERM or SIGINT.
/// `announce` is called with the bound addresses before the first accept.
pub fn run(config: Config, announce: impl FnOnce(&[Address])) -> Result<(), DaemonError> {
    // Before the runtime opens its own descriptors: see chock_control::listen.
    let claimed = listen::claim_if(config.socket_activation)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(DaemonError::Runtime)?;
    runtime.block_on(async move {
        // Handlers first: a SIGTERM that arrives as soon as the addresses
        // are announced must stop the daemon cleanly, not kill it.
        let shutdown = listen::terminated().map_err(DaemonError::Runtime)?;
        let daemon = Daemon::bind_claimed(config, claimed).await?;
        announce(&daemon.addresses());
        daemon.notify_ready();
        daemon.serve(shutdown).await;
        Ok(())
    })
}

/// A thousand connections need a thousand descriptors; the soft limit is
/// often 1024, the hard one much higher.
fn raise_fd_limit() {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let mut limit = getrlimit(Resource::Nofile);
    if limit.current < limit.maximum {
        limit.current = limit.maximum;
        let _ = setrlimit(Resource::Nofile, limit);
    }
}
