//! What a tool hands back: the full text (for the session log), the text
//! the model sees (cut when huge), whether it is an error, and any effect on
//! the session's state that the loop must record (a plan, a title).
//!
//! Truncation keeps the head and the tail, since the end of an output (the
//! last lines of a build, the error at the bottom) is as often the part that
//! matters as the start, and says plainly how much was left out.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Most characters of one tool output the model sees.
pub const MODEL_LIMIT_CHARS: usize = 30_000;

/// Something a tool changes in the session's state rather than on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    Plan(Vec<PlanItem>),
    Title(String),
    /// A fact for the person, logged as a `notice` (the sandbox's layers).
    Notice {
        subject: String,
        text: String,
    },
    /// Policy questions the tool itself asked while it ran (a redirect hop
    /// of fetch_url, an address a name resolved to), logged as `decision`
    /// events before the call's result.
    Decisions(Vec<chock_policy::Verdict>),
}

/// One step of the agent's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
// The doc comment above is for Rust readers; the model reads update_plan's.
// The model is asked to send only these fields; any other is ignored.
#[schemars(description = "", extend("additionalProperties" = false))]
pub struct PlanItem {
    pub step: String,
    pub status: PlanStatus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PlanStatus {
    Pending,
    InProgress,
    Done,
}

/// The result of one tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    /// Everything the tool produced; this is what the log keeps.
    pub text: String,
    /// The call failed; the text says why, for the model to read.
    pub is_error: bool,
    /// A change to the session's state for the loop to record.
    pub effect: Option<Effect>,
    /// An image for the model to see beside the text (read_image); the
    /// log keeps the text only.
    pub image: Option<Image>,
    /// What a write changed, as a unified diff (write_file, edit_file);
    /// kept on the `tool.result` event for readers of the log.
    pub diff: Option<String>,
}

/// An image a tool hands the model, ready for the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub media_type: String,
    /// The file's bytes in standard base64.
    pub base64: String,
}

impl ToolOutput {
    pub fn ok(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            is_error: false,
            effect: None,
            image: None,
            diff: None,
        }
    }

    pub fn error(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            is_error: true,
            effect: None,
            image: None,
            diff: None,
        }
    }

    pub fn with_effect(mut self, effect: Effect) -> Self {
        self.effect = Some(effect);
        self
    }

    /// The text as the model sees it: whole when short, otherwise cut to
    /// [`MODEL_LIMIT_CHARS`] with a note in the middle.
    pub fn for_model(&self) -> String {
        truncate(&self.text, MODEL_LIMIT_CHARS)
    }

    /// Whether [`ToolOutput::for_model`] cuts anything.
    pub fn is_truncated(&self) -> bool {
        self.text.chars().count() > MODEL_LIMIT_CHARS
    }
}

/// `text` cut to about `limit` characters: the first two thirds and the last
/// third of the budget, with a note saying how much is missing.
pub fn truncate(text: &str, limit: usize) -> String {
    let total = text.chars().count();
    if total <= limit {
        return text.to_owned();
    }
    let head = limit * 2 / 3;
    let tail = limit - head;
    let head_end = text
        .char_indices()
        .nth(head)
        .map_or(text.len(), |(at, _)| at);
    let tail_start = text
        .char_indices()
        .nth(total - tail)
        .map_or(text.len(), |(at, _)| at);
    let left_out = &text[head_end..tail_start];
    format!(
        "{}\n\n[... {} characters ({} lines) left out here; the full output is kept in the session log. Narrow the request (a line range, a path, a pattern) to see them ...]\n\n{}",
        &text[..head_end],
        total - head - tail,
        left_out.lines().count(),
        &text[tail_start..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_kept_whole() {
        assert_eq!(truncate("abc", 3), "abc");
    }

    #[test]
    fn long_text_keeps_head_and_tail_and_counts_what_is_missing() {
        let text: String = (0..1000).map(|n| format!("line {n}\n")).collect();
        let cut = truncate(&text, 300);
        assert!(cut.starts_with("line 0\nline 1\n"));
        assert!(cut.ends_with("line 999\n"));
        let missing = text.chars().count() - 300;
        assert!(
            cut.contains(&format!("[... {missing} characters (")),
            "{cut}"
        );
    }

    #[test]
    fn truncation_never_splits_a_character() {
        let text = "é".repeat(100);
        let cut = truncate(&text, 10);
        assert!(cut.starts_with("éééééé\n"));
        assert!(cut.ends_with("éééé"));
    }
}
