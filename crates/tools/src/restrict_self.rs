//! `restrict_self`: a promise that narrows the session's own policy for
//! the rest of the session. The session carries it out itself: it changes
//! the session's fold of the policy.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::ToolError;
use crate::tool::Tool;

/// One rule of the promise, as the model wrote it.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
// The doc comment above is for Rust readers; the model reads the tool's.
#[schemars(description = "")]
pub struct PromiseRuleArg {
    pub action: String,
    // The names `chock_policy::Decision` parses.
    #[schemars(extend("enum" = ["deny", "agent_then_human", "ask", "agent_review", "allow"]))]
    pub decision: String,
}

/// Promise to hold yourself to stricter rules for the rest of the session: each
/// rule names an action or a class (call.write_file, exec.path.*,
/// net.connect.*) and a decision (deny, agent_then_human, ask, agent_review). A
/// promise can only narrow what the policy allows; leaving it later needs
/// policy.widen (request_action).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    #[schemars(length(min = 1))]
    pub rules: Vec<PromiseRuleArg>,
    #[serde(default)]
    pub reason: String,
}

impl Tool for Args {
    const NAME: &'static str = "restrict_self";
    const BY_SESSION: bool = true;

    fn check(self) -> Result<Self, ToolError> {
        if self.rules.is_empty() {
            return Err(ToolError::Failed(
                "a promise needs at least one rule: {action, decision}".to_owned(),
            ));
        }
        Ok(self)
    }
}
