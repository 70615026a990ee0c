//! The routes that act on a session beyond answering it: carry an ended
//! one on, interrupt its turn, hand it to the daemon, its workspace's diff,
//! apply and discard, and the repository's stop. Each is one daemon verb;
//! serve adds nothing but the JSON around the daemon's answer.

use axum::Json;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::json;

use crate::api::{St, body, project, query};
use crate::error::ApiError;

/// The most of a diff the page is sent as JSON; past it the page links to
/// the whole diff as text.
pub(crate) const DIFF_SHOWN: usize = 256 << 10;
/// The most of a diff the full-text link sends.
pub(crate) const DIFF_FULL: usize = 32 << 20;

/// Who a stop made from the page names as the person who made it.
pub(crate) const STOP_WHO: &str = "a person at the browser (chock serve)";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProjectBody {
    project: String,
}

const PROJECT_SHAPE: &str = r#"{"project": "<absolute path>"}"#;

fn project_body(
    b: Result<Json<ProjectBody>, JsonRejection>,
) -> Result<std::path::PathBuf, ApiError> {
    project(Some(body(b, PROJECT_SHAPE)?.project))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MessageBody {
    project: String,
    message: String,
}

/// A reply to an ended session: the daemon carries it on, in the same log
/// and workspace, as `chock run --continue <id> <message>` would.
pub(crate) async fn carry_on(
    State(shared): St,
    Path(id): Path<String>,
    b: Result<Json<MessageBody>, JsonRejection>,
) -> Result<Response, ApiError> {
    let b = body(b, r#"{"project": "<absolute path>", "message": "<text>"}"#)?;
    let project = project(Some(b.project))?;
    if b.message.trim().is_empty() {
        return Err(ApiError::bad_request(
            "the reply is empty: say what the session should do next",
        ));
    }
    let started = shared
        .client
        .continue_session(&project, &id, &b.message)
        .await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(json!({ "session": started.session })),
    )
        .into_response())
}

pub(crate) async fn interrupt(
    State(shared): St,
    Path(id): Path<String>,
    b: Result<Json<ProjectBody>, JsonRejection>,
) -> Result<Response, ApiError> {
    let project = project_body(b)?;
    shared.client.interrupt(&project, &id).await?;
    Ok(Json(json!({ "interrupted": true })).into_response())
}

/// Hands a session running elsewhere (a person's terminal) to the daemon.
pub(crate) async fn detach(
    State(shared): St,
    Path(id): Path<String>,
    b: Result<Json<ProjectBody>, JsonRejection>,
) -> Result<Response, ApiError> {
    let project = project_body(b)?;
    let started = shared.client.detach(&project, &id).await?;
    Ok(Json(json!({ "session": started.session })).into_response())
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DiffQuery {
    #[serde(default)]
    project: Option<String>,
    /// `1`: the whole diff as text, not the page's JSON.
    #[serde(default)]
    full: Option<u8>,
}

/// The workspace's changes: as JSON for the page (cut at [`DIFF_SHOWN`],
/// with the full size), or with `full=1` as plain text up to [`DIFF_FULL`].
pub(crate) async fn diff(
    State(shared): St,
    Path(id): Path<String>,
    q: Result<Query<DiffQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let q = query(q)?;
    let project = project(q.project)?;
    if q.full == Some(1) {
        let diff = shared.client.diff(&project, &id, DIFF_FULL).await?;
        let mut text = diff.diff;
        if diff.truncated {
            text.push_str(&format!(
                "\n... the diff is {} bytes; the first {} are shown. `chock workspace diff {id}` prints it whole.\n",
                diff.bytes, DIFF_FULL
            ));
        }
        return Ok(([("content-type", "text/plain; charset=utf-8")], text).into_response());
    }
    let diff = shared.client.diff(&project, &id, DIFF_SHOWN).await?;
    Ok(Json(diff).into_response())
}

pub(crate) async fn apply(
    State(shared): St,
    Path(id): Path<String>,
    b: Result<Json<ProjectBody>, JsonRejection>,
) -> Result<Response, ApiError> {
    let project = project_body(b)?;
    let said = shared.client.apply(&project, &id).await?;
    Ok(Json(json!({ "said": said })).into_response())
}

pub(crate) async fn discard(
    State(shared): St,
    Path(id): Path<String>,
    b: Result<Json<ProjectBody>, JsonRejection>,
) -> Result<Response, ApiError> {
    let project = project_body(b)?;
    let said = shared.client.discard(&project, &id).await?;
    Ok(Json(json!({ "said": said })).into_response())
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StopBody {
    project: String,
    #[serde(default)]
    reason: Option<String>,
}

/// The same stop `chock stop` makes, for the project's repository, naming
/// the browser's person as who made it.
pub(crate) async fn stop(
    State(shared): St,
    b: Result<Json<StopBody>, JsonRejection>,
) -> Result<Response, ApiError> {
    let b = body(b, r#"{"project": "<absolute path>", "reason": "<why>"}"#)?;
    let project = project(Some(b.project))?;
    let reason = b
        .reason
        .filter(|r| !r.trim().is_empty())
        .unwrap_or_else(|| "a person stopped agents here from the browser".to_owned());
    let said = shared.client.stop(&project, STOP_WHO, &reason).await?;
    Ok(Json(json!({ "said": said })).into_response())
}
