//! The client side of the verbs `chock serve` uses beside the
//! specification's: a session's workspace (`diff`, `apply`, `discard`) and
//! the rows of every session (`all`, and `rows`, which stays open and sends
//! each row again when it changes).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{Client, ClientError, Conn, utf8};
use crate::Request;
use crate::reply::RowLine;

/// What `diff` returns: the session's changes since its start, cut at the
/// limit asked for, and what an apply of them would do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkspaceDiff {
    /// The unified diff, cut on a line boundary at the limit.
    #[serde(default)]
    pub diff: String,
    /// The whole diff's size in bytes.
    #[serde(default)]
    pub bytes: u64,
    /// Whether `diff` is shorter than the whole.
    #[serde(default)]
    pub truncated: bool,
    /// Every file the whole diff touches.
    #[serde(default)]
    pub files: Vec<DiffFile>,
    /// What `apply` would do, as `chock workspace apply` says it before it
    /// asks; or why there is nothing it could do.
    #[serde(default)]
    pub description: String,
}

/// One file of a [`WorkspaceDiff`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffFile {
    #[serde(default)]
    pub path: String,
    #[serde(default)]
    pub added: u64,
    #[serde(default)]
    pub removed: u64,
}

impl Client {
    /// The session's diff since its start, at most `limit` bytes of it
    /// (the daemon bounds the limit too).
    pub async fn diff(
        &self,
        project: &Path,
        session: &str,
        limit: usize,
    ) -> Result<WorkspaceDiff, ClientError> {
        let request = Request::Diff {
            project: utf8(project)?,
            session: session.to_owned(),
            limit: u64::try_from(limit).unwrap_or(u64::MAX),
        };
        let mut conn = self.send(&request).await?;
        let line = self.reply_line(&mut conn).await?;
        line.strip_prefix("ok ")
            .and_then(|json| serde_json::from_str(json).ok())
            .ok_or_else(|| self.unexpected(&line))
    }

    /// Carries the session's work back as `chock workspace apply --yes`
    /// does: what was applied, in its sentence.
    pub async fn apply(&self, project: &Path, session: &str) -> Result<String, ClientError> {
        let request = Request::Apply {
            project: utf8(project)?,
            session: session.to_owned(),
        };
        self.done(&request).await
    }

    /// Removes the session's workspace as `chock workspace discard` does.
    pub async fn discard(&self, project: &Path, session: &str) -> Result<String, ClientError> {
        let request = Request::Discard {
            project: utf8(project)?,
            session: session.to_owned(),
        };
        self.done(&request).await
    }

    /// One row per session of every project the daemon knows, newest first.
    pub async fn list_all(&self) -> Result<Vec<RowLine>, ClientError> {
        let mut conn = self.send(&Request::All).await?;
        let mut rows = Vec::new();
        while let Some(line) = self.next_line(&mut conn).await? {
            rows.push(RowLine::parse(&line).ok_or_else(|| self.unexpected(&line))?);
        }
        Ok(rows)
    }

    /// Opens a row feed for one project (or every one): the rows now, then
    /// a row each time one changes.
    pub async fn rows(&self, project: Option<&Path>) -> Result<RowFeed, ClientError> {
        let request = Request::Rows {
            project: project.map(utf8).transpose()?,
        };
        let mut conn = self.send(&request).await?;
        let mut initial = Vec::new();
        loop {
            let line = self.reply_line(&mut conn).await?;
            if line == "ok live" {
                break;
            }
            initial.push(RowLine::parse(&line).ok_or_else(|| self.unexpected(&line))?);
        }
        Ok(RowFeed {
            client: self.clone(),
            conn,
            initial,
        })
    }

    /// Sends a verb whose success is `ok <sentence>`.
    async fn done(&self, request: &Request) -> Result<String, ClientError> {
        let mut conn = self.send(request).await?;
        let line = self.reply_line(&mut conn).await?;
        line.strip_prefix("ok ")
            .filter(|sentence| !sentence.is_empty())
            .map(str::to_owned)
            .ok_or_else(|| self.unexpected(&line))
    }
}

/// An open row feed: the rows when it opened, then one row per change.
pub struct RowFeed {
    client: Client,
    conn: Conn,
    initial: Vec<RowLine>,
}

impl std::fmt::Debug for RowFeed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowFeed")
            .field("address", &self.client.address)
            .field("initial", &self.initial.len())
            .finish_non_exhaustive()
    }
}

impl RowFeed {
    /// Every row as it stood when the feed opened, newest first.
    pub fn initial(&self) -> &[RowLine] {
        &self.initial
    }

    /// The next changed row; `None` when the daemon closed the feed.
    pub async fn next_row(&mut self) -> Result<Option<RowLine>, ClientError> {
        // No timeout: a feed may be quiet for as long as nothing changes.
        let Some(line) = self.client.streamed_line(&mut self.conn).await? else {
            return Ok(None);
        };
        RowLine::parse(&line)
            .map(Some)
            .ok_or_else(|| self.client.unexpected(&line))
    }
}
