//! `GET /api/live?project=`: the daemon's `rows`, passed to the browser as
//! server-sent events, so a home page and a project page stay current as
//! sessions start, wait, and end.
//!
//! The first event is `rows`, every session's row as a JSON array (of one
//! project, or of every project without `project=`); each change follows
//! as `row`, the changed session's whole row. `failure` says the daemon
//! went away, and the page reconnects (and gets the whole list again).

use std::convert::Infallible;

use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::response::Response;
use axum::response::sse::Event;
use chock_control::RowFeed;
use futures_util::stream;
use serde::Deserialize;

use crate::api::{St, query};
use crate::error::ApiError;
use crate::watch;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LiveQuery {
    #[serde(default)]
    project: Option<String>,
}

enum Phase {
    First(RowFeed),
    Rows(RowFeed),
    Done,
}

pub(crate) async fn live(
    State(shared): St,
    q: Result<Query<LiveQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let q = query(q)?;
    let project = q
        .project
        .filter(|p| !p.is_empty())
        .map(std::path::PathBuf::from);
    let feed = shared.client.rows(project.as_deref()).await?;
    let events = stream::unfold(Phase::First(feed), |phase| async move {
        let (event, next) = match phase {
            Phase::First(feed) => {
                // The rows' text as the daemon sent it, not read into values.
                let rows: Vec<_> = feed.initial().iter().map(|r| &r.row).collect();
                let data = serde_json::to_string(&rows).unwrap_or_else(|_| "[]".to_owned());
                (Event::default().event("rows").data(data), Phase::Rows(feed))
            }
            Phase::Rows(mut feed) => match feed.next_row().await {
                Ok(Some(line)) => (
                    Event::default().event("row").data(line.row.get()),
                    Phase::Rows(feed),
                ),
                Ok(None) => return None,
                Err(err) => (watch::failure(err), Phase::Done),
            },
            Phase::Done => return None,
        };
        Some((Ok::<_, Infallible>(event), next))
    });
    Ok(watch::stream(events))
}
