//! `read_memory`: the notes earlier sessions of this project kept (see
//! `memory`).

use std::path::Path;

use serde::Deserialize;
use serde_json::{Value, json};

use super::{ToolError, ToolOutput, memory};
use crate::tool::Tool;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Args {}

impl Tool for Args {
    const NAME: &'static str = "read_memory";
    const AT_CALL: bool = true;

    fn schema() -> (&'static str, Value) {
        (
            "Read the notes kept for this project by earlier sessions (facts about the project, the person's preferences, unfinished work). Empty until write_memory saves something.",
            json!({
                "type": "object",
                "properties": {},
                "additionalProperties": false
            }),
        )
    }
}

pub(super) fn run(file: &Path, _args: Args) -> Result<ToolOutput, ToolError> {
    let notes = memory::read(file)?;
    if notes.trim().is_empty() {
        return Ok(ToolOutput::ok(
            "no notes are kept for this project yet; write_memory saves notes for later sessions",
        ));
    }
    Ok(ToolOutput::ok(notes))
}
