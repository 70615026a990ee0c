//! The tools that act on the session rather than the workspace: `ask_user`
//! (a question to the person), `restrict_self` (a promise that narrows the
//! session's own policy) and `request_action` (the agent asks for an action
//! it lacks). They need the approval socket and the session's policy, so
//! the session carries them out itself (`crate::agentic`); this module
//! only describes them to the model and parses their arguments, so a bad
//! argument is answered like any other tool's.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{ToolError, ToolName};

pub(super) fn ask_user_schema() -> (&'static str, Value) {
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

pub(super) fn restrict_self_schema() -> (&'static str, Value) {
    (
        "Promise to hold yourself to stricter rules for the rest of the session: each rule names an action or a class (call.write_file, exec.path.*, net.connect.*) and a decision (deny, agent_then_human, ask, agent_review). A promise can only narrow what the policy allows; leaving it later needs policy.widen (request_action).",
        json!({
            "type": "object",
            "properties": {
                "rules": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "properties": {
                            "action": {"type": "string"},
                            "decision": {"type": "string", "enum": ["deny", "agent_then_human", "ask", "agent_review", "allow"]}
                        },
                        "required": ["action", "decision"],
                        "additionalProperties": false
                    }
                },
                "reason": {"type": "string"}
            },
            "required": ["rules"],
            "additionalProperties": false
        }),
    )
}

pub(super) fn request_action_schema() -> (&'static str, Value) {
    (
        "Ask the person for an action you lack, by its policy name (call.write_file, exec.path.cargo, net.fetch.org.example): they answer yes or no. A yes lets that exact action run for the rest of the session without asking again; for an action your own promise caps, a yes leaves that promise (policy.widen). A denied action cannot be requested.",
        json!({
            "type": "object",
            "properties": {
                "action": {"type": "string"},
                "reason": {"type": "string", "description": "why the task needs it"}
            },
            "required": ["action", "reason"],
            "additionalProperties": false
        }),
    )
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AskUser {
    pub question: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PromiseRuleArg {
    pub action: String,
    pub decision: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RestrictSelf {
    pub rules: Vec<PromiseRuleArg>,
    #[serde(default)]
    pub reason: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestAction {
    pub action: String,
    pub reason: String,
}

/// Parses `ask_user`'s arguments, worded for the model on failure.
pub fn ask_user(arguments: &str) -> Result<AskUser, ToolError> {
    let args: AskUser = super::parse(ToolName::AskUser, arguments)?;
    let question = args.question.trim();
    if question.is_empty() {
        return Err(ToolError::Failed(
            "the question is empty: say what you need to know".to_owned(),
        ));
    }
    Ok(AskUser {
        question: question.chars().take(4000).collect(),
    })
}

/// Parses `restrict_self`'s arguments.
pub fn restrict_self(arguments: &str) -> Result<RestrictSelf, ToolError> {
    let args: RestrictSelf = super::parse(ToolName::RestrictSelf, arguments)?;
    if args.rules.is_empty() {
        return Err(ToolError::Failed(
            "a promise needs at least one rule: {action, decision}".to_owned(),
        ));
    }
    Ok(args)
}

/// Parses `request_action`'s arguments.
pub fn request_action(arguments: &str) -> Result<RequestAction, ToolError> {
    super::parse(ToolName::RequestAction, arguments)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_arguments_are_worded_for_the_model() {
        let err = ask_user(r#"{"question": "  "}"#).unwrap_err().to_string();
        assert!(err.contains("question is empty"), "{err}");
        let err = ask_user(r#"{"q": "x"}"#).unwrap_err().to_string();
        assert!(
            err.starts_with("the arguments for ask_user are not valid"),
            "{err}"
        );
        let err = restrict_self(r#"{"rules": []}"#).unwrap_err().to_string();
        assert!(err.contains("at least one rule"), "{err}");
        let err = request_action(r#"{"action": 5, "reason": "x"}"#)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("the arguments for request_action"), "{err}");
        assert_eq!(
            request_action(r#"{"action": "call.write_file", "reason": "fix"}"#)
                .unwrap()
                .action,
            "call.write_file"
        );
    }
}
