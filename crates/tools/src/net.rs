//! The network side of a session's commands: whether a command has a
//! router (`.policy.net.router`, `.policy.net.background`), the router's
//! proxy and fake resolver, and the channel each connection's host is
//! handed down to be decided.
//!
//! The proxy runs as tasks on the session's own `current_thread` runtime
//! while a command runs, but the log and the judgement belong to the
//! session loop. So the proxy neither writes nor decides: each connection's
//! host is a [`Record::Decide`] sent down a channel, and the session decides
//! it the way every tool call is decided, by its one judge, and answers on
//! the record's `reply`. A background command's connections never ask and
//! are never reviewed: they get what is allowed outright (or granted).

use std::net::IpAddr;
use std::sync::Arc;

use chock_policy::{Action, Policy, ResolverMode};
use chock_sandbox::net::{
    BoxFuture, Decider, FakeConfig, FakeResolver, HostVerdict, Proxy, ProxyConfig, RouterLink,
};
use tokio::sync::{mpsc, oneshot};

/// A test resolver map, `name=addr,name=addr`: names resolved without DNS
/// (the internal-address check still applies to their answers, so a rule
/// must name a loopback address for it to be reached). For tests against
/// local servers, as `chock sandbox --resolve` is.
pub const RESOLVE_ENV: &str = "CHOCK_NET_RESOLVE";

/// Something the network side of a command has for the log.
#[derive(Debug)]
pub enum Record {
    /// A connection waits for its host to be decided; `reply` takes the
    /// verdict.
    Decide {
        host: String,
        background: bool,
        reply: oneshot::Sender<HostVerdict>,
    },
    /// A Nix build provide_tool is about to run fetches from `host` (or,
    /// for `None`, names no URL): decided at `nix.net.<reversed host>`
    /// (`nix.net.build.opaque`); `what` is the question's sentence.
    NixNet {
        host: Option<String>,
        what: String,
        reply: oneshot::Sender<HostVerdict>,
    },
    /// A background job started; `recorded` is answered once its
    /// `background.start` is in the log, so the call's result, which says
    /// the job started, comes after it.
    JobStart {
        job_id: String,
        command: String,
        recorded: oneshot::Sender<()>,
    },
    /// A background job ended: `done`, `failed` or `killed`.
    JobEnd {
        job_id: String,
        status: String,
        exit_code: Option<i32>,
    },
}

/// The sending end the commands hold.
pub type Records = mpsc::UnboundedSender<Record>;

/// What the session's policy says about networks, read once at session
/// start, and where the records go.
#[derive(Debug, Clone)]
pub struct NetSetup {
    pub policy: Arc<Policy>,
    pub records: Records,
    pub resolve: Vec<(String, IpAddr)>,
}

impl NetSetup {
    /// `policy`'s network, with the resolver map from [`RESOLVE_ENV`].
    pub fn new(policy: &Policy, records: Records) -> Self {
        Self {
            policy: Arc::new(policy.clone()),
            records,
            resolve: std::env::var(RESOLVE_ENV)
                .map(|text| parse_resolve(&text))
                .unwrap_or_default(),
        }
    }

    /// Whether some rule could let a port be published (serve_port is
    /// offered only then).
    pub fn could_serve(&self) -> bool {
        self.policy.could_permit("net.serve")
    }

    /// The decider for a command's connections.
    pub fn decider(&self, background: bool) -> Arc<dyn Decider> {
        let closed = background
            .then(|| self.policy.background_refusal())
            .flatten();
        Arc::new(SessionDecider {
            policy: Arc::clone(&self.policy),
            background,
            records: self.records.clone(),
            closed,
        })
    }

    /// Whether a command with a router also gets the fake-address
    /// resolver (`.policy.net.resolver = .fake`).
    pub fn fake_resolver(&self) -> bool {
        self.policy.net_resolver() == ResolverMode::Fake
    }

    /// Starts the proxy (and, with [`Self::fake_resolver`], the fake
    /// resolver) for one spawned command on the current runtime.
    pub fn start(&self, link: &Arc<RouterLink>, background: bool) -> std::io::Result<RouterTask> {
        let listener = link.listener()?;
        listener.set_nonblocking(true)?;
        let listener = tokio::net::TcpListener::from_std(listener)?;
        let config = ProxyConfig {
            resolve_overrides: self.resolve.clone(),
            ..ProxyConfig::default()
        };
        let proxy = Proxy::new(self.decider(background), config);
        let resolver = if self.fake_resolver() {
            let udp = link.resolver_socket()?;
            udp.set_nonblocking(true)?;
            let udp = tokio::net::UdpSocket::from_std(udp)?;
            let fake = FakeConfig {
                ports: self.policy.net_resolver_ports().to_vec(),
                ..FakeConfig::default()
            };
            Some((
                FakeResolver::new(Arc::clone(link), proxy.clone(), fake),
                udp,
            ))
        } else {
            None
        };
        let task = tokio::spawn(async move {
            let resolve = async move {
                if let Some((fake, udp)) = resolver
                    && let Err(err) = fake.serve(udp).await
                {
                    tracing::warn!(target: "chock::net", "the fake resolver stopped: {err}");
                }
            };
            let route = async move {
                if let Err(err) = proxy.serve_tcp(listener).await {
                    tracing::warn!(target: "chock::net", "the router stopped: {err}");
                }
            };
            tokio::join!(route, resolve);
        });
        Ok(RouterTask(task))
    }
}

/// Reads `name=addr,name=addr`; pairs that do not parse are skipped with a
/// warning (the map is for tests, and a skipped name only fails to resolve).
pub fn parse_resolve(text: &str) -> Vec<(String, IpAddr)> {
    text.split(',')
        .filter(|pair| !pair.trim().is_empty())
        .filter_map(|pair| {
            let parsed = pair
                .split_once('=')
                .and_then(|(name, addr)| Some((name.trim().to_owned(), addr.trim().parse().ok()?)));
            if parsed.is_none() {
                tracing::warn!(target: "chock::net", "{RESOLVE_ENV}: {pair:?} is not NAME=ADDR");
            }
            parsed
        })
        .collect()
}

/// A command's proxy; dropping it stops it (connections in flight end with
/// the command's namespace anyway).
#[derive(Debug)]
pub struct RouterTask(tokio::task::JoinHandle<()>);

impl Drop for RouterTask {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// `net.connect.<reversed host>` decided by the session's policy, every
/// verdict recorded.
struct SessionDecider {
    policy: Arc<Policy>,
    background: bool,
    records: Records,
    /// Set when background commands get no network: every host refused
    /// with this text, nothing decided.
    closed: Option<String>,
}

impl SessionDecider {
    async fn decide_host(&self, host: &str) -> HostVerdict {
        if let Some(closed) = &self.closed {
            return HostVerdict::Refuse(closed.clone());
        }
        if let Err(err) = Action::net_connect(host) {
            return HostVerdict::Refuse(format!("malformed host {host:?}: {err}"));
        }
        let (reply, verdict) = oneshot::channel();
        let ending = || {
            HostVerdict::Refuse(format!(
                "the connection to {host} was not decided: the session is ending"
            ))
        };
        // A failed send hands the record, and with it `reply`, back: it is
        // dropped here, never awaited.
        if self
            .records
            .send(Record::Decide {
                host: host.to_owned(),
                background: self.background,
                reply,
            })
            .is_err()
        {
            return ending();
        }
        verdict.await.unwrap_or_else(|_| ending())
    }
}

impl Decider for SessionDecider {
    fn decide<'a>(&'a self, host: &'a str) -> BoxFuture<'a, HostVerdict> {
        Box::pin(self.decide_host(host))
    }

    fn names_address(&self, addr: IpAddr) -> bool {
        self.closed.is_none()
            && Action::net_connect(&addr.to_string())
                .map(|action| self.policy.decide_background(&action).permits())
                .unwrap_or(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block_on<T>(f: impl Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn every_host_is_handed_to_the_session_and_its_verdict_is_the_answer() {
        let (_dir, policy) = policy("");
        let (tx, mut rx) = mpsc::unbounded_channel();
        let net = NetSetup::new(&policy, tx);
        let decider = net.decider(false);
        block_on(async {
            let (verdict, ()) = tokio::join!(decider.decide("asked.test"), async {
                let Some(Record::Decide {
                    host,
                    background,
                    reply,
                }) = rx.recv().await
                else {
                    panic!("no record")
                };
                assert_eq!(host, "asked.test");
                assert!(!background);
                reply.send(HostVerdict::Refuse("no".to_owned())).unwrap();
            });
            assert_eq!(verdict, HostVerdict::Refuse("no".to_owned()));
            let HostVerdict::Refuse(why) = decider.decide("exa mple").await else {
                panic!("a malformed host allowed")
            };
            assert!(why.starts_with("malformed host"), "{why}");
            assert!(rx.try_recv().is_err(), "a malformed host is not decided");
        });
        // A session that went away refuses rather than hangs.
        drop(rx);
        block_on(async {
            let HostVerdict::Refuse(why) = decider.decide("allowed.test").await else {
                panic!("allowed with nobody deciding")
            };
            assert!(why.contains("the session is ending"), "{why}");
        });
    }

    #[test]
    fn a_background_command_with_background_none_is_refused_before_the_session_is_asked() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let (_dir, policy) = policy_none();
        let net = NetSetup::new(&policy, tx);
        block_on(async {
            let HostVerdict::Refuse(why) = net.decider(true).decide("allowed.test").await else {
                panic!("background .none allowed a host")
            };
            assert!(why.contains(".policy.net.background is .none"), "{why}");
            assert!(rx.try_recv().is_err(), "nothing decided");
        });
    }

    /// A policy allowing `allowed.test`, with `net` in its `.policy` block.
    fn policy(net: &str) -> (tempfile::TempDir, Policy) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("chock.zon"),
            format!(
                ".{{ .policy = .{{ {net} .rules = .{{\n\
                 .{{ .action = \"net.connect.test.allowed\", .decision = .allow }},\n\
                 }} }} }}\n"
            ),
        )
        .unwrap();
        let policy = Policy::load(dir.path()).unwrap();
        (dir, policy)
    }

    fn policy_none() -> (tempfile::TempDir, Policy) {
        policy(".net = .{ .background = .none },")
    }

    #[test]
    fn the_resolver_map_reads_pairs_and_skips_bad_ones() {
        let map = parse_resolve("a.test=127.0.0.1, b.test = ::1,bad,c.test=nope,");
        assert_eq!(
            map,
            vec![
                ("a.test".to_owned(), "127.0.0.1".parse().unwrap()),
                ("b.test".to_owned(), "::1".parse().unwrap()),
            ]
        );
    }
}
