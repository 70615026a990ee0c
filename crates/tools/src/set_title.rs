//! `set_title`: a short title for the session, shown in session lists. Like
//! the plan, it is handed back as an [`Effect`] for the loop to record.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Effect, ToolError, ToolOutput};
use crate::tool::Tool;

pub(super) const MAX_TITLE_CHARS: usize = 80;

/// Give the session a short title (one line, at most 80 characters) saying what
/// it is about.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    #[schemars(length(max = MAX_TITLE_CHARS))]
    title: String,
}

impl Tool for Args {
    const NAME: &'static str = "set_title";
}

pub(super) fn run(args: Args) -> Result<ToolOutput, ToolError> {
    let title = args.title.trim();
    if title.is_empty() {
        return Err(ToolError::Failed("the title is empty".to_owned()));
    }
    if title.contains('\n') {
        return Err(ToolError::Failed("the title must be one line".to_owned()));
    }
    let length = title.chars().count();
    if length > MAX_TITLE_CHARS {
        return Err(ToolError::Failed(format!(
            "the title has {length} characters; keep it to {MAX_TITLE_CHARS}"
        )));
    }
    Ok(ToolOutput::ok(format!("title set: {title}")).with_effect(Effect::Title(title.to_owned())))
}
