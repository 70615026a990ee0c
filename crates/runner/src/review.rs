//! The reviewer: a model call that answers yes or no, with a reason, to one
//! action the policy decided `agent_review` or `agent_then_human`. It is an
//! ordinary provider call with no tools and a system prompt of its own, so
//! it can use the session's provider or another instance config.zon names
//! (`.reviewer = "instance/model"`). A reviewer that cannot be reached, or
//! whose answer does not start with yes or no, counts as a no: the gate
//! fails closed.

use crate::provider::{Message, ModelRequest, Provider, Usage};

/// What the reviewer is told about its job.
pub(crate) const REVIEW_SYSTEM: &str = "You review one action that an autonomous coding agent wants to take on a person's machine. \
The person's policy says a reviewer must approve this action before it runs. \
Approve it only if it plausibly serves the person's task and does nothing destructive, secret-revealing or unrelated. \
Answer with YES or NO as the first word, then one sentence giving your reason.";

/// The model that reviews.
#[derive(Debug, Clone, Copy)]
pub struct Reviewer<'a> {
    pub provider: &'a Provider,
    /// The model's name at its server.
    pub model: &'a str,
    /// `instance/model`, for the log.
    pub label: &'a str,
}

/// What one review produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReviewAnswer {
    pub approved: bool,
    pub reason: String,
    pub usage: Usage,
}

impl ReviewAnswer {
    /// The `review` event recording this answer about `action` (for the
    /// tool call `call_id`, or none for a command's connection).
    pub(crate) fn event(
        &self,
        action: &str,
        call_id: Option<String>,
        reviewer: &Reviewer<'_>,
    ) -> chock_log::event::Review {
        chock_log::event::Review {
            action: action.to_owned(),
            call_id,
            reviewer: reviewer.label.to_owned(),
            approved: self.approved,
            reason: self.reason.clone(),
            usage: crate::history::to_log_usage(self.usage),
        }
    }
}

/// What the reviewer is shown.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReviewRequest<'a> {
    pub action: &'a str,
    pub tool: &'a str,
    /// The call's arguments as the model sent them.
    pub arguments: &'a str,
    /// The rule that asked for review, as written.
    pub rule: &'a str,
    /// The person's latest message: the task the action should serve.
    pub task: &'a str,
}

/// Asks the reviewer about `request`.
pub(crate) async fn review(reviewer: &Reviewer<'_>, request: &ReviewRequest<'_>) -> ReviewAnswer {
    let arguments: String = request.arguments.chars().take(4000).collect();
    let task: String = request.task.chars().take(4000).collect();
    let text = format!(
        "The person's task:\n{task}\n\nThe agent calls {} with these arguments:\n{arguments}\n\n\
         The action is {}; the rule that asks for review is {}.\n\nDo you approve? Answer YES or NO, then your reason.",
        request.tool,
        request.action,
        if request.rule.is_empty() {
            "(none named)"
        } else {
            request.rule
        }
    );
    let messages = [Message::User { text }];
    let call = ModelRequest {
        model: reviewer.model,
        system: REVIEW_SYSTEM,
        messages: &messages,
        tools: &[],
    };
    let turn = match reviewer
        .provider
        .start_retrying(&call, |wait| tracing::info!("reviewer: {wait}"))
        .await
    {
        Ok(stream) => stream.collect(|_| {}).await,
        Err(err) => Err(err),
    };
    match turn {
        Ok(turn) => {
            let (approved, reason) = parse(&turn.text);
            ReviewAnswer {
                approved,
                reason,
                usage: turn.usage.unwrap_or_default(),
            }
        }
        Err(err) => ReviewAnswer {
            approved: false,
            reason: format!("the reviewer could not be asked, so the answer is no: {err}"),
            usage: Usage::default(),
        },
    }
}

/// Reads a reviewer's answer: yes or no as its first word, the rest as the
/// reason. Anything else is a no that says why.
pub(crate) fn parse(text: &str) -> (bool, String) {
    let text = text.trim();
    let first: String = text
        .chars()
        .take_while(|c| c.is_alphabetic())
        .collect::<String>()
        .to_ascii_lowercase();
    let rest = text[first.len()..]
        .trim_start_matches(|c: char| c.is_ascii_punctuation() || c.is_whitespace())
        .to_owned();
    match first.as_str() {
        "yes" => (true, rest),
        "no" => (false, rest),
        _ => (
            false,
            format!(
                "the reviewer's answer did not start with yes or no, so it counts as no: {}",
                text.chars().take(300).collect::<String>()
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_word_decides_and_the_rest_is_the_reason() {
        assert_eq!(
            parse("YES. It writes the file the task asks for."),
            (true, "It writes the file the task asks for.".to_owned())
        );
        assert_eq!(
            parse("  no: it deletes the repository"),
            (false, "it deletes the repository".to_owned())
        );
        let (approved, reason) = parse("Yesterday I would have");
        assert!(!approved);
        assert!(reason.contains("did not start with yes or no"), "{reason}");
        let (approved, _) = parse("");
        assert!(!approved);
    }
}
