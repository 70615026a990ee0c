//! The routes: the page and its assets, and the JSON routes under `/api/`
//! that the page uses. One daemon verb per route, nothing cached: every
//! answer is the daemon's answer at the moment it was asked.
//!
//! | route | daemon verb |
//! |---|---|
//! | `GET /api/status` | the greeting alone |
//! | `GET /api/sessions?project=` | `list` (`all` without a project) |
//! | `GET /api/live?project=` | `rows`, as server-sent events |
//! | `POST /api/sessions` `{"project","message"}` | `start` |
//! | `GET /api/sessions/{id}?project=` | `list`, that session's row |
//! | `GET /api/sessions/{id}/events?after=\|before=&limit=` | `read` |
//! | `GET /api/sessions/{id}/watch?project=&after=` | `watch`, as server-sent events |
//! | `POST /api/sessions/{id}/answer` `{"project","request","answer"}` | `answer` |
//! | `POST /api/sessions/{id}/reply` `{"project","request","text"}` | `reply` |
//! | `POST /api/sessions/{id}/continue` `{"project","message"}` | `continue` |
//! | `POST /api/sessions/{id}/interrupt` `{"project"}` | `interrupt` |
//! | `POST /api/sessions/{id}/detach` `{"project"}` | `detach` |
//! | `GET /api/sessions/{id}/diff?project=[&full=1]` | `diff` |
//! | `POST /api/sessions/{id}/apply` `{"project"}` | `apply` |
//! | `POST /api/sessions/{id}/discard` `{"project"}` | `discard` |
//! | `POST /api/stop` `{"project","reason"}` | `stop` |

use std::path::PathBuf;
use std::sync::Arc;

use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use chock_control::Answer;
use serde::Deserialize;
use serde_json::json;

use crate::error::ApiError;
use crate::{PAGE, Shared, control, live, page, watch};

/// The state every handler takes: the one way to the daemon.
pub(crate) type St = State<Arc<Shared>>;

pub(crate) fn router(shared: Arc<Shared>, hosts: Arc<crate::guard::Hosts>) -> Router {
    Router::new()
        .route("/", get(page::index))
        .route("/app.js", get(page::script))
        .route("/render.js", get(page::render))
        .route("/style.css", get(page::style))
        .route("/api/status", get(status))
        .route("/api/sessions", get(list).post(start))
        .route("/api/sessions/{id}", get(row))
        .route("/api/sessions/{id}/events", get(events))
        .route("/api/sessions/{id}/watch", get(watch::watch))
        .route("/api/sessions/{id}/answer", post(answer))
        .route("/api/sessions/{id}/reply", post(reply))
        .route("/api/sessions/{id}/continue", post(control::carry_on))
        .route("/api/sessions/{id}/interrupt", post(control::interrupt))
        .route("/api/sessions/{id}/detach", post(control::detach))
        .route("/api/sessions/{id}/diff", get(control::diff))
        .route("/api/sessions/{id}/apply", post(control::apply))
        .route("/api/sessions/{id}/discard", post(control::discard))
        .route("/api/stop", post(control::stop))
        .route("/api/live", get(live::live))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(shared)
        .layer(axum::middleware::from_fn_with_state(
            hosts,
            crate::guard::guard,
        ))
}

async fn not_found(uri: Uri) -> ApiError {
    ApiError::not_found(format!(
        "no route {}: the page is at /, its data under /api/",
        uri.path()
    ))
}

async fn method_not_allowed(method: Method, uri: Uri) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "bad_request",
        format!("{} does not take {method}", uri.path()),
    )
}

async fn status(State(shared): St) -> Result<Response, ApiError> {
    shared.client.ping().await?;
    Ok(Json(json!({
        "daemon": shared.client.address().to_string(),
        "protocol": chock_control::PROTOCOL,
    }))
    .into_response())
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProjectQuery {
    #[serde(default)]
    pub(crate) project: Option<String>,
    #[serde(default)]
    pub(crate) after: Option<u64>,
}

/// The project a route needs, as an absolute path on the daemon's machine.
pub(crate) fn project(value: Option<String>) -> Result<PathBuf, ApiError> {
    match value {
        Some(p) if !p.is_empty() => Ok(PathBuf::from(p)),
        _ => Err(ApiError::bad_request(
            "name the project: add ?project=<absolute path of the project directory>",
        )),
    }
}

pub(crate) fn query<T>(query: Result<Query<T>, QueryRejection>) -> Result<T, ApiError> {
    query
        .map(|Query(q)| q)
        .map_err(|rejection| ApiError::bad_request(format!("bad query string: {rejection}")))
}

pub(crate) fn body<T>(body: Result<Json<T>, JsonRejection>, shape: &str) -> Result<T, ApiError> {
    body.map(|Json(b)| b).map_err(|rejection| {
        ApiError::new(
            rejection.status(),
            "bad_request",
            format!(
                "{}: this route takes a JSON body {shape}",
                rejection.body_text()
            ),
        )
    })
}

async fn list(
    State(shared): St,
    q: Result<Query<ProjectQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let q = query(q)?;
    // Without a project: every session of every project the daemon knows.
    let rows = match q.project.filter(|p| !p.is_empty()) {
        Some(p) => shared.client.list(std::path::Path::new(&p)).await?,
        None => shared.client.list_all().await?,
    };
    // The rows' text as the daemon sent it, written out as it came: not
    // read into values (`json!` would) and written again.
    #[derive(serde::Serialize)]
    struct Sessions {
        sessions: Vec<Box<serde_json::value::RawValue>>,
    }
    let sessions = rows.into_iter().map(|r| r.row).collect();
    Ok(Json(Sessions { sessions }).into_response())
}

async fn row(
    State(shared): St,
    Path(id): Path<String>,
    q: Result<Query<ProjectQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let q = query(q)?;
    let project = project(q.project)?;
    let rows = shared.client.list(&project).await?;
    let row = rows
        .into_iter()
        .map(|r| r.value())
        .find(|row| row.get("id").and_then(|v| v.as_str()) == Some(id.as_str()))
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::NOT_FOUND,
                "unknown_session",
                format!(
                    "no session {id} in project {}: the project's page lists its sessions",
                    project.display()
                ),
            )
        })?;
    Ok(Json(row).into_response())
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StartBody {
    project: String,
    message: String,
}

async fn start(
    State(shared): St,
    b: Result<Json<StartBody>, JsonRejection>,
) -> Result<Response, ApiError> {
    let b = body(b, r#"{"project": "<absolute path>", "message": "<text>"}"#)?;
    let project = project(Some(b.project))?;
    if b.message.trim().is_empty() {
        return Err(ApiError::bad_request(
            "the message is empty: say what the session should do",
        ));
    }
    let started = shared.client.start(&project, &b.message).await?;
    Ok((
        StatusCode::CREATED,
        Json(json!({ "session": started.session })),
    )
        .into_response())
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EventsQuery {
    #[serde(default)]
    after: Option<u64>,
    #[serde(default)]
    before: Option<u64>,
    #[serde(default)]
    limit: Option<u64>,
}

/// One page of a session's events, read from the daemon: `after=N` gives
/// the first `limit` events after N, `before=M` the `limit` events just
/// before M. `more` says whether older events than the page exist.
async fn events(
    State(shared): St,
    Path(id): Path<String>,
    q: Result<Query<EventsQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let q = query(q)?;
    let limit = q.limit.unwrap_or(PAGE).clamp(1, 10 * PAGE);
    let (after, before) = match (q.after, q.before) {
        (Some(_), Some(_)) => {
            return Err(ApiError::bad_request("give after= or before=, not both"));
        }
        // Ids run 1, 2, 3, ... so the page before M starts after M-1-limit,
        // and the daemon sends only those lines, not the whole log.
        (None, Some(before)) => (before.saturating_sub(limit + 1), Some(before)),
        (after, None) => (after.unwrap_or(0), None),
    };
    // Only the page is read: serve holds one page of a long log, not the log.
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let lines = shared.client.read_at_most(&id, after, limit).await?;
    let page: Vec<_> = lines
        .into_iter()
        .filter(|e| before.is_none_or(|b| e.id < b))
        .take(limit)
        .collect();
    let first = page.first().map_or(after + 1, |e| e.id);
    // Each line is already a JSON object, exactly as the log holds it; it
    // goes out as it came in rather than parsed and printed again.
    let mut out = String::with_capacity(page.iter().map(|e| e.line.len() + 1).sum::<usize>() + 32);
    out.push_str(r#"{"events":["#);
    for (i, event) in page.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&event.line);
    }
    out.push_str(r#"],"more":"#);
    out.push_str(if first > 1 { "true" } else { "false" });
    out.push('}');
    Ok(([("content-type", "application/json")], out).into_response())
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AnswerBody {
    project: String,
    request: String,
    answer: AnswerWord,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "lowercase")]
enum AnswerWord {
    Yes,
    No,
}

async fn answer(
    State(shared): St,
    Path(id): Path<String>,
    b: Result<Json<AnswerBody>, JsonRejection>,
) -> Result<Response, ApiError> {
    let b = body(
        b,
        r#"{"project": "<absolute path>", "request": "<request id>", "answer": "yes" or "no"}"#,
    )?;
    let project = project(Some(b.project))?;
    let answer = match b.answer {
        AnswerWord::Yes => Answer::Yes,
        AnswerWord::No => Answer::No,
    };
    shared
        .client
        .answer(&project, &id, &b.request, answer)
        .await?;
    Ok(Json(json!({ "answered": true })).into_response())
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReplyBody {
    project: String,
    request: String,
    text: String,
}

/// The answer to a question the model asked (`ask_user`): a line of text.
/// An empty one is refused here rather than sent as a non-answer.
async fn reply(
    State(shared): St,
    Path(id): Path<String>,
    b: Result<Json<ReplyBody>, JsonRejection>,
) -> Result<Response, ApiError> {
    let b = body(
        b,
        r#"{"project": "<absolute path>", "request": "<request id>", "text": "<the answer>"}"#,
    )?;
    if b.text.trim().is_empty() {
        return Err(ApiError::bad_request(
            "the reply is empty: write the answer to the session's question",
        ));
    }
    let project = project(Some(b.project))?;
    shared
        .client
        .reply(&project, &id, &b.request, &b.text)
        .await?;
    Ok(Json(json!({ "answered": true })).into_response())
}
