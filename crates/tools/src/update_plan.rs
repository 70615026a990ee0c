//! `update_plan`: the agent's step list. The tool only checks the plan and
//! hands it back as an [`Effect`]; the loop records it as a `plan.update`
//! event, which is where the plan lives.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Effect, PlanItem, PlanStatus, ToolError, ToolOutput};
use crate::tool::Tool;

const MAX_STEPS: usize = 50;

/// Replace the plan shown to the person: the steps of the task and their
/// status. At most one step is in_progress.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    items: Vec<PlanItem>,
}

impl Tool for Args {
    const NAME: &'static str = "update_plan";
}

pub(super) fn run(args: Args) -> Result<ToolOutput, ToolError> {
    if args.items.len() > MAX_STEPS {
        return Err(ToolError::Failed(format!(
            "the plan has {} steps; keep it to {MAX_STEPS} or fewer",
            args.items.len()
        )));
    }
    if let Some(empty) = args
        .items
        .iter()
        .position(|item| item.step.trim().is_empty())
    {
        return Err(ToolError::Failed(format!("step {} has no text", empty + 1)));
    }
    let active = args
        .items
        .iter()
        .filter(|item| item.status == PlanStatus::InProgress)
        .count();
    if active > 1 {
        return Err(ToolError::Failed(format!(
            "{active} steps are in_progress; mark at most one"
        )));
    }
    let done = args
        .items
        .iter()
        .filter(|item| item.status == PlanStatus::Done)
        .count();
    let summary = format!("plan updated: {} steps, {done} done", args.items.len());
    Ok(ToolOutput::ok(summary).with_effect(Effect::Plan(args.items)))
}
