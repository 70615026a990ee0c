//! A session's row, as `list` and a watch's header carry it.
//!
//! Every field has a default and an unknown field is ignored, in both
//! directions, so a field added here is not a protocol change: an older
//! client reading a newer daemon's row drops what it does not know, and a
//! newer client reading an older daemon's row gets defaults.
//! `tests/fixtures/` holds rows as older daemons wrote them; a test keeps
//! them loading.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionRow {
    #[serde(default)]
    pub id: String,
    /// The project directory on the daemon's machine.
    #[serde(default)]
    pub project: String,
    /// `running`, `ended`, or `crashed` when the session's process died
    /// without writing an ending (the daemon says so; the log cannot).
    #[serde(default)]
    pub status: String,
    /// Why it ended: `done`, `error`, `interrupted`, `handover`, `stopped`, `crashed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// RFC 3339 UTC, from the session's first event.
    #[serde(default)]
    pub started_at: String,
    /// The id to pass to `watch` or `read` to get only what came after.
    #[serde(default)]
    pub last_event_id: u64,
    /// Request ids of approvals the session is waiting on.
    #[serde(default)]
    pub pending_approvals: Vec<String>,
    /// The daemon's own child for this session, when the daemon runs it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub child: Option<ChildRow>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChildRow {
    #[serde(default)]
    pub pid: u32,
    /// How the child ended (`exit 0`, `signal 9`); absent while it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<String>,
}
