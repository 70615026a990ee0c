//! `request_action`: the agent asks the person for an action it lacks, by
//! its policy name. The session carries it out itself: a yes is a grant in
//! the session's judge.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::tool::Tool;

/// Ask the person for an action you lack, by its policy name (call.write_file,
/// exec.path.cargo, net.fetch.org.example): they answer yes or no. A yes lets
/// that exact action run for the rest of the session without asking again; for
/// an action your own promise caps, a yes leaves that promise (policy.widen). A
/// denied action cannot be requested.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    pub action: String,
    /// why the task needs it
    pub reason: String,
}

impl Tool for Args {
    const NAME: &'static str = "request_action";
    const BY_SESSION: bool = true;
}

#[cfg(test)]
mod tests {
    use crate::tool::arguments;
    use crate::{ask_user, restrict_self};

    use super::*;

    #[test]
    fn bad_arguments_of_the_session_tools_are_worded_for_the_model() {
        let err = arguments::<ask_user::Args>(r#"{"question": "  "}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("question is empty"), "{err}");
        let err = arguments::<ask_user::Args>(r#"{"q": "x"}"#)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("the arguments for ask_user are not valid"),
            "{err}"
        );
        let err = arguments::<restrict_self::Args>(r#"{"rules": []}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("at least one rule"), "{err}");
        let err = arguments::<Args>(r#"{"action": 5, "reason": "x"}"#)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("the arguments for request_action"), "{err}");
        assert_eq!(
            arguments::<Args>(r#"{"action": "call.write_file", "reason": "fix"}"#)
                .unwrap()
                .action,
            "call.write_file"
        );
    }
}
