//! The network a session's commands get: whether a command has a router
//! (`.policy.net.router`, `.policy.net.background`), who decides each of its
//! connections, and how those decisions reach the session's one log.
//!
//! The router's proxy runs as tasks on the session's own `current_thread`
//! runtime while a command runs, but the log belongs to the session loop.
//! So the proxy never writes anything: each decision, each question for a
//! person, and each background job's start and end is a [`Record`] sent
//! down a channel, and `record` (polled beside the turn by the session)
//! appends it. A foreground connection that asks waits on its `Record::Ask`
//! until the person has answered through approve.sock, exactly as a tool
//! call's ask does; a background command's connections never ask.

use std::cell::RefCell;
use std::net::IpAddr;
use std::sync::Arc;

use chock_log::event::{
    Answer as LogAnswer, ApprovalAnswer, ApprovalRequest, BackgroundEnd, BackgroundStart,
};
use chock_log::{LogWriter, WriteError};
use chock_policy::{Action, Decision, NetMode, Policy, ResolverMode, Verdict};
use chock_sandbox::net::{
    BoxFuture, Decider, FakeConfig, FakeResolver, HostVerdict, Proxy, ProxyConfig, RouterLink,
};
use tokio::sync::{mpsc, oneshot};

use crate::approval::ApproveSocket;

/// A test resolver map, `name=addr,name=addr`: names resolved without DNS
/// (the internal-address check still applies to their answers, so a rule
/// must name a loopback address for it to be reached). For tests against
/// local servers, as `chock sandbox --resolve` is.
pub const RESOLVE_ENV: &str = "CHOCK_NET_RESOLVE";

/// Something the network side of a command has for the log.
#[derive(Debug)]
pub enum Record {
    /// A connection's host was decided.
    Decided(Verdict),
    /// A foreground connection waits for a person; `reply` takes the answer.
    Ask {
        verdict: Verdict,
        host: String,
        reply: oneshot::Sender<bool>,
    },
    /// A background job started.
    JobStart { job_id: String, command: String },
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

    /// Whether a foreground command gets a router.
    pub fn foreground_router(&self) -> bool {
        self.policy.wants_router()
    }

    /// Whether a background command's connections may be decided at all.
    pub fn background_router(&self) -> bool {
        self.policy.background_wants_router()
    }

    /// Whether some rule could let a port be published (serve_port is
    /// offered only then).
    pub fn could_serve(&self) -> bool {
        self.policy.could_permit("net.serve")
    }

    /// The decider for a command's connections.
    pub fn decider(&self, background: bool) -> Arc<dyn Decider> {
        let closed = (background && !self.background_router()).then(|| {
            format!(
                "a background command has no network here: .policy.net.background is .{}; \
                 run it in the foreground, or set .policy.net.background in chock.zon",
                mode_word(self.policy.net_background_mode())
            )
        });
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

fn mode_word(mode: NetMode) -> &'static str {
    match mode {
        NetMode::None => "none",
        NetMode::Auto => "auto",
        NetMode::Filtered => "filtered",
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
        let action = match Action::net_connect(host) {
            Ok(action) => action,
            Err(err) => return HostVerdict::Refuse(format!("malformed host {host:?}: {err}")),
        };
        let verdict = if self.background {
            self.policy.decide_background(&action)
        } else {
            self.policy.decide(&action)
        };
        let _ = self.records.send(Record::Decided(verdict.clone()));
        if verdict.permits() {
            return HostVerdict::Allow;
        }
        let why = if self.background {
            format!(
                "a background command gets only what is allowed outright ({} here)",
                verdict.decision
            )
        } else if verdict.decision == Decision::Ask {
            let (reply, answer) = oneshot::channel();
            let asked = self.records.send(Record::Ask {
                verdict: verdict.clone(),
                host: host.to_owned(),
                reply,
            });
            if asked.is_ok() && answer.await == Ok(true) {
                return HostVerdict::Allow;
            }
            "a person answered no".to_owned()
        } else if verdict.refused() {
            format!("the policy answers {}", verdict.decision)
        } else {
            format!(
                "the policy answers {}, which this session cannot give yet",
                verdict.decision
            )
        };
        HostVerdict::Refuse(chock_sandbox::net::refusal(&verdict, &why))
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

/// Appends every record as it comes; returns only when the log cannot be
/// written (or, never in a session, when every sender is gone).
pub(crate) async fn record(
    records: &mut mpsc::UnboundedReceiver<Record>,
    log: &RefCell<LogWriter>,
    approvals: &ApproveSocket,
) -> Result<(), WriteError> {
    while let Some(rec) = records.recv().await {
        apply(rec, log, Some(approvals)).await?;
    }
    std::future::pending().await
}

/// Appends what is already queued, without waiting; an ask still queued is
/// answered no (the session is ending; nobody will be asked).
pub(crate) async fn drain(
    records: &mut mpsc::UnboundedReceiver<Record>,
    log: &RefCell<LogWriter>,
) -> Result<(), WriteError> {
    while let Ok(rec) = records.try_recv() {
        apply(rec, log, None).await?;
    }
    Ok(())
}

async fn apply(
    rec: Record,
    log: &RefCell<LogWriter>,
    approvals: Option<&ApproveSocket>,
) -> Result<(), WriteError> {
    match rec {
        Record::Decided(verdict) => {
            log.borrow_mut()
                .append(crate::session::decision_event(&verdict, None))?;
        }
        Record::Ask {
            verdict,
            host,
            reply,
        } => {
            let Some(approvals) = approvals else {
                let _ = reply.send(false);
                return Ok(());
            };
            let yes = ask(&verdict, &host, log, approvals).await?;
            let _ = reply.send(yes);
        }
        Record::JobStart { job_id, command } => {
            log.borrow_mut().append(BackgroundStart {
                job_id,
                kind: "command".to_owned(),
                command,
            })?;
        }
        Record::JobEnd {
            job_id,
            status,
            exit_code,
        } => {
            log.borrow_mut().append(BackgroundEnd {
                job_id,
                status,
                exit_code,
            })?;
        }
    }
    Ok(())
}

/// The question about one host, through the session's approval path.
async fn ask(
    verdict: &Verdict,
    host: &str,
    log: &RefCell<LogWriter>,
    approvals: &ApproveSocket,
) -> Result<bool, WriteError> {
    let request_id = {
        let mut log = log.borrow_mut();
        let request_id = (log.last_id().0 + 1).to_string();
        let rule = verdict
            .rule
            .as_ref()
            .map(|rule| format!(" (rule {})", rule.text))
            .unwrap_or_default();
        log.append(ApprovalRequest {
            request_id: request_id.clone(),
            action: verdict.action.clone(),
            question: format!(
                "allow {}? a command the model runs (run_command) connects to {host}; the {} says ask{rule}",
                verdict.action,
                verdict.layer.describe()
            ),
            kind: chock_log::event::RequestKind::Approval,
        })?;
        request_id
    };
    let yes = approvals.wait_for(&request_id).await == chock_control::Answer::Yes;
    log.borrow_mut().append(ApprovalAnswer {
        request_id,
        answer: if yes { LogAnswer::Yes } else { LogAnswer::No },
        by: "approve.sock".to_owned(),
        text: None,
    })?;
    Ok(yes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(net: &str) -> (tempfile::TempDir, Policy) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("chock.zon"),
            format!(
                ".{{ .policy = .{{ {net} .rules = .{{\n\
                 .{{ .action = \"net.connect.test.allowed\", .decision = .allow }},\n\
                 .{{ .action = \"net.connect.test.denied\", .decision = .deny }},\n\
                 .{{ .action = \"net.connect.test.asked\", .decision = .ask }},\n\
                 }} }} }}\n"
            ),
        )
        .unwrap();
        let policy = Policy::load(dir.path()).unwrap();
        (dir, policy)
    }

    fn block_on<T>(f: impl Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn every_verdict_is_recorded_and_an_ask_waits_for_its_answer() {
        let (_dir, policy) = policy("");
        let (tx, mut rx) = mpsc::unbounded_channel();
        let net = NetSetup::new(&policy, tx);
        let decider = net.decider(false);
        block_on(async {
            assert_eq!(decider.decide("allowed.test").await, HostVerdict::Allow);
            let Some(Record::Decided(v)) = rx.recv().await else {
                panic!("no record")
            };
            assert_eq!(v.action, "net.connect.test.allowed");
            let HostVerdict::Refuse(why) = decider.decide("denied.test").await else {
                panic!("deny allowed")
            };
            assert!(
                why.contains("net.connect.test.denied refused: the policy answers deny"),
                "{why}"
            );
            assert!(matches!(rx.recv().await, Some(Record::Decided(_))));
            let (asked, answered) = tokio::join!(decider.decide("asked.test"), async {
                assert!(matches!(rx.recv().await, Some(Record::Decided(_))));
                let Some(Record::Ask { host, reply, .. }) = rx.recv().await else {
                    panic!("no question")
                };
                assert_eq!(host, "asked.test");
                reply.send(true).unwrap();
            });
            let () = answered;
            assert_eq!(asked, HostVerdict::Allow);
            let HostVerdict::Refuse(why) = decider.decide("exa mple").await else {
                panic!("a malformed host allowed")
            };
            assert!(why.starts_with("malformed host"), "{why}");
        });
    }

    #[test]
    fn a_background_command_never_asks_and_background_none_closes_it() {
        let (_dir, policy) = policy("");
        let (tx, mut rx) = mpsc::unbounded_channel();
        let net = NetSetup::new(&policy, tx.clone());
        block_on(async {
            let HostVerdict::Refuse(why) = net.decider(true).decide("asked.test").await else {
                panic!("a background ask allowed")
            };
            assert!(
                why.contains("a background command gets only what is allowed outright"),
                "{why}"
            );
            assert!(matches!(rx.recv().await, Some(Record::Decided(_))));
            assert!(
                rx.try_recv().is_err(),
                "no question for a background command"
            );
        });
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
