//! `fetch_url`: read one web page, as text. Decided at
//! `net.fetch.<reversed host>` before it runs (the session asks that, see
//! [`action`]); everything else is decided here while it runs:
//!
//! - a redirect is followed only while every new host along the way is
//!   allowed outright: a hop is never asked about (a page that could ask at
//!   every hop would wear a person down), so anything but allow refuses it
//!   and names the rule that would allow it;
//! - the host's robots.txt is honoured, fetched once per host per session;
//! - an address of this machine or its networks is read only where a rule
//!   names the address, or a person was asked about that very address (see
//!   `web::Web::admit`);
//! - it only ever sends GET with no body, no credential and no header of
//!   the model's choosing: fetch_url reads, it never writes to a service;
//! - the body is bounded in size and the whole call in time.

mod html;
mod robots;
mod web;

use std::time::Duration;

use chock_policy::{Action, Policy, Verdict};
use reqwest::Url;
use schemars::JsonSchema;
use serde::Deserialize;
use tokio::time::Instant;

use super::{Decide, Effect, ToolOutput};
use crate::tool::{Offered, Tool};
pub(super) use web::{GetError, Web};

/// Most bytes of one page read; the rest is left unread and the result
/// says so.
pub(super) const MAX_BYTES: usize = 5 * 1024 * 1024;

/// Redirects one fetch follows before it gives up.
pub(super) const MAX_REDIRECTS: usize = 10;

/// The time a fetch has when the model names none, and the most it may.
const DEFAULT_TIMEOUT_SECS: u64 = 30;
const MAX_TIMEOUT_SECS: u64 = 120;

/// Read one web page (http or https) and return its text; HTML is turned into
/// text with links kept as [text](url). Only GET: nothing is sent but the
/// request for the page. The host must be allowed by the policy
/// (net.fetch.<host>), redirects are followed only to allowed hosts, and
/// robots.txt is honoured.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The page's full URL, http:// or https://
    url: String,
    /// Seconds the whole fetch may take (default 30)
    #[schemars(range(min = 1, max = MAX_TIMEOUT_SECS))]
    timeout_secs: Option<u64>,
}

impl Tool for Args {
    const NAME: &'static str = "fetch_url";

    /// Decided at `net.fetch.<reversed host>` of its URL; a URL or host
    /// that cannot be read is decided nowhere, and the tool answers why.
    fn decided_at(&self, _offered: Offered<'_>) -> Decide {
        page_url(&self.url)
            .ok()
            .and_then(|url| Action::net_fetch(url.host_str()?).ok())
            .map_or(Decide::Nothing, Decide::At)
    }
}

/// The URL the model gave, if fetch_url can read it.
fn page_url(text: &str) -> Result<Url, String> {
    let url = Url::parse(text.trim()).map_err(|err| {
        format!(
            "'{text}' is not a URL fetch_url can read ({err}); give a full http:// or https:// URL"
        )
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "fetch_url reads http and https only, not {}:",
            url.scheme()
        ));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(
            "fetch_url sends no credential; give the URL without user:password@".to_owned(),
        );
    }
    let Some(host) = url.host_str() else {
        return Err(format!("{text} names no host"));
    };
    Action::net_fetch(host).map_err(|err| format!("cannot read {text}: {err}"))?;
    Ok(url)
}

/// Fetches the page. The first host was decided before the call ran; every
/// other host a redirect reaches is decided here, where nobody is asked.
pub(super) async fn run(web: &Web, policy: &Policy, args: Args) -> ToolOutput {
    let mut decisions = Vec::new();
    let result = fetch(web, policy, &args, &mut decisions).await;
    let output = match result {
        Ok(output) => output,
        Err(text) => ToolOutput::error(text),
    };
    if decisions.is_empty() {
        output
    } else {
        output.with_effect(Effect::Decisions(decisions))
    }
}

async fn fetch(
    web: &Web,
    policy: &Policy,
    args: &Args,
    decisions: &mut Vec<Verdict>,
) -> Result<ToolOutput, String> {
    let secs = args.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS);
    if !(1..=MAX_TIMEOUT_SECS).contains(&secs) {
        return Err(format!(
            "timeout_secs must be between 1 and {MAX_TIMEOUT_SECS}, not {secs}"
        ));
    }
    let deadline = Instant::now() + Duration::from_secs(secs);
    let first = page_url(&args.url)?;
    let first_host = first.host_str().unwrap_or_default().to_ascii_lowercase();
    let mut url = first.clone();
    let mut trail: Vec<String> = Vec::new();
    loop {
        let host = url.host_str().unwrap_or_default().to_ascii_lowercase();
        // The host the call was decided at needs no second answer; a host
        // a redirect brought in is decided where nobody may be asked.
        if host != first_host {
            let action = Action::net_fetch(&host).map_err(|err| {
                format!("{url} redirected to a host fetch_url cannot name: {err}")
            })?;
            let verdict = policy.decide_unattended(&action);
            let refused = !verdict.permits();
            if refused {
                let text = hop_refusal(&url, &trail, &verdict);
                decisions.push(verdict);
                return Err(text);
            }
            decisions.push(verdict);
        }
        web.admit(policy, &url, url == first, decisions)?;
        let path = match url.query() {
            Some(query) => format!("{}?{query}", url.path()),
            None => url.path().to_owned(),
        };
        web.robots(&url, deadline).await.check(&path)?;
        let fetched = match web.get(&url, &[], MAX_BYTES, deadline).await {
            Ok(fetched) => fetched,
            Err(GetError::Timeout) => {
                return Err(format!(
                    "timed out after {secs} s reading {url}; the server is slow or not answering. A larger timeout_secs (at most {MAX_TIMEOUT_SECS}) may help"
                ));
            }
            Err(GetError::Failed(why)) => return Err(format!("cannot read {url}: {why}")),
        };
        if (300..400).contains(&fetched.status) {
            let Some(location) = fetched.location.as_deref() else {
                return Err(format!(
                    "{url} answered {} with no Location to follow",
                    fetched.status
                ));
            };
            let next = url.join(location).map_err(|err| {
                format!("{url} redirected to '{location}', which is not a URL: {err}")
            })?;
            if !matches!(next.scheme(), "http" | "https") {
                return Err(format!(
                    "{url} redirected to {next}; fetch_url follows http and https only"
                ));
            }
            trail.push(url.to_string());
            if trail.len() > MAX_REDIRECTS {
                return Err(format!(
                    "{first} redirected more than {MAX_REDIRECTS} times; the last hop was to {next}"
                ));
            }
            url = next;
            continue;
        }
        return Ok(render(&url, &trail, &fetched));
    }
}

/// Why a redirect hop was refused, naming the rule that would allow it.
fn hop_refusal(url: &Url, trail: &[String], verdict: &Verdict) -> String {
    let from = trail.last().map_or("the page", String::as_str);
    let by = match &verdict.rule {
        Some(rule) => format!("the rule {} ({})", rule.text, verdict.layer.describe()),
        None => "no rule names it".to_owned(),
    };
    let help = verdict
        .help
        .as_ref()
        .map(|help| format!("\n{help}"))
        .unwrap_or_default();
    format!(
        "{from} redirected to {url}, and that hop was refused: {} is {} there, by {by}. \
         A redirect is followed only to a host allowed outright; nobody is asked about a hop.{help}",
        verdict.action, verdict.decision
    )
}

fn render(url: &Url, trail: &[String], fetched: &web::Fetched) -> ToolOutput {
    let mut head = format!("url: {url}\nstatus: {}\n", fetched.status);
    if !fetched.content_type.is_empty() {
        head.push_str(&format!("content-type: {}\n", fetched.content_type));
    }
    if let Some(first) = trail.first() {
        head.push_str(&format!(
            "redirected from: {first} ({} hop{})\n",
            trail.len(),
            if trail.len() == 1 { "" } else { "s" }
        ));
    }
    let kind = fetched
        .content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let texty = kind.is_empty()
        || kind.starts_with("text/")
        || kind.ends_with("+json")
        || kind.ends_with("+xml")
        || matches!(
            kind.as_str(),
            "application/json"
                | "application/xml"
                | "application/javascript"
                | "application/x-javascript"
                | "application/ecmascript"
                | "application/toml"
                | "application/yaml"
                | "application/x-yaml"
        );
    let binary = fetched.body.iter().take(8192).any(|&b| b == 0);
    if !texty || binary {
        return ToolOutput::error(format!(
            "{head}\nfetch_url reads text, and this is {} ({} bytes); it was not returned",
            if kind.is_empty() {
                "binary data"
            } else {
                &kind
            },
            fetched.body.len()
        ));
    }
    let raw = String::from_utf8_lossy(&fetched.body);
    let looks_html = kind == "text/html"
        || kind == "application/xhtml+xml"
        || (kind.is_empty()
            && raw
                .trim_start()
                .to_ascii_lowercase()
                .starts_with("<!doctype html"));
    let mut text = if looks_html {
        html::to_text(&raw)
    } else {
        raw.into_owned()
    };
    if fetched.cut {
        text.push_str(&format!(
            "\n\n[the page is longer than {MAX_BYTES} bytes; only that much was read]"
        ));
    }
    let out = format!("{head}\n{text}");
    if (200..300).contains(&fetched.status) {
        ToolOutput::ok(out)
    } else {
        ToolOutput::error(out)
    }
}

#[cfg(test)]
mod tests;
