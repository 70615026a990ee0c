//! Compaction: when the conversation nears the model's context window, its
//! older part is summarised by a model call and recorded as a `compaction`
//! event; the fold then starts from that summary (crates/log's fold), so the
//! session's own next call, a carried-on session and every reader see the
//! same shortened conversation.
//!
//! The size is counted where it can be: the provider's usage of the last
//! call plus an estimate of what came after it, confirmed by a counting
//! call where the API has one (`LogHooks::size`, crates/runner/src/agentic.rs);
//! a quarter of the characters ([`estimate`]) only when neither is to be
//! had. Compaction starts at three quarters of the window and keeps
//! the newest quarter whole; the kept part always starts at an assistant
//! message, so no tool result is separated from the call it answers.

use std::rc::Rc;

use chock_log::fold::Message as Folded;

use crate::models::Switched;
use crate::provider::{Message, ModelRequest, Provider, ProviderError, Usage};

/// What the summariser is told.
pub(crate) const COMPACT_SYSTEM: &str = "You summarise the earlier part of a conversation between a person and a coding agent so the agent can carry on without it. \
Keep: the person's requests (verbatim when short), decisions made, files read or changed and what was learned about them, commands run and their outcomes, and what remains to do. \
Be concise; write plain prose or short lists.";

/// Characters of one message the summariser is shown.
const SUMMARY_INPUT_CHARS: usize = 4000;

/// Characters an image counts for in [`estimate`].
const IMAGE_CHARS: usize = 6_400;

impl<'w> Compactor<'w> {
    /// The session's own model summarises, within its context window.
    pub(crate) fn for_session(
        provider: &'w Provider,
        model: &'w str,
        system: &'w str,
        window: u64,
    ) -> Compactor<'w> {
        Compactor {
            provider,
            model,
            system,
            window,
            switched: None,
            last_usage: None,
            sent: 0,
            failed: false,
            count_failed: false,
        }
    }

    /// The model the session talks to now: the one it switched to last
    /// (`/model`), else its own.
    pub(crate) fn provider(&self) -> &Provider {
        self.switched
            .as_ref()
            .map_or(self.provider, |s| &s.provider)
    }

    pub(crate) fn model(&self) -> &str {
        self.switched.as_ref().map_or(self.model, |s| &s.model)
    }

    /// The context window of the model the session talks to now.
    pub(crate) fn window(&self) -> u64 {
        self.switched.as_ref().map_or(self.window, |s| s.window)
    }

    /// The next turns go to `switched`: its window counts from now, and
    /// the last call's usage (another model's tokens) no longer does. A
    /// summary that failed on the old model may be tried on the new.
    pub(crate) fn switch(&mut self, switched: Rc<Switched>) {
        self.switched = Some(switched);
        self.last_usage = None;
        self.failed = false;
        self.count_failed = false;
    }
}

/// What compaction needs: the model that summarises and the window.
pub(crate) struct Compactor<'w> {
    /// The session's own model, and its window.
    provider: &'w Provider,
    model: &'w str,
    window: u64,
    /// The model `/model` switched to, which summarises in its place.
    switched: Option<Rc<Switched>>,
    /// The session's system prompt, for counting a request.
    pub(crate) system: &'w str,
    /// Tokens the last model call reported (input and output), and how many
    /// messages of the conversation they cover (those sent and the answer).
    pub(crate) last_usage: Option<(u64, usize)>,
    /// Messages in the conversation as the current call was sent.
    pub(crate) sent: usize,
    /// A summary failed in this process: do not try again each call.
    pub(crate) failed: bool,
    /// A count failed in this process: go by usage and the estimate.
    pub(crate) count_failed: bool,
}

/// Estimated tokens of a conversation: a quarter of its characters.
pub(crate) fn estimate(conversation: &[Message]) -> u64 {
    let chars: usize = conversation
        .iter()
        .map(|m| match m {
            Message::User { text } => text.len(),
            Message::Assistant { text, calls } => {
                text.len()
                    + calls
                        .iter()
                        .map(|c| c.name.len() + c.arguments.len())
                        .sum::<usize>()
            }
            Message::ToolResult { content, .. } => content.len(),
            Message::Reasoning(reasoning) => reasoning.text.len() + reasoning.opaque.len(),
            // Counted as what a typical screenshot costs, about 1,600
            // tokens, whatever its bytes.
            Message::Image { .. } => IMAGE_CHARS,
        })
        .sum();
    (chars / 4) as u64
}

/// Whether a conversation of `tokens` should be compacted in `window`.
pub(crate) fn needed(tokens: u64, window: u64) -> bool {
    tokens >= window.saturating_mul(3) / 4
}

/// Where to cut the folded conversation: the index of the first message
/// kept. Everything before it is summarised (all of it when no assistant
/// message fits the kept quarter). `None` when there is nothing to
/// summarise but an earlier summary.
pub(crate) fn split(folded: &[Folded], window: u64) -> Option<usize> {
    let keep_budget = window / 4;
    let mut kept = 0u64;
    let mut start = folded.len();
    for (i, message) in folded.iter().enumerate().rev() {
        kept += folded_chars(message) / 4;
        if kept > keep_budget {
            break;
        }
        start = i;
    }
    // The kept part starts at an assistant message; when none is within
    // budget, everything is summarised.
    let start = (start..folded.len())
        .find(|&i| matches!(folded[i], Folded::Assistant { .. }))
        .unwrap_or(folded.len());
    let older = &folded[..start];
    let worth = older.iter().any(|m| !matches!(m, Folded::Summary { .. }));
    (start > 0 && worth).then_some(start)
}

/// Where `/compact` cuts the folded conversation: at the last answer,
/// which is kept whole with what follows it, everything before it
/// summarised. `None` when fewer than two messages besides an earlier
/// summary would be.
pub(crate) fn split_now(folded: &[Folded]) -> Option<usize> {
    let start = folded
        .iter()
        .rposition(|m| matches!(m, Folded::Assistant { .. }))?;
    let worth = folded[..start]
        .iter()
        .filter(|m| !matches!(m, Folded::Summary { .. }))
        .count();
    (worth >= 2).then_some(start)
}

fn folded_chars(message: &Folded) -> u64 {
    let n = match message {
        Folded::Summary { text, .. } | Folded::User { text, .. } => text.len(),
        Folded::Assistant {
            text, tool_calls, ..
        } => {
            text.len()
                + tool_calls
                    .iter()
                    .map(|c| c.name.len() + c.arguments.get().len())
                    .sum::<usize>()
        }
        Folded::ToolResult { output, .. } => output.len(),
    };
    n as u64
}

/// The summary of `older` (provider messages), and the tokens it cost.
pub(crate) async fn summarise(
    provider: &Provider,
    model: &str,
    older: &[Message],
) -> Result<(String, Usage), ProviderError> {
    let mut messages: Vec<Message> = older
        .iter()
        .map(|m| match m {
            Message::ToolResult {
                call_id,
                name,
                content,
                is_error,
            } => Message::ToolResult {
                call_id: call_id.clone(),
                name: name.clone(),
                content: chock_tools::truncate(content, SUMMARY_INPUT_CHARS),
                is_error: *is_error,
            },
            other => other.clone(),
        })
        .collect();
    messages.push(Message::User {
        text: "Summarise the conversation above for the agent that will carry on from it. Reply with the summary only.".to_owned(),
    });
    let request = ModelRequest {
        model,
        system: COMPACT_SYSTEM,
        messages: &messages,
        tools: &[],
    };
    let turn = provider
        .start_retrying(&request, |wait| tracing::info!("compaction: {wait}"))
        .await?
        .collect(|_| {})
        .await?;
    Ok((turn.text, turn.usage.unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chock_log::EventId;
    use chock_log::event::{Json, ToolCall as LogCall};

    fn user(id: u64, text: &str) -> Folded {
        Folded::User {
            event_id: EventId(id),
            text: text.to_owned(),
        }
    }
    fn assistant(id: u64, text: &str) -> Folded {
        Folded::Assistant {
            event_id: EventId(id),
            text: text.to_owned(),
            tool_calls: vec![LogCall {
                id: format!("c{id}"),
                name: "read_file".into(),
                arguments: Json::parse(r#"{"path":"a"}"#.to_owned()).unwrap(),
            }],
            reasoning: vec![],
        }
    }
    fn result(id: u64, output: &str) -> Folded {
        Folded::ToolResult {
            event_id: EventId(id),
            call_id: format!("c{}", id - 1),
            ok: true,
            output: output.to_owned(),
        }
    }

    #[test]
    fn the_kept_part_starts_at_an_assistant_message_within_a_quarter() {
        let big = "x".repeat(4000);
        let conversation = [
            user(1, "fix it"),
            assistant(2, ""),
            result(3, &big),
            assistant(4, ""),
            result(5, "short"),
        ];
        // A window of 400 tokens keeps 100 tokens (400 characters): the
        // last call and its short result, not the big one.
        assert_eq!(split(&conversation, 400), Some(3));
        // Everything fits in a huge window's quarter: the cut moves to the
        // first assistant message, and only the person's message is older.
        assert_eq!(split(&conversation, 1_000_000), Some(1));
    }

    #[test]
    fn a_huge_last_result_leaves_nothing_kept_and_a_summary_alone_is_left_alone() {
        let big = "x".repeat(4000);
        let conversation = [user(1, "fix it"), assistant(2, ""), result(3, &big)];
        assert_eq!(split(&conversation, 400), Some(3));
        let summary_only = [Folded::Summary {
            event_id: EventId(4),
            text: big.clone(),
        }];
        assert_eq!(split(&summary_only, 400), None);
        assert_eq!(split(&[], 400), None);
    }

    #[test]
    fn compact_now_keeps_the_last_answer_and_wants_two_messages_before_it() {
        let conversation = [
            user(1, "fix it"),
            assistant(2, ""),
            result(3, "read"),
            assistant(4, "done"),
        ];
        assert_eq!(split_now(&conversation), Some(3));
        // One exchange: only the person's message would be summarised.
        assert_eq!(split_now(&conversation[..2]), None);
        // An earlier summary does not count towards the two.
        let after_summary = [
            Folded::Summary {
                event_id: EventId(5),
                text: "so far".into(),
            },
            user(6, "go on"),
            assistant(7, "ok"),
        ];
        assert_eq!(split_now(&after_summary), None);
        assert_eq!(split_now(&[]), None);
        assert_eq!(split_now(&[user(1, "hi")]), None);
    }

    #[test]
    fn compaction_starts_at_three_quarters() {
        assert!(!needed(74, 100));
        assert!(needed(75, 100));
        let conversation = [Message::User {
            text: "y".repeat(400),
        }];
        assert_eq!(estimate(&conversation), 100);
    }
}
