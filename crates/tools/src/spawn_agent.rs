//! `spawn_agent`: a subagent, a session of its own with its own log, given
//! a task and working under its parent's policy (docs/subagents.md). The
//! session carries the call out itself: it starts a child `chock run`,
//! and the child's every action is decided in the child, under the
//! parent's fold, so the spawn is decided nowhere of its own (seeds 004:
//! a key that fits it better), and its model at `model.select`.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::ToolError;
use crate::tool::Tool;

/// Most characters of a task.
pub const MAX_TASK: usize = 16 * 1024;

/// Hand a task to a subagent: a session of its own that works in your
/// workspace under your policy (never wider), with its own log, and answers
/// with its final message. By default you wait for it; with "background": true
/// it runs beside you and its answer arrives later on its own (job_output with
/// its id reads it sooner). Name an agent profile from the list you were given
/// to give it that profile's instructions and tools.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// what the subagent is to do, with everything it needs to know: it sees
    /// nothing of your conversation
    #[schemars(length(max = MAX_TASK))]
    pub task: String,
    /// an agent profile's name
    #[serde(default)]
    pub agent: Option<String>,
    /// the model as instance/model (default: the profile's, else yours)
    #[serde(default)]
    pub model: Option<String>,
    /// run beside you instead of holding your turn (default false)
    #[serde(default)]
    pub background: bool,
}

impl Tool for Args {
    const NAME: &'static str = "spawn_agent";
    const BY_SESSION: bool = true;

    fn check(self) -> Result<Self, ToolError> {
        let task = self.task.trim();
        if task.is_empty() {
            return Err(ToolError::Failed(
                "the task is empty: say what the subagent is to do".to_owned(),
            ));
        }
        let chars = task.chars().count();
        if chars > MAX_TASK {
            return Err(ToolError::Failed(format!(
                "the task is {chars} characters, over the bound of {MAX_TASK}: say it shorter, or put the details in a file of the workspace and name it"
            )));
        }
        let name = |n: Option<String>| n.map(|n| n.trim().to_owned()).filter(|n| !n.is_empty());
        Ok(Args {
            task: task.to_owned(),
            agent: name(self.agent),
            model: name(self.model),
            background: self.background,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::tool::arguments;

    use super::*;

    #[test]
    fn an_empty_task_or_one_over_the_bound_is_refused_in_words_for_the_model() {
        let err = arguments::<Args>(r#"{"task": "  "}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("the task is empty"), "{err}");
        let long = "x".repeat(MAX_TASK + 1);
        let err = arguments::<Args>(&serde_json::json!({ "task": long }).to_string())
            .unwrap_err()
            .to_string();
        assert!(err.contains("over the bound"), "{err}");
        let ok = arguments::<Args>(r#"{"task": " fix it ", "agent": " "}"#).unwrap();
        assert_eq!(
            (ok.task.as_str(), ok.agent, ok.background),
            ("fix it", None, false)
        );
    }
}
