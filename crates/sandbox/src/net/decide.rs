//! Who decides a destination host. The proxy knows nothing about policy: it
//! asks a [`Decider`] about each host a connection names, and, after
//! resolution, whether an internal address (loopback, private, link-local)
//! is named by a rule of its own. [`PolicyDecider`] is the one the runner
//! uses: `net.connect.<reversed host>` folded by chock-policy, with a
//! callback that reaches a person for an ask at a foreground call, and
//! nothing but allow for a background command.

use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;

use chock_policy::{Action, Policy, Verdict};

/// What the decider answered about one host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostVerdict {
    /// Connect (the internal-address check still applies).
    Allow,
    /// Refuse; the text says why and which rule would permit it.
    Refuse(String),
}

/// A boxed future, as the decider returns it.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Decides the destination of each proxied connection.
pub trait Decider: Send + Sync + 'static {
    /// Decides `host` (a name or an address literal, as the client wrote
    /// it). May wait for a person.
    fn decide<'a>(&'a self, host: &'a str) -> BoxFuture<'a, HostVerdict>;

    /// Whether a rule names `addr` itself and allows it outright: only then
    /// may a connection reach an internal address.
    fn names_address(&self, addr: IpAddr) -> bool;
}

/// Asks a person about an ask verdict; true means yes. Called only for a
/// foreground command.
pub type AskFn = Arc<dyn Fn(Verdict) -> BoxFuture<'static, bool> + Send + Sync>;

/// `net.connect.<reversed host>` decided by a [`Policy`].
pub struct PolicyDecider {
    policy: Arc<Policy>,
    background: bool,
    ask: Option<AskFn>,
}

impl std::fmt::Debug for PolicyDecider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicyDecider")
            .field("background", &self.background)
            .field("ask", &self.ask.is_some())
            .finish_non_exhaustive()
    }
}

impl PolicyDecider {
    /// For a foreground command: an ask reaches `ask`; without one (nobody
    /// to ask, e.g. `chock sandbox`) an ask is refused with the rule named.
    pub fn foreground(policy: Arc<Policy>, ask: Option<AskFn>) -> Self {
        Self {
            policy,
            background: false,
            ask,
        }
    }

    /// For a background command: only what is allowed outright; a host that
    /// would have asked is refused, never queued.
    pub fn background(policy: Arc<Policy>) -> Self {
        Self {
            policy,
            background: true,
            ask: None,
        }
    }
}

/// The refusal text: the action, the decision and where it came from, and
/// the rule that would permit it.
pub fn refusal(v: &Verdict, why: &str) -> String {
    let mut out = format!("{} refused: {why}", v.action);
    match &v.help {
        Some(h) => {
            out.push_str("; ");
            out.push_str(&h.to_string());
        }
        None => {
            out.push_str(&format!(
                "; to permit it, add .{{ .action = \"{}\", .decision = .allow }} to chock.zon",
                v.action
            ));
        }
    }
    out
}

impl Decider for PolicyDecider {
    fn decide<'a>(&'a self, host: &'a str) -> BoxFuture<'a, HostVerdict> {
        Box::pin(async move {
            let action = match Action::net_connect(host) {
                Ok(a) => a,
                Err(e) => return HostVerdict::Refuse(format!("malformed host: {e}")),
            };
            // A background command whose router is there only to publish
            // ports: every host is refused, as a session refuses it.
            if self.background
                && let Some(closed) = self.policy.background_refusal()
            {
                return HostVerdict::Refuse(closed);
            }
            let v = if self.background {
                self.policy.decide_background(&action)
            } else {
                self.policy.decide(&action)
            };
            if v.permits() {
                return HostVerdict::Allow;
            }
            if v.refused() {
                let why = if self.background {
                    format!(
                        "a background command gets only what is allowed outright ({} here)",
                        v.decision
                    )
                } else {
                    format!("the policy answers {}", v.decision)
                };
                return HostVerdict::Refuse(refusal(&v, &why));
            }
            let Some(ask) = &self.ask else {
                return HostVerdict::Refuse(refusal(
                    &v,
                    &format!(
                        "the policy answers {} and nobody can be asked here",
                        v.decision
                    ),
                ));
            };
            if ask(v.clone()).await {
                HostVerdict::Allow
            } else {
                HostVerdict::Refuse(refusal(&v, "a person answered no"))
            }
        })
    }

    fn names_address(&self, addr: IpAddr) -> bool {
        Action::net_connect(&addr.to_string())
            .map(|a| self.policy.decide_background(&a).permits())
            .unwrap_or(false)
    }
}
