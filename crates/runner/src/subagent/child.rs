//! A subagent's own side: its parent's promises and grants replayed
//! (`inherit`), and its session, which works in its parent's workspace and
//! otherwise runs like any other (`drive`).

use chock_log::event::UserMessage;
use chock_log::{EventBody, EventId, LogWriter, SessionId, read_after};
use chock_policy::PromiseId;

use super::lineage::{Lineage, spawn_event};
use crate::provider::Message;
use crate::session::{
    Checkout, LogHooks, Opening, SessionError, SessionOutcome, SessionSetup, drive,
};

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
