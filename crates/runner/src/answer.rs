//! What the session records of each model call's answer, apart from the
//! loop in `session.rs`: the `assistant.message` (with the usage, the
//! reasoning to send back and the items no wire format knew), the thinking
//! folded to one line for the terminal, and each wait before a retry (a
//! `notice` with subject `provider`, which the fold reads as the session
//! waiting for the provider).

use chock_log::event::{AssistantMessage, Notice};

use crate::history;
use crate::provider::{AssistantTurn, RetryWait};
use crate::session::{LogHooks, SessionError};

impl<F> LogHooks<'_, F> {
    /// Records one model call's answer: its usage for compaction's size,
    /// the `assistant.message` with its reasoning and unknown items, the
    /// thinking folded for the terminal, an unknown item's type said once.
    pub(crate) fn record_answer(&mut self, turn: &AssistantTurn) -> Result<(), SessionError> {
        if let Some(usage) = turn.usage {
            // The reasoning and the answer follow the messages sent.
            let covered = self.compaction.sent + turn.reasoning.len() + 1;
            self.compaction.last_usage = Some((
                usage.input_tokens.saturating_add(usage.output_tokens),
                covered,
            ));
        }
        let usage = turn.usage.unwrap_or_default();
        self.append(AssistantMessage {
            text: turn.text.clone(),
            tool_calls: turn.calls.iter().map(history::to_log_call).collect(),
            usage: history::to_log_usage(usage),
            model: self.answering.clone(),
            reasoning: turn
                .reasoning
                .iter()
                .map(history::to_log_reasoning)
                .collect(),
            unknown_items: turn
                .unknown
                .iter()
                .filter_map(|item| chock_log::event::Json::parse(item.json.clone()).ok())
                .collect(),
        })?;
        self.show_thinking(turn);
        for item in &turn.unknown {
            if self.said_unknown.insert(item.kind.clone()) {
                self.append(Notice {
                    subject: "model".to_owned(),
                    text: format!(
                        "the provider sent an output item of type '{}', which this version of Chock does not know: it is kept in the log (assistant.message unknown_items) and not sent back to the model",
                        item.kind
                    ),
                })?;
            }
        }
        Ok(())
    }

    /// Says a wait before a retry, on the terminal and in the log, before it
    /// is waited.
    pub(crate) fn record_wait(&mut self, wait: &RetryWait) -> Result<(), SessionError> {
        let text = wait.to_string();
        (self.say)(&text);
        self.append(Notice {
            subject: chock_log::fold::PROVIDER_NOTICE.to_owned(),
            text,
        })?;
        Ok(())
    }

    /// The model's thinking, folded to one line for the terminal: how much
    /// there was and how it began (the log keeps it whole).
    fn show_thinking(&self, turn: &AssistantTurn) {
        let text: String = turn
            .reasoning
            .iter()
            .map(|r| r.text.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        let chars = self.thought.max(text.chars().count());
        if turn.reasoning.is_empty() && chars == 0 {
            return;
        }
        let first: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let mut line = format!("thought ({chars} characters, folded; chock log shows them)");
        if !first.is_empty() {
            let head: String = first.chars().take(72).collect();
            let more = if first.chars().count() > 72 {
                "..."
            } else {
                ""
            };
            line.push_str(&format!(": {head}{more}"));
        }
        (self.say)(&line);
    }
}
