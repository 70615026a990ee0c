//! The HTTP side of fetch_url and web_search: one client per session that
//! never follows a redirect by itself and only connects to addresses this
//! module has checked, robots.txt fetched once per host, and bodies read
//! under a size and a time bound.
//!
//! The client's resolver answers only names [`Web::admit`] (or
//! [`Web::trust`], for the operator's search engine) has already looked up
//! and checked, so the address a connection goes to is the address the
//! policy saw: a name cannot be resolved to one address for the check and
//! another for the connection. Lookups run on the session's own thread, as
//! the providers' do (`provider::http`), so no thread is started.

use std::cell::{OnceCell, RefCell};
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chock_policy::{Action, Decision, Pattern, Policy, Verdict, rule_block};
use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use tokio::time::Instant;

use super::robots::Robots;

/// The User-Agent fetch_url sends; its product token is what robots.txt
/// groups are matched against.
pub(super) const USER_AGENT: &str = concat!("chock/", env!("CARGO_PKG_VERSION"), " (fetch_url)");

/// Most bytes of robots.txt read; RFC 9309 asks for at least 500 KiB.
const ROBOTS_MAX_BYTES: usize = 512 * 1024;

/// Redirects robots.txt may take within its own host.
const ROBOTS_MAX_REDIRECTS: usize = 5;

/// Names checked for this session and the addresses they may connect to.
type Checked = Arc<Mutex<HashMap<String, Vec<SocketAddr>>>>;

/// Answers only names that were checked before the request was sent.
#[derive(Debug)]
struct CheckedResolver(Checked);

impl Resolve for CheckedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let key = name.as_str().to_ascii_lowercase();
        let found = self
            .0
            .lock()
            .ok()
            .and_then(|map| map.get(&key).cloned())
            .ok_or_else(|| {
                Box::new(std::io::Error::other(format!(
                    "{key} was not checked before the request"
                ))) as Box<dyn std::error::Error + Send + Sync>
            })
            .map(|addrs| Box::new(addrs.into_iter()) as Addrs);
        Box::pin(std::future::ready(found))
    }
}

/// A body, read whole or up to the size bound.
#[derive(Debug)]
pub(crate) struct Fetched {
    pub(crate) status: u16,
    pub(crate) content_type: String,
    pub(crate) location: Option<String>,
    pub(crate) body: Vec<u8>,
    /// The body went on past the bound and was cut there.
    pub(crate) cut: bool,
}

/// Why a request gave no answer.
#[derive(Debug)]
pub(crate) enum GetError {
    /// The deadline passed.
    Timeout,
    /// Anything else, worded.
    Failed(String),
}

/// The session's web client and what it has learned.
#[derive(Debug, Default)]
pub(crate) struct Web {
    client: OnceCell<reqwest::Client>,
    checked: Checked,
    robots: RefCell<HashMap<String, Rc<Robots>>>,
}

impl Web {
    fn client(&self) -> Result<&reqwest::Client, GetError> {
        if let Some(client) = self.client.get() {
            return Ok(client);
        }
        // Only the first install in a process takes effect; a provider may
        // already have installed the same one.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .dns_resolver(Arc::new(CheckedResolver(Arc::clone(&self.checked))))
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(USER_AGENT)
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|err| GetError::Failed(format!("cannot build the HTTP client: {err}")))?;
        Ok(self.client.get_or_init(|| client))
    }

    /// Looks up `url`'s host and lets the client connect to what it finds,
    /// with no check: the operator's own search engine, which the operator
    /// named and a project cannot pick.
    pub(crate) fn trust(&self, url: &Url) -> Result<(), String> {
        let (host, addrs) = lookup(url)?;
        self.remember(&host, addrs);
        Ok(())
    }

    /// Looks up `url`'s host and keeps the addresses fetch_url may read: a
    /// public address always (the host's name was decided already), a
    /// loopback, private or link-local one only when a rule naming that
    /// address answers allow at `net.fetch.<address>`. Each such question
    /// is pushed to `decisions` for the log. Fails, naming the rule to
    /// write, when nothing is left.
    ///
    /// `asked` is true for the URL the call was decided at: when that URL
    /// names the address itself and the policy answers ask there, a person
    /// was asked about exactly this address and said yes (the call would
    /// not run otherwise), which names it as well as a rule does.
    pub(crate) fn admit(
        &self,
        policy: &Policy,
        url: &Url,
        asked: bool,
        decisions: &mut Vec<Verdict>,
    ) -> Result<(), String> {
        let (host, addrs) = lookup(url)?;
        let literal = host.parse::<IpAddr>().is_ok();
        let mut kept = Vec::new();
        let mut refused = None;
        for addr in addrs {
            if is_public(addr.ip()) {
                kept.push(addr);
                continue;
            }
            let ip = addr.ip().to_canonical();
            let Ok(action) = Action::net_fetch(&ip.to_string()) else {
                continue;
            };
            if asked && literal && policy.decision(&action) == Decision::Ask {
                kept.push(addr);
                continue;
            }
            let verdict = policy.decide_unattended(&action);
            let named = names_address(&verdict);
            if verdict.permits() && named {
                kept.push(addr);
            } else if refused.is_none() {
                refused = Some(local_refusal(&host, ip, &verdict, named));
            }
            decisions.push(verdict);
        }
        if kept.is_empty() {
            return Err(refused.unwrap_or_else(|| format!("{host} has no address to connect to")));
        }
        self.remember(&host, kept);
        Ok(())
    }

    fn remember(&self, host: &str, addrs: Vec<SocketAddr>) {
        if let Ok(mut map) = self.checked.lock() {
            map.insert(host.to_ascii_lowercase(), addrs);
        }
    }

    /// GET `url` with `headers`, reading at most `max_bytes` of the body,
    /// all before `deadline`.
    pub(crate) async fn get(
        &self,
        url: &Url,
        headers: &[(&str, &str)],
        max_bytes: usize,
        deadline: Instant,
    ) -> Result<Fetched, GetError> {
        let mut request = self.client()?.get(url.clone());
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let mut response = match tokio::time::timeout_at(deadline, request.send()).await {
            Err(_) => return Err(GetError::Timeout),
            Ok(Err(err)) => {
                return Err(GetError::Failed(chock_providers::error_chain(&err)));
            }
            Ok(Ok(response)) => response,
        };
        let header = |name: reqwest::header::HeaderName| {
            response
                .headers()
                .get(name)
                .and_then(|value| value.to_str().ok())
                .map(str::to_owned)
        };
        let status = response.status().as_u16();
        let content_type = header(reqwest::header::CONTENT_TYPE).unwrap_or_default();
        let location = header(reqwest::header::LOCATION);
        let mut body = Vec::new();
        let mut cut = false;
        loop {
            match tokio::time::timeout_at(deadline, response.chunk()).await {
                Err(_) => return Err(GetError::Timeout),
                Ok(Err(err)) => {
                    return Err(GetError::Failed(format!(
                        "the body was cut off: {}",
                        chock_providers::error_chain(&err)
                    )));
                }
                Ok(Ok(None)) => break,
                Ok(Ok(Some(chunk))) => {
                    let room = max_bytes - body.len();
                    if chunk.len() > room {
                        body.extend_from_slice(&chunk[..room]);
                        cut = true;
                        break;
                    }
                    body.extend_from_slice(&chunk);
                }
            }
        }
        Ok(Fetched {
            status,
            content_type,
            location,
            body,
            cut,
        })
    }

    /// The robots.txt rules of `url`'s host, fetched on first use and kept
    /// for the session. A 4xx answer means no rules; a 5xx answer refuses
    /// everything (RFC 9309); a timeout or a failed connection refuses
    /// this fetch and is not kept, so a later call tries again.
    pub(crate) async fn robots(&self, url: &Url, deadline: Instant) -> Rc<Robots> {
        let origin = url.origin().ascii_serialization();
        if let Some(known) = self.robots.borrow().get(&origin) {
            return Rc::clone(known);
        }
        let mut at = match Url::parse(&format!("{origin}/robots.txt")) {
            Ok(at) => at,
            Err(err) => return Rc::new(Robots::unreachable(&origin, err.to_string())),
        };
        let first = at.to_string();
        let mut hops = 0;
        let robots = loop {
            let fetched = match self.get(&at, &[], ROBOTS_MAX_BYTES, deadline).await {
                Ok(fetched) => fetched,
                Err(GetError::Timeout) => {
                    return Rc::new(Robots::unreachable(
                        &first,
                        "it did not answer in time".to_owned(),
                    ));
                }
                Err(GetError::Failed(why)) => return Rc::new(Robots::unreachable(&first, why)),
            };
            match fetched.status {
                200..=299 => break Robots::parse(&first, &String::from_utf8_lossy(&fetched.body)),
                300..=399 if hops < ROBOTS_MAX_REDIRECTS => {
                    let next = fetched.location.and_then(|l| at.join(&l).ok());
                    match next {
                        // Within the same host only: another host's file
                        // would need a policy question of its own.
                        Some(next) if next.origin() == at.origin() => {
                            at = next;
                            hops += 1;
                        }
                        _ => break Robots::allow_all(&first),
                    }
                }
                500..=599 => {
                    break Robots::unreachable(&first, format!("status {}", fetched.status));
                }
                _ => break Robots::allow_all(&first),
            }
        };
        let robots = Rc::new(robots);
        self.robots.borrow_mut().insert(origin, Rc::clone(&robots));
        robots
    }
}

/// The host of `url` (lower case, IPv6 without brackets) and its addresses.
fn lookup(url: &Url) -> Result<(String, Vec<SocketAddr>), String> {
    let host = url
        .host_str()
        .ok_or_else(|| format!("{url} names no host"))?
        .to_ascii_lowercase();
    let port = url
        .port_or_known_default()
        .ok_or_else(|| format!("{url} names no port and its scheme has none"))?;
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(&host);
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return Ok((bare.to_owned(), vec![SocketAddr::new(ip, port)]));
    }
    let addrs: Vec<SocketAddr> = (bare, port)
        .to_socket_addrs()
        .map_err(|err| format!("cannot look up {bare}: {err}"))?
        .collect();
    Ok((bare.to_owned(), addrs))
}

/// Whether `ip` is an address anyone on the internet could reach, as
/// opposed to this machine, its networks, or nowhere.
pub(crate) fn is_public(ip: IpAddr) -> bool {
    match ip.to_canonical() {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            !(v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || a == 0
                || (a == 100 && (64..128).contains(&b))
                || (a == 198 && (b == 18 || b == 19))
                || a >= 240)
        }
        IpAddr::V6(v6) => {
            let first = v6.segments()[0];
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80)
        }
    }
}

/// Whether the rule that answered names the address itself, or a class
/// inside `net.fetch` narrower than the whole namespace: `net.fetch.*` or a
/// rule naming nothing does not open this machine and its networks.
fn names_address(verdict: &Verdict) -> bool {
    let Some(rule) = &verdict.rule else {
        return false;
    };
    let Some(action) = rule
        .text
        .split("\"")
        .nth(1)
        .and_then(|text| Pattern::parse(text).ok())
    else {
        return false;
    };
    match action {
        Pattern::Exact(_) => true,
        Pattern::Class(prefix) => prefix.starts_with("net.fetch."),
        Pattern::CatchAll => false,
    }
}

fn local_refusal(host: &str, ip: IpAddr, verdict: &Verdict, named: bool) -> String {
    let why = if verdict.permits() && !named {
        format!(
            "{} allows it, but only a rule that names the address opens a loopback, private or link-local address",
            verdict
                .rule
                .as_ref()
                .map_or_else(|| "a rule".to_owned(), |r| r.text.clone())
        )
    } else {
        let by = verdict.rule.as_ref().map_or_else(
            || "no rule names it".to_owned(),
            |r| format!("rule {}", r.text),
        );
        format!("{} is {} ({by})", verdict.action, verdict.decision)
    };
    let rule = format!(
        ".{{ .action = \"{}\", .decision = .allow }}",
        verdict.action
    );
    format!(
        "fetch_url does not read {host} at {ip}: it is a loopback, private or link-local address, and {why}. \
         To permit it, add this rule to the project's chock.zon:\n{}",
        rule_block(&rule)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_machine_and_its_networks_are_not_public() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
        ] {
            assert!(!is_public(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["93.184.216.34", "2606:4700::1111", "8.8.8.8"] {
            assert!(is_public(ip.parse().unwrap()), "{ip}");
        }
    }
}
