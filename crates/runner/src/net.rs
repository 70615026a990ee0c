//! The network a session's commands get: whether a command has a router
//! (`.policy.net.router`, `.policy.net.background`), who decides each of its
//! connections, and how those decisions reach the session's one log.
//!
//! The router's proxy runs as tasks on the session's own `current_thread`
//! runtime while a command runs, but the log and the session's judgement
//! belong to the session loop. So the proxy neither writes nor decides:
//! each connection's host is a [`Record::Decide`] sent down a channel, and
//! `record` (polled beside the turn by the session) decides it the way
//! every tool call is decided: by the session's own fold of the policy (its
//! promises narrow it), its grants (a person's yes to request_action turns
//! a question into allow), the reviewer for `agent_review` and
//! `agent_then_human`, and a person through approve.sock for `ask`; the
//! `decision` event is written as for a tool call: all of it is the
//! session's one judge (`crate::judge`), which the turn shares. A
//! background command's connections never ask and are never reviewed:
//! they get what is allowed outright (or granted).

use std::cell::RefCell;
use std::net::IpAddr;
use std::sync::Arc;

use chock_log::event::{BackgroundEnd, BackgroundStart};
use chock_log::{LogWriter, WriteError};
use chock_policy::{Action, NetMode, Policy, ResolverMode, Verdict};
use chock_sandbox::net::{
    BoxFuture, Decider, FakeConfig, FakeResolver, HostVerdict, Proxy, ProxyConfig, RouterLink,
};
use tokio::sync::{mpsc, oneshot};

use crate::judge::{Judge, Refusal, Subject};

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

/// Decides one connection's host through the session's judge, which
/// records the `decision` (and any `review` and question); `can_ask` is
/// false when the session is ending and nobody can be asked.
async fn decide(
    host: &str,
    background: bool,
    judge: &Judge<'_>,
    can_ask: bool,
) -> Result<HostVerdict, WriteError> {
    let action = match Action::net_connect(host) {
        Ok(action) => action,
        Err(err) => {
            return Ok(HostVerdict::Refuse(format!(
                "malformed host {host:?}: {err}"
            )));
        }
    };
    let question = |verdict: &Verdict, reviewer_said: Option<&str>| {
        let rule = verdict
            .rule
            .as_ref()
            .map(|rule| format!(" (rule {})", rule.text))
            .unwrap_or_default();
        format!(
            "allow {}? a command the model runs (run_command) connects to {host}; the {} says {}{rule}{}",
            verdict.action,
            verdict.layer.describe(),
            verdict.decision,
            reviewer_said
                .map(|reason| format!("; the reviewer said yes: {reason}"))
                .unwrap_or_default()
        )
    };
    let arguments = format!("a command connects to {host}");
    let subject = Subject {
        action: &action,
        tool: "run_command",
        arguments: &arguments,
        call_id: None,
        background,
        question: &question,
    };
    let judged = judge.decide(&subject, can_ask).await?;
    let verdict = &judged.verdict;
    let why = match judged.refusal {
        None => return Ok(HostVerdict::Allow),
        Some(Refusal::ReviewerSaidNo(reason)) => {
            return Ok(HostVerdict::Refuse(crate::approval::reviewer_refusal(
                verdict, &reason,
            )));
        }
        Some(Refusal::NotOutright) => format!(
            "a background command gets only what is allowed outright ({} here)",
            verdict.decision
        ),
        Some(Refusal::Denied) => format!("the policy answers {}", verdict.decision),
        Some(Refusal::PersonSaidNo) => "a person answered no".to_owned(),
        Some(Refusal::PersonSaidNoAfterReviewer) => {
            "a person answered no after the reviewer's yes".to_owned()
        }
        Some(Refusal::NobodyToAsk) => "the session is ending and nobody can be asked".to_owned(),
    };
    Ok(HostVerdict::Refuse(chock_sandbox::net::refusal(
        verdict, &why,
    )))
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

/// Decides and appends every record as it comes; returns only when the log
/// cannot be written (or, never in a session, when every sender is gone).
/// Records are taken one at a time: a connection waiting on a person holds
/// the next one back, as a tool call's question holds the turn.
pub(crate) async fn record(
    records: &mut mpsc::UnboundedReceiver<Record>,
    log: &RefCell<LogWriter>,
    judge: &Judge<'_>,
) -> Result<(), WriteError> {
    while let Some(rec) = records.recv().await {
        apply(rec, log, judge, true).await?;
    }
    std::future::pending().await
}

/// Appends what is already queued, without waiting; a connection still
/// queued is decided without asking anyone (the session is ending).
pub(crate) async fn drain(
    records: &mut mpsc::UnboundedReceiver<Record>,
    log: &RefCell<LogWriter>,
    judge: &Judge<'_>,
) -> Result<(), WriteError> {
    while let Ok(rec) = records.try_recv() {
        apply(rec, log, judge, false).await?;
    }
    Ok(())
}

async fn apply(
    rec: Record,
    log: &RefCell<LogWriter>,
    judge: &Judge<'_>,
    can_ask: bool,
) -> Result<(), WriteError> {
    match rec {
        Record::Decide {
            host,
            background,
            reply,
        } => {
            let verdict = decide(&host, background, judge, can_ask).await?;
            let _ = reply.send(verdict);
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

#[cfg(test)]
mod tests {
    use super::*;

    use crate::judge::tests::policy;

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
