//! A remote server over streamable HTTP. The caller has decided the host
//! (`mcp.<server>.host.<reversed host>`, allow only); the client built here
//! keeps to it: it resolves no other name, follows a redirect only to the
//! same host (any other is refused, naming where it pointed), verifies TLS
//! against the system's roots, and resolves on the calling thread, since
//! `chock run` starts no thread pool (DESIGN.md, Processes).

use std::net::ToSocketAddrs;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

use crate::client::{Bounds, Connected, Fault, connect};
use crate::error::McpError;

/// Resolves the allowed host, and nothing else, on the calling thread.
#[derive(Debug)]
struct OnlyHost(String);

impl Resolve for OnlyHost {
    fn resolve(&self, name: Name) -> Resolving {
        let found = if name.as_str().eq_ignore_ascii_case(&self.0) {
            (name.as_str(), 0)
                .to_socket_addrs()
                .map(|addrs| Box::new(addrs.collect::<Vec<_>>().into_iter()) as Addrs)
                .map_err(|err| Box::new(err) as Box<dyn std::error::Error + Send + Sync>)
        } else {
            Err(format!(
                "{} is not the host this server was allowed at",
                name.as_str()
            )
            .into())
        };
        Box::pin(std::future::ready(found))
    }
}

fn client(host: &str) -> Result<reqwest::Client, McpError> {
    // Only the first install in a process takes effect.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let allowed = host.to_owned();
    reqwest::Client::builder()
        .dns_resolver(Arc::new(OnlyHost(host.to_owned())))
        .redirect(reqwest::redirect::Policy::custom(move |attempt| {
            let same = attempt
                .url()
                .host_str()
                .is_some_and(|to| to.trim_matches(['[', ']']).eq_ignore_ascii_case(&allowed));
            if same && attempt.previous().len() < 5 {
                attempt.follow()
            } else {
                let to = attempt.url().to_string();
                attempt.error(format!(
                    "the server redirected to {to}, another host than the one allowed; the redirect was refused"
                ))
            }
        }))
        .connect_timeout(Duration::from_secs(10))
        .user_agent(concat!("chock/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|err| McpError::Url {
            detail: format!("cannot build the HTTP client: {err}"),
        })
}

/// Connects to the server at `url`, whose host is `host`.
pub async fn connect_url(
    url: &str,
    host: &str,
    bounds: Bounds,
    revision: Option<&str>,
) -> Result<Connected, McpError> {
    let client = client(host)?;
    let transport = StreamableHttpClientTransport::with_client(
        client.clone(),
        StreamableHttpClientTransportConfig::with_uri(url.to_owned()),
    );
    let fault: Fault = Arc::new(Mutex::new(None));
    match connect(transport, bounds, revision, fault, Vec::new()).await {
        Err(McpError::Start { detail }) => Err(McpError::Start {
            detail: why_unreachable(&client, url).await.unwrap_or(detail),
        }),
        other => other,
    }
}

/// The SDK says a request could not be sent but not why; one plain request
/// to the same url says it (a certificate no system root vouches for, a
/// refused connection, a redirect elsewhere).
async fn why_unreachable(client: &reqwest::Client, url: &str) -> Option<String> {
    let probe = client.get(url).timeout(Duration::from_secs(5)).send();
    match probe.await {
        Ok(_) => None,
        Err(err) => Some(crate::client::chain(&err)),
    }
}
