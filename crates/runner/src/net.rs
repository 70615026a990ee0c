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
//! `decision` event is written as for a tool call. The session hands its
//! current promises, grants and task over in a `NetView` whenever they
//! may have changed. A background command's connections never ask and are
//! never reviewed: they get what is allowed outright (or granted).

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::net::IpAddr;
use std::rc::Rc;
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

use crate::approval::{ApproveSocket, Given, TerminalSlot, Wants};
use crate::review::{ReviewRequest, Reviewer, review};

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

/// What the session's judgement is right now, as the network side needs
/// it: the policy with the session's promises folded in, the actions a
/// person granted, and the person's latest message (shown to a reviewer).
#[derive(Debug, Clone)]
pub(crate) struct NetView {
    pub(crate) policy: Policy,
    pub(crate) grants: BTreeSet<String>,
    pub(crate) task: String,
}

/// Who decides a connection on the session's side: its current view and
/// its reviewer.
pub(crate) struct Judge<'a> {
    pub(crate) view: Rc<RefCell<NetView>>,
    pub(crate) reviewer: Reviewer<'a>,
    /// The foreground terminal, which a question about a connection is put
    /// to as well as approve.sock.
    pub(crate) terminal: TerminalSlot,
}

/// Whether a grant turns `verdict` into allow: a question (ask or a
/// review) about an action the person granted, unless the org bundle or a
/// promise caps it (those are asked, or refused, every time).
pub(crate) fn granted(verdict: &Verdict, grants: &BTreeSet<String>) -> bool {
    let askable = matches!(
        verdict.decision,
        Decision::Ask | Decision::AgentReview | Decision::AgentThenHuman
    );
    let capped = matches!(
        verdict.layer,
        chock_policy::LayerKind::Org | chock_policy::LayerKind::Promise
    );
    askable && !capped && grants.contains(verdict.action.as_str())
}

/// The `decision` event of a grant.
pub(crate) fn grant_decision(action: &str, call_id: Option<String>) -> chock_log::event::Decision {
    chock_log::event::Decision {
        action: action.to_owned(),
        decision: Decision::Allow.as_str().to_owned(),
        layer: "grant".to_owned(),
        rule: "the person's yes to request_action".to_owned(),
        call_id,
    }
}

/// Decides one connection's host as a tool call is decided, recording the
/// `decision` (and any `review` and question); `approvals` is `None` when
/// the session is ending and nobody can be asked.
async fn decide(
    host: &str,
    background: bool,
    log: &RefCell<LogWriter>,
    approvals: Option<&ApproveSocket>,
    judge: &Judge<'_>,
) -> Result<HostVerdict, WriteError> {
    let action = match Action::net_connect(host) {
        Ok(action) => action,
        Err(err) => {
            return Ok(HostVerdict::Refuse(format!(
                "malformed host {host:?}: {err}"
            )));
        }
    };
    // The view is read and let go at once: a promise or grant made while
    // this connection waits on a person applies to the next one.
    let (verdict, is_granted, task) = {
        let view = judge.view.borrow();
        let verdict = if background {
            view.policy.decide_background(&action)
        } else {
            view.policy.decide(&action)
        };
        let is_granted = granted(&verdict, &view.grants);
        (verdict, is_granted, view.task.clone())
    };
    if is_granted {
        log.borrow_mut()
            .append(grant_decision(&verdict.action, None))?;
        return Ok(HostVerdict::Allow);
    }
    log.borrow_mut()
        .append(crate::session::decision_event(&verdict, None))?;
    if verdict.permits() {
        return Ok(HostVerdict::Allow);
    }
    let why = if background {
        format!(
            "a background command gets only what is allowed outright ({} here)",
            verdict.decision
        )
    } else {
        match verdict.decision {
            Decision::Allow => return Ok(HostVerdict::Allow),
            Decision::Deny => format!("the policy answers {}", verdict.decision),
            Decision::Ask => match approvals {
                Some(approvals)
                    if ask(&verdict, host, log, approvals, &judge.terminal, None).await? =>
                {
                    return Ok(HostVerdict::Allow);
                }
                Some(_) => "a person answered no".to_owned(),
                None => "the session is ending and nobody can be asked".to_owned(),
            },
            Decision::AgentReview | Decision::AgentThenHuman => {
                let arguments = format!("a command connects to {host}");
                let request = ReviewRequest {
                    action: &verdict.action,
                    tool: "run_command",
                    arguments: &arguments,
                    rule: verdict.rule.as_ref().map_or("", |r| r.text.as_str()),
                    task: &task,
                };
                let answer = review(&judge.reviewer, &request).await;
                log.borrow_mut()
                    .append(answer.event(&verdict.action, None, &judge.reviewer))?;
                if !answer.approved {
                    return Ok(HostVerdict::Refuse(crate::approval::reviewer_refusal(
                        &verdict,
                        &answer.reason,
                    )));
                }
                if verdict.decision == Decision::AgentReview {
                    return Ok(HostVerdict::Allow);
                }
                match approvals {
                    Some(approvals)
                        if ask(
                            &verdict,
                            host,
                            log,
                            approvals,
                            &judge.terminal,
                            Some(&answer.reason),
                        )
                        .await? =>
                    {
                        return Ok(HostVerdict::Allow);
                    }
                    Some(_) => "a person answered no after the reviewer's yes".to_owned(),
                    None => "the session is ending and nobody can be asked".to_owned(),
                }
            }
        }
    };
    Ok(HostVerdict::Refuse(chock_sandbox::net::refusal(
        &verdict, &why,
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
    approvals: &ApproveSocket,
    judge: &Judge<'_>,
) -> Result<(), WriteError> {
    while let Some(rec) = records.recv().await {
        apply(rec, log, Some(approvals), judge).await?;
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
        apply(rec, log, None, judge).await?;
    }
    Ok(())
}

async fn apply(
    rec: Record,
    log: &RefCell<LogWriter>,
    approvals: Option<&ApproveSocket>,
    judge: &Judge<'_>,
) -> Result<(), WriteError> {
    match rec {
        Record::Decide {
            host,
            background,
            reply,
        } => {
            let verdict = decide(&host, background, log, approvals, judge).await?;
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

/// The question about one host, through the session's approval path.
async fn ask(
    verdict: &Verdict,
    host: &str,
    log: &RefCell<LogWriter>,
    approvals: &ApproveSocket,
    terminal: &TerminalSlot,
    reviewer_said: Option<&str>,
) -> Result<bool, WriteError> {
    let (request_id, question) = {
        let mut log = log.borrow_mut();
        let request_id = (log.last_id().0 + 1).to_string();
        let rule = verdict
            .rule
            .as_ref()
            .map(|rule| format!(" (rule {})", rule.text))
            .unwrap_or_default();
        let question = format!(
            "allow {}? a command the model runs (run_command) connects to {host}; the {} says {}{rule}{}",
            verdict.action,
            verdict.layer.describe(),
            verdict.decision,
            reviewer_said
                .map(|reason| format!("; the reviewer said yes: {reason}"))
                .unwrap_or_default()
        );
        log.append(ApprovalRequest {
            request_id: request_id.clone(),
            action: verdict.action.clone(),
            question: question.clone(),
            kind: chock_log::event::RequestKind::Approval,
        })?;
        (request_id, question)
    };
    let (given, by) = terminal
        .race(approvals, &request_id, &question, Wants::YesNo)
        .await;
    let yes = given == Given::Answer(chock_control::Answer::Yes);
    log.borrow_mut().append(ApprovalAnswer {
        request_id,
        answer: if yes { LogAnswer::Yes } else { LogAnswer::No },
        by: by.to_owned(),
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
    fn a_grant_lifts_a_question_but_not_a_deny_nor_a_promise() {
        let (_dir, mut policy) = policy("");
        let grants: BTreeSet<String> = [
            "net.connect.test.asked",
            "net.connect.test.denied",
            "net.connect.test.allowed",
        ]
        .map(str::to_owned)
        .into();
        let decide =
            |policy: &Policy, host: &str| policy.decide(&Action::net_connect(host).unwrap());
        assert!(granted(&decide(&policy, "asked.test"), &grants));
        assert!(!granted(&decide(&policy, "denied.test"), &grants));
        assert!(!granted(&decide(&policy, "allowed.test"), &grants));
        // A promise that narrows allow to ask is asked every time.
        policy.restrict(vec![
            chock_policy::Rule::parse(Some("net.connect.test.allowed"), Decision::Ask).unwrap(),
        ]);
        let capped = decide(&policy, "allowed.test");
        assert_eq!(capped.decision, Decision::Ask);
        assert_eq!(capped.layer, chock_policy::LayerKind::Promise);
        assert!(!granted(&capped, &grants));
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
