//! `ask_user`: a question to the person, answered in their words. The
//! session carries it out itself (`chock_runner`'s agentic tools): it needs
//! the approval socket or the terminal.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::ToolError;
use crate::tool::Tool;

/// Ask the person a question and wait for their typed answer. Use it when you
/// cannot go on without a decision or a fact only they have; do not use it for
/// permission to run a tool (the policy asks them itself).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// one clear question
    pub question: String,
}

impl Tool for Args {
    const NAME: &'static str = "ask_user";
    const BY_SESSION: bool = true;

    fn check(self) -> Result<Self, ToolError> {
        let question = self.question.trim();
        if question.is_empty() {
            return Err(ToolError::Failed(
                "the question is empty: say what you need to know".to_owned(),
            ));
        }
        Ok(Args {
            question: question.chars().take(4000).collect(),
        })
    }
}
