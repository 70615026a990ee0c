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
use chock_control::{ClientError, GreetingError};
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
                error: GreetingError::Mismatch { daemon, client },
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

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(&self)).into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(message: &str) -> (u16, &'static str) {
        let err = daemon_said(message, message.to_owned());
        (err.status.as_u16(), err.kind)
    }

    #[test]
    fn the_daemons_refusals_sort_by_whose_mistake_they_are() {
        assert_eq!(
            kind("no session 20261129-190000-001-00000001 on this daemon's machine: ..."),
            (404, "unknown_session")
        );
        assert_eq!(
            kind("'x' is not a session id (ids look like ...)"),
            (400, "bad_request")
        );
        assert_eq!(
            kind("project directory 'a' is not an absolute path: send the full path"),
            (400, "bad_request")
        );
        assert_eq!(
            kind("no project directory /x on the daemon's machine (...)"),
            (400, "bad_request")
        );
        assert_eq!(
            kind("session s belongs to /a, not /b: ..."),
            (400, "bad_request")
        );
        assert_eq!(
            kind("the answer was not delivered: session s is not taking answers (...)"),
            (502, "not_delivered")
        );
        assert_eq!(
            kind("session s has ended: there is nobody to answer"),
            (409, "refused")
        );
    }

    #[test]
    fn a_protocol_mismatch_carries_both_numbers() {
        let err = ApiError::from(ClientError::Greeting {
            address: chock_control::Address::Unix("/d.sock".into()),
            error: GreetingError::Mismatch {
                daemon: 2,
                client: 1,
            },
        });
        let json = serde_json::to_value(&err).unwrap();
        assert_eq!(json["kind"], "protocol");
        assert_eq!(json["daemon_protocol"], 2);
        assert_eq!(json["serve_protocol"], 1);
        assert_eq!(err.status, StatusCode::BAD_GATEWAY);
    }
}
