//! HTTP plumbing shared by the HTTP providers: the client, a DNS
//! resolver that never leaves the calling thread, a body reader with an
//! idle timeout, and a server-sent-events decoder.
//!
//! `chock run` is single threaded because its tool path forks (DESIGN.md).
//! reqwest's default resolver calls `getaddrinfo` on tokio's blocking pool,
//! which would start threads; [`InlineResolver`] resolves on the runtime's
//! own thread instead. A lookup blocks the session for as long as the lookup
//! takes, which is acceptable once per model call, and literal addresses
//! (the usual case for a local model) are never looked up at all.

use std::net::ToSocketAddrs;
use std::sync::Arc;
use std::time::Duration;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use super::error::{ProviderError, excerpt};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// Resolves host names with the system resolver on the calling thread.
#[derive(Debug)]
struct InlineResolver;

impl Resolve for InlineResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let found = (name.as_str(), 0)
            .to_socket_addrs()
            .map(|addrs| Box::new(addrs.collect::<Vec<_>>().into_iter()) as Addrs)
            .map_err(|err| Box::new(err) as Box<dyn std::error::Error + Send + Sync>);
        Box::pin(std::future::ready(found))
    }
}

/// A client for one provider instance.
///
/// Loading the system's trusted roots reads every file of
/// `/etc/ssl/certs`, which costs milliseconds a session pays before its
/// first request. A plain-http `base_url` (a local model) never needs them,
/// so its client gets a TLS setup with no roots at all; an https one gets
/// the platform's verifier.
///
/// Every socket sets `TCP_NODELAY`, so a request is never held back
/// waiting for the server's ACK. The server's side is not ours: one that
/// leaves Nagle's algorithm on (Python's `http.server` does) holds each
/// write after the first until this side acknowledges the previous one,
/// and on a connection reused for a second request Linux delays that ACK
/// by up to 40 ms. A fresh connection acknowledges at once, and on a
/// plain-http `base_url` (a local model, no TLS handshake) connecting
/// costs about a tenth of a millisecond, so those clients keep no idle
/// connection and each model call opens its own. An https client keeps
/// its pool, because a TLS handshake costs more than the stall it avoids.
pub(crate) fn client(instance: &str, base_url: &str) -> Result<reqwest::Client, ProviderError> {
    let fail = |detail: String| ProviderError::Client {
        instance: instance.to_owned(),
        detail,
    };
    // Several providers may be built in one process; only the first install
    // takes effect and the others find the same provider already there.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut builder = reqwest::Client::builder()
        .dns_resolver(Arc::new(InlineResolver))
        .connect_timeout(CONNECT_TIMEOUT)
        .tcp_nodelay(true);
    if base_url.starts_with("http://") {
        builder = builder.pool_max_idle_per_host(0);
        let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .map_err(|err| fail(err.to_string()))?
        .with_root_certificates(rustls::RootCertStore::empty())
        .with_no_client_auth();
        builder = builder.tls_backend_preconfigured(tls);
    }
    builder.build().map_err(|err| fail(err.to_string()))
}

/// Sends `request` and returns the response once it has a success status;
/// any other status becomes [`ProviderError::Status`] with a body excerpt.
pub(crate) async fn send(
    instance: &str,
    url: &str,
    request: reqwest::RequestBuilder,
    idle: Duration,
) -> Result<reqwest::Response, ProviderError> {
    let response = match tokio::time::timeout(idle, request.send()).await {
        Err(_) => {
            return Err(ProviderError::Timeout {
                instance: instance.to_owned(),
                after: idle,
            });
        }
        Ok(Err(err)) => {
            return Err(ProviderError::Connect {
                instance: instance.to_owned(),
                url: url.to_owned(),
                detail: error_chain(&err),
            });
        }
        Ok(Ok(response)) => response,
    };
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let hint = crate::retry::hint_from_headers(response.headers());
    let body = match tokio::time::timeout(idle, response.text()).await {
        Ok(Ok(body)) => excerpt(&body),
        Ok(Err(err)) => format!("(body unreadable: {err})"),
        Err(_) => "(body did not arrive)".to_owned(),
    };
    Err(ProviderError::Status {
        instance: instance.to_owned(),
        status: status.as_u16(),
        body,
        hint,
    })
}

/// The error and its causes on one line: reqwest's own message is often
/// just "error sending request", and the cause says what really happened.
pub fn error_chain(err: &dyn std::error::Error) -> String {
    let mut out = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        out.push_str(": ");
        out.push_str(&cause.to_string());
        source = cause.source();
    }
    out
}

/// Reads a response body chunk by chunk, giving up after `idle` of silence.
#[derive(Debug)]
pub(crate) struct Body {
    response: reqwest::Response,
    idle: Duration,
}

impl Body {
    pub(crate) fn new(response: reqwest::Response, idle: Duration) -> Self {
        Self { response, idle }
    }

    /// The next chunk, or `None` at a clean end of the body.
    pub(crate) async fn chunk(&mut self, instance: &str) -> Result<Option<Vec<u8>>, ProviderError> {
        match tokio::time::timeout(self.idle, self.response.chunk()).await {
            Err(_) => Err(ProviderError::Timeout {
                instance: instance.to_owned(),
                after: self.idle,
            }),
            Ok(Err(err)) => Err(ProviderError::Cut {
                instance: instance.to_owned(),
                detail: error_chain(&err),
            }),
            Ok(Ok(chunk)) => Ok(chunk.map(|bytes| bytes.to_vec())),
        }
    }

    /// The whole remaining body.
    pub(crate) async fn all(mut self, instance: &str) -> Result<Vec<u8>, ProviderError> {
        let mut out = Vec::new();
        while let Some(chunk) = self.chunk(instance).await? {
            out.extend_from_slice(&chunk);
        }
        Ok(out)
    }
}

/// One server-sent event: its `event:` name (empty when absent) and its
/// `data:` lines joined with newlines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    pub(crate) event: String,
    pub(crate) data: String,
}

/// Turns bytes as they arrive into whole events. Bytes are buffered until a
/// line ends, so an event split across chunks (or a UTF-8 sequence split
/// across chunks) is put back together before it is read.
#[derive(Debug, Default)]
pub(crate) struct SseDecoder {
    buf: Vec<u8>,
    event: String,
    data: Vec<String>,
}

impl SseDecoder {
    pub(crate) fn feed(&mut self, bytes: &[u8], out: &mut Vec<SseEvent>) {
        self.buf.extend_from_slice(bytes);
        while let Some(end) = self.buf.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.buf.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line);
            let line = line.trim_end_matches(['\n', '\r']);
            self.line(line, out);
        }
    }

    /// Flushes an event the stream ended without a blank line after.
    pub(crate) fn finish(&mut self, out: &mut Vec<SseEvent>) {
        if !self.buf.is_empty() {
            let rest = std::mem::take(&mut self.buf);
            let rest = String::from_utf8_lossy(&rest).into_owned();
            self.line(rest.trim_end_matches('\r'), out);
        }
        self.line("", out);
    }

    fn line(&mut self, line: &str, out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            if !self.data.is_empty() {
                out.push(SseEvent {
                    event: std::mem::take(&mut self.event),
                    data: self.data.join("\n"),
                });
                self.data.clear();
            }
            self.event.clear();
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => value.clone_into(&mut self.event),
            "data" => self.data.push(value.to_owned()),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut decoder = SseDecoder::default();
        let mut out = Vec::new();
        for chunk in chunks {
            decoder.feed(chunk, &mut out);
        }
        decoder.finish(&mut out);
        out
    }

    #[test]
    fn events_split_anywhere_are_reassembled() {
        let whole: &[u8] =
            "event: a\r\ndata: {\"x\":\"é\"}\r\n\r\n: comment\ndata: one\ndata: two\n\n".as_bytes();
        let expected = vec![
            SseEvent {
                event: "a".into(),
                data: "{\"x\":\"é\"}".into(),
            },
            SseEvent {
                event: String::new(),
                data: "one\ntwo".into(),
            },
        ];
        for split in 0..whole.len() {
            let (left, right) = whole.split_at(split);
            assert_eq!(decode(&[left, right]), expected, "split at {split}");
        }
    }

    #[test]
    fn a_last_event_without_its_blank_line_is_still_delivered() {
        let got = decode(&[b"data: [DONE]"]);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].data, "[DONE]");
    }
}
