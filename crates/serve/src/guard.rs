//! What every request passes before a route sees it, and what every
//! response carries.
//!
//! - **Host** (TCP listeners only): the name the browser used must be one
//!   serve was started for (the `--host` address, `localhost`, and each
//!   `--allow-host`). A page on another site that rebinds its own name to
//!   127.0.0.1 reaches serve under that name, and is refused here before it
//!   can read a session or start one. A unix socket is reached through a
//!   proxy, which names the site itself.
//! - **Origin** on every request that acts (any method but GET, HEAD and
//!   OPTIONS, which change nothing):
//!   when the browser says which page sent it, that page must be one of
//!   serve's own (its origin names the same host and port the request
//!   was sent to). A request without an Origin is not from a browser page
//!   and passes (scripts, curl).
//! - **Body bounds**: each route takes at most so many bytes of body, and
//!   the body must arrive within [`BODY_TIMEOUT`] (10 s). A declared length past
//!   the bound is refused before anything is read, and the connection is
//!   closed rather than left waiting for bytes nobody will read.
//! - **Headers**: `X-Content-Type-Options: nosniff` and `Referrer-Policy:
//!   no-referrer` on everything, `Cache-Control: no-store` on `/api/`
//!   (session data is never kept by a browser or a proxy).
//!
//! These are hand-written rather than tower-http layers because each
//! refusal has to be serve's JSON error with a sentence that says what to
//! do, and the Host and Origin rules are serve's own.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;

/// How long a request's body may take to arrive once its headers have.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(10);
/// The body bound of a route that starts a session or replies with text:
/// the daemon's own line bound, and a little for the JSON around it.
pub const TEXT_BODY: usize = (1 << 20) + (4 << 10);
/// The body bound of an answer (yes or no, a project and a request id).
pub const ANSWER_BODY: usize = 16 << 10;

/// Which names a request may use to reach serve, and how long a body may
/// take.
#[derive(Debug, Clone)]
pub(crate) struct Hosts {
    /// `None` on a unix socket: a proxy in front names the site.
    pub(crate) allowed: Option<Vec<String>>,
    pub(crate) body_timeout: Duration,
}

/// The body bound of a route: nothing for one that reads no body.
fn body_bound(method: &Method, path: &str) -> usize {
    if *method != Method::POST {
        return 0;
    }
    if ["/answer", "/interrupt", "/detach", "/apply", "/discard"]
        .iter()
        .any(|verb| path.ends_with(verb))
    {
        ANSWER_BODY
    } else {
        TEXT_BODY
    }
}

/// The host part of a `Host` header or an origin's authority, lowercased,
/// without a port or IPv6 brackets.
fn host_name(authority: &str) -> String {
    let authority = authority.trim();
    let name = if let Some(rest) = authority.strip_prefix('[') {
        rest.split(']').next().unwrap_or(rest)
    } else if authority.matches(':').count() > 1 {
        authority
    } else {
        match authority.rsplit_once(':') {
            Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) => name,
            _ => authority,
        }
    };
    name.to_ascii_lowercase()
}

/// The names serve answers to on TCP: the address it listens on,
/// `localhost`, and what a person added.
pub(crate) fn allowed_hosts(listen_host: &str, extra: &[String]) -> Vec<String> {
    let mut names = vec![host_name(listen_host), "localhost".to_owned()];
    names.extend(extra.iter().map(|n| host_name(n)));
    names.dedup();
    names
}

pub(crate) async fn guard(
    State(hosts): State<Arc<Hosts>>,
    request: Request,
    next: Next,
) -> Response {
    let api = request.uri().path().starts_with("/api/");
    let mut response = match check(&hosts, request).await {
        Ok((request, _)) => next.run(request).await,
        Err(refusal) => refusal,
    };
    let headers = response.headers_mut();
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    if api {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}

/// The request with its body read (within its bound and time), or the
/// response that refuses it.
async fn check(hosts: &Hosts, request: Request) -> Result<(Request, ()), Response> {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    if let Some(allowed) = &hosts.allowed
        && !allowed.contains(&host_name(&host))
    {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "refused_host",
            format!(
                "refused: '{}' is not a name this chock serve was started for ({}); \
                 open it by one of those, or start it with --allow-host {} if you mean that name",
                chock_control::sanitize(&host),
                allowed.join(", "),
                chock_control::sanitize(&host_name(&host)),
            ),
        )
        .into_response());
    }
    let acts = !matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::OPTIONS
    );
    if acts && let Some(origin) = request.headers().get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("null");
        let forwarded = request
            .headers()
            .get("x-forwarded-host")
            .and_then(|v| v.to_str().ok());
        let own = |authority: &str| {
            origin
                .split_once("://")
                .is_some_and(|(_, rest)| rest.eq_ignore_ascii_case(authority))
        };
        if !(own(&host) || forwarded.is_some_and(own)) {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "refused_origin",
                format!(
                    "refused: a page from {} may not act through this chock serve, which was \
                     reached as '{}'; use the page serve itself serves",
                    chock_control::sanitize(origin),
                    chock_control::sanitize(&host),
                ),
            )
            .into_response());
        }
    }
    let bound = body_bound(request.method(), request.uri().path());
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|len| len > bound as u64) {
        return Err(too_large(request.uri().path(), bound));
    }
    if bound == 0 {
        return Ok((request, ()));
    }
    let path = request.uri().path().to_owned();
    let (parts, body) = request.into_parts();
    match tokio::time::timeout(hosts.body_timeout, axum::body::to_bytes(body, bound)).await {
        Ok(Ok(bytes)) => Ok((Request::from_parts(parts, Body::from(bytes)), ())),
        Ok(Err(_)) => Err(too_large(&path, bound)),
        Err(_) => Err(closing(ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            "bad_request",
            format!(
                "the request's body did not arrive within {:?}: send it whole, with its length",
                hosts.body_timeout
            ),
        ))),
    }
}

fn too_large(path: &str, bound: usize) -> Response {
    let what = if bound == 0 {
        format!("{path} takes no body")
    } else {
        format!("{path} takes a body of at most {bound} bytes")
    };
    closing(ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "bad_request",
        format!("the request's body is too large: {what}"),
    ))
}

/// A refusal after which the connection closes: the rest of the body is
/// not read, so the connection cannot carry another request.
fn closing(error: ApiError) -> Response {
    let mut response = error.into_response();
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names_lose_their_port_and_brackets() {
        assert_eq!(host_name("127.0.0.1:7781"), "127.0.0.1");
        assert_eq!(host_name("LocalHost"), "localhost");
        assert_eq!(host_name("[::1]:7781"), "::1");
        assert_eq!(host_name("::1"), "::1");
        assert_eq!(
            allowed_hosts("[::1]", &["Chock.Example".to_owned()]),
            ["::1", "localhost", "chock.example"]
        );
    }
}
