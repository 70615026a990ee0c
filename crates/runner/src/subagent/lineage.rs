//! What a subagent reads of its parent before it starts, all from the
//! parent's log, which its parent (a host process) wrote: the project, the
//! workspace, the `sandbox.jit` decision, the `tool.call` that names it.

use std::path::PathBuf;

use chock_log::event::ToolCallEvent;
use chock_log::{EventBody, EventId, SessionId, StateDir, fold_log, read_after};
use chock_tools::agents::{Profile, Profiles};

/// What a subagent is a child of.
#[derive(Debug, Clone)]
pub(crate) struct Lineage {
    pub(crate) parent: SessionId,
    pub(crate) parent_log: PathBuf,
    /// The parent's project, which the child's session is of.
    pub(crate) project: PathBuf,
    /// Where the parent's tools work: the child's tools work there too.
    pub(crate) workspace: PathBuf,
    /// Whether the parent's `sandbox.jit` was allowed.
    pub(crate) jit: bool,
    /// The profile the parent named.
    pub(crate) profile: Option<Profile>,
}

/// Why a subagent could not start.
#[derive(Debug, thiserror::Error)]
pub enum LineageError {
    #[error("cannot read the parent session {parent}'s log: {error}")]
    Parent {
        parent: String,
        error: chock_log::ReadError,
    },
    #[error(
        "session {parent} did not start subagent {child}: no tool.call in its log names it; a subagent is started by its parent's spawn_agent"
    )]
    NotSpawned { parent: String, child: String },
    #[error("there is no agent profile named '{name}': {known}")]
    UnknownProfile { name: String, known: String },
    #[error("a subagent needs the id its parent chose for it (--session-id)")]
    NoId,
}

impl Lineage {
    /// Reads what child `child` of `parent` needs from the parent's log,
    /// and its profile by `agent`'s name from `profiles`.
    pub(crate) fn resolve(
        state: &StateDir,
        parent: &SessionId,
        child: Option<&SessionId>,
        agent: Option<&str>,
    ) -> Result<Lineage, LineageError> {
        let child = child.ok_or(LineageError::NoId)?;
        let parent_log = state.log_path(parent);
        let read_err = |error| LineageError::Parent {
            parent: parent.to_string(),
            error,
        };
        let folded = fold_log(&parent_log).map_err(read_err)?;
        spawn_event(&parent_log, child)
            .map_err(read_err)?
            .ok_or_else(|| LineageError::NotSpawned {
                parent: parent.to_string(),
                child: child.to_string(),
            })?;
        let project = folded.state.project.clone().unwrap_or_default();
        let workspace = folded
            .state
            .workspace
            .as_ref()
            .map_or_else(|| project.clone(), |w| w.dir.clone());
        let jit = jit_allowed(&parent_log).map_err(read_err)?;
        let profile =
            match agent {
                None => None,
                Some(name) => {
                    let profiles = Profiles::discover(&project);
                    Some(profiles.find(name).cloned().ok_or_else(|| {
                        LineageError::UnknownProfile {
                            name: name.to_owned(),
                            known: profiles.names(),
                        }
                    })?)
                }
            };
        Ok(Lineage {
            parent: parent.clone(),
            parent_log,
            project,
            workspace,
            jit,
            profile,
        })
    }
}

/// The id of the parent's `tool.call` that names `child`.
pub(super) fn spawn_event(
    parent_log: &std::path::Path,
    child: &SessionId,
) -> Result<Option<EventId>, chock_log::ReadError> {
    let batch = read_after(parent_log, EventId::NONE)?;
    Ok(batch.events.iter().find_map(|raw| {
        let event = raw.parse().ok()?;
        match event.body {
            EventBody::ToolCall(ToolCallEvent {
                session: Some(ref s),
                ..
            }) if s == child => Some(event.id),
            _ => None,
        }
    }))
}

/// Whether the parent's own `sandbox.jit` decision, its first, allowed.
fn jit_allowed(parent_log: &std::path::Path) -> Result<bool, chock_log::ReadError> {
    let batch = read_after(parent_log, EventId::NONE)?;
    Ok(batch.events.iter().any(|raw| {
        raw.parse().is_ok_and(|event| {
            matches!(event.body, EventBody::Decision(ref d)
                if d.action == "sandbox.jit" && d.decision == "allow")
        })
    }))
}

#[cfg(test)]
mod tests {
    use chock_log::LogWriter;
    use chock_log::event::{Decision, Json, SessionOpen};

    use super::*;

    /// A parent's log whose `sandbox.jit` decision was `jit` and whose
    /// `tool.call` names `child`.
    fn parent(state: &StateDir, jit: &str, child: &SessionId) -> SessionId {
        let id = SessionId::new();
        let mut w = LogWriter::create(state, &id).unwrap();
        w.append(SessionOpen {
            session_id: id.clone(),
            project: "/p".into(),
            model: "fake/m".into(),
            pid: 1,
            chock_version: String::new(),
            parent: None,
        })
        .unwrap();
        w.append(Decision {
            action: "sandbox.jit".into(),
            decision: jit.into(),
            ..Decision::default()
        })
        .unwrap();
        w.append(ToolCallEvent {
            call_id: "s1".into(),
            tool: "spawn_agent".into(),
            arguments: Json::parse("{}").unwrap(),
            session: Some(child.clone()),
        })
        .unwrap();
        id
    }

    #[test]
    fn a_child_takes_its_parents_jit_and_project_and_only_a_child_its_parent_named() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::at(dir.path());
        let child = SessionId::new();
        let hardened = parent(&state, "ask", &child);
        let lineage = Lineage::resolve(&state, &hardened, Some(&child), None).unwrap();
        assert!(!lineage.jit, "an ask is no allow: the child keeps W^X");
        assert_eq!(lineage.project, PathBuf::from("/p"));
        assert_eq!(lineage.workspace, PathBuf::from("/p"));
        let open = parent(&state, "allow", &child);
        assert!(
            Lineage::resolve(&state, &open, Some(&child), None)
                .unwrap()
                .jit
        );
        let stranger = SessionId::new();
        let err = Lineage::resolve(&state, &open, Some(&stranger), None).unwrap_err();
        assert!(matches!(err, LineageError::NotSpawned { .. }), "{err}");
        let err = Lineage::resolve(&state, &open, Some(&child), Some("nobody")).unwrap_err();
        assert!(
            err.to_string().contains("no agent profile named 'nobody'"),
            "{err}"
        );
    }
}
