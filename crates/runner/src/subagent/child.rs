//! A subagent's own side: what it reads of its parent before it starts
//! ([`Lineage::resolve`]), and its session, which works in its parent's
//! workspace and otherwise runs like any other (`drive`).
//!
//! Everything here is read from the parent's log, which its parent (a host
//! process) wrote: the project, the workspace, the `sandbox.jit` decision,
//! the promises and grants up to the `tool.call` that names this child.

use std::path::PathBuf;

use chock_log::event::{ToolCallEvent, UserMessage};
use chock_log::{EventBody, EventId, LogWriter, SessionId, StateDir, fold_log, read_after};
use chock_policy::PromiseId;
use chock_tools::agents::{Profile, Profiles};

use crate::provider::Message;
use crate::session::{
    Checkout, LogHooks, Opening, SessionError, SessionOutcome, SessionSetup, drive,
};

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
fn spawn_event(
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

impl<F> LogHooks<'_, F> {
    /// The parent's promises, releases and grants up to the spawn, replayed
    /// in this child's judge and fixed in place, so the child starts from
    /// its parent's fold at the moment it was spawned and can only narrow it.
    pub(crate) fn inherit(
        &mut self,
        lineage: &Lineage,
        child: &SessionId,
    ) -> Result<(), SessionError> {
        let until = spawn_event(&lineage.parent_log, child)?.unwrap_or(EventId::NONE);
        let batch = read_after(&lineage.parent_log, EventId::NONE)?;
        for raw in batch.events.iter().take_while(|raw| raw.id < until) {
            let Ok(event) = raw.parse() else { continue };
            match event.body {
                EventBody::Promise(promise) => {
                    let rules = promise
                        .rules
                        .iter()
                        .filter_map(|r| crate::agentic::promise_rule(&r.action, &r.decision).ok())
                        .collect();
                    self.judge.restrict(rules);
                }
                EventBody::PromiseRelease(release) => {
                    let _ = self.judge.widen(PromiseId(release.promise_id), true);
                }
                EventBody::Grant(grant) => self.judge.grant(&grant.action),
                _ => {}
            }
        }
        self.judge.inherit();
        Ok(())
    }
}

/// A subagent's session: its log (`session.open` naming its parent), its
/// task as the first message, and its turn in the parent's workspace.
pub(crate) async fn run_child(
    setup: &SessionSetup<'_>,
    lineage: &Lineage,
    id: SessionId,
    task: &str,
    on_text: impl FnMut(&str),
    interrupt: impl Future<Output = impl Into<crate::turn::Interruption>>,
) -> Result<SessionOutcome, SessionError> {
    let mut writer = LogWriter::create(setup.state, &id)?;
    writer.append(crate::session::open_event(setup, &id, setup.project))?;
    writer.append(UserMessage {
        text: task.to_owned(),
    })?;
    let conversation = vec![Message::User {
        text: task.to_owned(),
    }];
    let (outcome, _) = drive(
        setup,
        Opening {
            writer,
            id,
            root: lineage.workspace.clone(),
            checkout: Checkout::Ready(None),
            conversation,
        },
        on_text,
        interrupt,
    )
    .await?;
    Ok(outcome)
}
