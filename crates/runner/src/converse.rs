//! A session's turns, one after another, for as long as its person goes on
//! talking. A session that is not interactive runs one turn and ends, as
//! it always has. An interactive one (`chock run <project>` on a terminal)
//! asks its person for a message, runs the turn, and asks again: every
//! turn is in the same log, the same workspace and the same conversation.
//!
//! Beside each turn run the network's records and `handover.sock`, as they
//! do for a single turn; beside the prompt too, and a handover asked while
//! the person is at the prompt is answered there, that being a boundary.
//!
//! A turn the person cuts short (Ctrl-C) is abandoned at its next wait, as
//! an interrupted session's is; here the session stays. What the cut left
//! open is closed in the log before the person is asked again: each call of
//! the last answer without a result gets one saying so, a question still
//! open is answered no, a `notice` says the turn was interrupted, and the
//! turn ends. The conversation is then read back from the log, the one
//! account of what happened.

use std::cell::RefCell;

use chock_log::event::{Answer, ApprovalAnswer, Notice, TurnEnd as LogTurnEnd, UserMessage};
use chock_log::{LogWriter, fold_log};

use crate::history;
use crate::person::{Next, Person};
use crate::provider::Message;
use crate::session::{LogHooks, SessionError, ending};
use crate::turn::{Boundary, Interruption, TurnContext, TurnEnd, TurnHooks, run_turn};

/// The result a call gets when the person cut its turn short.
pub(crate) const CUT_SHORT: &str = "this call was cut short: the person interrupted the turn (Ctrl-C) before it finished, so its effect is unknown; check the state it would have changed before calling it again";

/// What the turns of one session share besides the conversation and hooks.
pub(crate) struct Talk<'a, 'c> {
    pub(crate) cx: &'a TurnContext<'c>,
    pub(crate) net_records: &'a mut tokio::sync::mpsc::UnboundedReceiver<chock_tools::net::Record>,
    /// Set once a turn's end is in the log and no turn has begun since.
    pub(crate) turn_closed: &'a mut bool,
}

/// How one turn ran out.
enum Ran {
    Ended(TurnEnd),
    /// The person cut it short.
    Cut,
    /// The network's records could not be kept (`None`: interrupted).
    Gone,
}

/// What the prompt came to.
enum Said {
    Next(Next),
    /// A client asked for a handover while the person was at the prompt.
    Asked,
    Interrupted(Interruption),
    Gone,
}

impl Talk<'_, '_> {
    /// Runs the session's turns; how the last ended (`None`: interrupted
    /// while the network's records were written).
    pub(crate) async fn run<P: Person>(
        self,
        conversation: &mut Vec<Message>,
        hooks: &mut LogHooks<'_, P>,
        mut interrupt: std::pin::Pin<&mut impl Future<Output = Interruption>>,
    ) -> Result<Option<TurnEnd>, SessionError> {
        let (writer, judge, handover) = (hooks.writer, hooks.judge, hooks.handover);
        let interactive = hooks.person.interactive();
        let mut limits = self.cx.limits;
        // Before the first turn the person is asked only when the session
        // began without a message; after every turn, always.
        let mut ask = interactive && !matches!(conversation.last(), Some(Message::User { .. }));
        loop {
            if ask {
                let said = tokio::select! {
                    next = hooks.person.next() => Said::Next(next),
                    () = asked(handover) => Said::Asked,
                    why = interrupt.as_mut() => Said::Interrupted(why),
                    recorded = crate::net::record(self.net_records, writer, judge) => {
                        recorded?;
                        Said::Gone
                    }
                    never = handover.serve() => match never {},
                };
                match said {
                    Said::Next(Next::Message(text)) => {
                        hooks.append(UserMessage { text: text.clone() })?;
                        conversation.push(Message::User { text });
                        *self.turn_closed = false;
                    }
                    Said::Next(Next::Leave) => return Ok(Some(TurnEnd::Done)),
                    Said::Next(Next::Gone) => {
                        return Ok(Some(TurnEnd::Interrupted(Interruption::Signal("SIGHUP"))));
                    }
                    Said::Asked => {
                        if hooks.boundary(true).await? == Boundary::HandOver {
                            return Ok(Some(TurnEnd::HandOver));
                        }
                        continue;
                    }
                    Said::Interrupted(why) => return Ok(Some(TurnEnd::Interrupted(why))),
                    Said::Gone => return Ok(None),
                }
            }
            ask = true;
            let cx = TurnContext { limits, ..*self.cx };
            let cut = hooks.person.cut();
            let ran = tokio::select! {
                end = run_turn(&cx, conversation, hooks) => Ran::Ended(end?),
                why = interrupt.as_mut() => Ran::Ended(TurnEnd::Interrupted(why)),
                () = cut => Ran::Cut,
                recorded = crate::net::record(self.net_records, writer, judge) => {
                    recorded?;
                    Ran::Gone
                }
                never = handover.serve() => match never {},
            };
            let end = match ran {
                Ran::Gone => return Ok(None),
                Ran::Cut => {
                    close_cut(writer)?;
                    *conversation =
                        history::from_fold(&fold_log(writer.borrow().path())?.state.conversation);
                    None
                }
                Ran::Ended(end) if !interactive || ends_session(&end) => return Ok(Some(end)),
                Ran::Ended(end) => Some(end),
            };
            if let Some(end) = end
                && !matches!(end, TurnEnd::Done)
            {
                hooks.append(Notice {
                    subject: "turn".to_owned(),
                    text: ending(end).1,
                })?;
            }
            hooks.append(LogTurnEnd {})?;
            *self.turn_closed = true;
            if limits.max_session_calls.is_some() {
                limits.session_calls_before =
                    fold_log(writer.borrow().path())?.state.model_calls.len();
            }
        }
    }
}

/// Whether a turn's end ends an interactive session too: a handover, a
/// stop, a signal, the session's budget spent. Anything else (the answer,
/// a provider's failure, the turn's budget) leaves the person at the prompt.
fn ends_session(end: &TurnEnd) -> bool {
    matches!(
        end,
        TurnEnd::HandOver
            | TurnEnd::Stopped(_)
            | TurnEnd::Interrupted(_)
            | TurnEnd::SessionBudget(_)
    )
}

/// Closes in the log what a cut turn left open (see the module docs).
fn close_cut(writer: &RefCell<LogWriter>) -> Result<(), SessionError> {
    let folded = fold_log(writer.borrow().path())?;
    let mut writer = writer.borrow_mut();
    for pending in &folded.state.pending_approvals {
        writer.append(ApprovalAnswer {
            request_id: pending.request_id.clone(),
            answer: Answer::No,
            by: "interrupted".to_owned(),
            text: None,
        })?;
    }
    let cut = crate::workspace::session::unanswered_calls(&folded.state.conversation);
    crate::workspace::session::answer_cut_calls(&mut writer, &mut Vec::new(), cut, CUT_SHORT)?;
    writer.append(Notice {
        subject: "turn".to_owned(),
        text: "interrupted by the person (Ctrl-C); the turn was abandoned and the session goes on"
            .to_owned(),
    })?;
    Ok(())
}

/// Completes once a client has asked for a handover. The ask is taken by
/// `handover.sock`'s own server; this only looks, a few times a second.
async fn asked(handover: &crate::handover::HandoverSocket) {
    while !handover.asked() {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}
