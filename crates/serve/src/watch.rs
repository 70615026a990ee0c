//! `GET /api/sessions/{id}/watch`: the daemon's `watch`, passed to the
//! browser as server-sent events.
//!
//! The first event is `row` (the watch's header: the session's row when the
//! watch began, with no SSE id so the browser's last id is untouched). Each
//! log event follows as `log` with the event's own id as the SSE `id:`, so a
//! browser that lost the connection reconnects with `Last-Event-ID` (or
//! `?after=`) and the daemon resumes after it: no gap, no repeat. `end` says
//! the session ended and the stream is complete, so the page stops instead
//! of reconnecting; `failure` says the daemon went away mid-stream, and the
//! page reconnects from its last id.

use std::convert::Infallible;

use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use chock_control::Watch;
use futures_util::stream;

use crate::api::{ProjectQuery, St, project, query};
use crate::error::ApiError;

enum Phase {
    Header(Watch, String),
    Events(Watch),
    Done,
}

pub(crate) async fn watch(
    State(shared): St,
    Path(id): Path<String>,
    headers: HeaderMap,
    q: Result<Query<ProjectQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let q = query(q)?;
    let project = project(q.project)?;
    // The browser's own reconnect names the last id it holds; it wins over
    // the `after` in the URL, which is where the page first started.
    let after = last_event_id(&headers)?.or(q.after).unwrap_or(0);
    let watch = shared.client.watch(&project, &id, after).await?;
    let header = watch.header().to_string();
    let events = stream::unfold(Phase::Header(watch, header), |phase| async move {
        let (event, next) = match phase {
            Phase::Header(watch, header) => (
                Event::default().event("row").data(header),
                Phase::Events(watch),
            ),
            Phase::Events(mut watch) => match watch.next_event().await {
                Ok(Some(line)) => (
                    Event::default()
                        .id(line.id.to_string())
                        .event("log")
                        .data(line.line),
                    Phase::Events(watch),
                ),
                Ok(None) => (Event::default().event("end").data("{}"), Phase::Done),
                Err(err) => (failure(err), Phase::Done),
            },
            Phase::Done => return None,
        };
        Some((Ok::<_, Infallible>(event), next))
    });
    Ok(stream(events))
}

/// A stream of server-sent events as the response, kept alive.
pub(crate) fn stream(
    events: impl futures_util::Stream<Item = Result<Event, Infallible>> + Send + 'static,
) -> Response {
    (
        // nginx buffers responses unless told not to, which would hold
        // events back until a buffer fills.
        [("x-accel-buffering", "no")],
        Sse::new(events).keep_alive(KeepAlive::default()),
    )
        .into_response()
}

/// The `failure` event: the daemon went away mid-stream, said as serve's
/// JSON error; the page reconnects.
pub(crate) fn failure(err: chock_control::ClientError) -> Event {
    let data = serde_json::to_string(&ApiError::from(err)).unwrap_or_default();
    Event::default().event("failure").data(data)
}

fn last_event_id(headers: &HeaderMap) -> Result<Option<u64>, ApiError> {
    let Some(value) = headers.get("last-event-id") else {
        return Ok(None);
    };
    value
        .to_str()
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .map(Some)
        .ok_or_else(|| {
            ApiError::bad_request(format!(
                "Last-Event-ID {:?} is not an event id: send the id of the last event received",
                String::from_utf8_lossy(value.as_bytes())
            ))
        })
}
