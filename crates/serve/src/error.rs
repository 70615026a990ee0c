//! Every failure a route can have, as an HTTP status and a JSON body
//! `{"error": <message>, "kind": <kind>}` the page shows as it is.
//!
//! The kind is what the page branches on: `daemon_down` makes it say so and
//! retry, `protocol` carries both numbers so the page can name them. Errors
//! from the daemon keep the daemon's own sentence, which already says what
//! to do next.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use chock_control::{ClientError, GreetingError, PROTOCOL};
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub(crate) struct ApiError {
    #[serde(skip)]
    pub(crate) status: StatusCode,
    pub(crate) kind: &'static str,
    pub(crate) error: String,
    /// The daemon's protocol number, on a `protocol` error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) daemon_protocol: Option<u32>,
    /// This serve's protocol number, on a `protocol` error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) serve_protocol: Option<u32>,
}

impl ApiError {
    pub(crate) fn new(status: StatusCode, kind: &'static str, error: impl Into<String>) -> Self {
        ApiError {
            status,
            kind,
            error: error.into(),
            daemon_protocol: None,
            serve_protocol: None,
        }
    }

    pub(crate) fn bad_request(error: impl Into<String>) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_request", error)
    }

    pub(crate) fn not_found(error: impl Into<String>) -> Self {
        ApiError::new(StatusCode::NOT_FOUND, "not_found", error)
    }
}

impl From<ClientError> for ApiError {
    fn from(err: ClientError) -> ApiError {
        let text = err.to_string();
        match &err {
            ClientError::NotListening { .. }
            | ClientError::Connect { .. }
            | ClientError::Closed { .. }
            | ClientError::Timeout { .. }
            | ClientError::Line { .. }
            | ClientError::Write { .. } => {
                ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "daemon_down", text)
            }
            ClientError::Greeting {
                source: GreetingError::Mismatch { daemon, client },
                ..
            } => ApiError {
                daemon_protocol: Some(*daemon),
                serve_protocol: Some(*client),
                ..ApiError::new(StatusCode::BAD_GATEWAY, "protocol", text)
            },
            ClientError::Greeting { .. } | ClientError::Unexpected { .. } => {
                ApiError::new(StatusCode::BAD_GATEWAY, "daemon_refused", text)
            }
            ClientError::Daemon { message, .. } => daemon_said(message, text),
            ClientError::Request(_) | ClientError::NotUtf8Path(_) => ApiError::bad_request(text),
        }
    }
}

/// Sorts the daemon's `error` line by whose mistake it was: a session that
/// does not exist, a request the person can fix, an answer that did not
/// land, or a refusal of what the session is doing now.
fn daemon_said(message: &str, text: String) -> ApiError {
    if message.starts_with("no session ") {
        ApiError::new(StatusCode::NOT_FOUND, "unknown_session", text)
    } else if message.contains("is not a session id")
        || message.starts_with("malformed ")
        || message.starts_with("project directory ")
        || message.starts_with("no project directory ")
        || message.contains("is not a directory")
        || message.contains("belongs to")
    {
        ApiError::bad_request(text)
    } else if message.starts_with("the answer ") {
        ApiError::new(StatusCode::BAD_GATEWAY, "not_delivered", text)
    } else {
        ApiError::new(StatusCode::CONFLICT, "refused", text)
    }
}

/// The number this serve greets with, for `/api/status`.
pub(crate) const fn protocol() -> u32 {
    PROTOCOL
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(&self)).into_response()
    }
}
