//! `ask_user`: a question to the person, answered in their words. The
//! session carries it out itself (`chock_runner`'s agentic tools): it needs
//! the approval socket or the terminal.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::ToolError;
use crate::tool::Tool;

/// The model's arguments.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Args {
    pub question: String,
}

impl Tool for Args {
    const NAME: &'static str = "ask_user";
    const BY_SESSION: bool = true;

    fn schema() -> (&'static str, Value) {
        (
            "Ask the person a question and wait for their typed answer. Use it when you cannot go on without a decision or a fact only they have; do not use it for permission to run a tool (the policy asks them itself).",
            json!({
                "type": "object",
                "properties": {"question": {"type": "string", "description": "one clear question"}},
                "required": ["question"],
                "additionalProperties": false
            }),
        )
    }

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
