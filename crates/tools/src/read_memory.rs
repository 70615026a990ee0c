//! `read_memory`: the notes earlier sessions of this project kept (see
//! `memory`).

use std::path::Path;

use schemars::JsonSchema;
use serde::Deserialize;

use super::{ToolError, ToolOutput, memory};
use crate::tool::Tool;

/// Read the notes kept for this project by earlier sessions (facts about the
/// project, the person's preferences, unfinished work). Empty until
/// write_memory saves something.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
// Said outright: a derived schema leaves out an empty `properties`.
#[schemars(extend("properties" = {}))]
pub struct Args {}

impl Tool for Args {
    const NAME: &'static str = "read_memory";
    const AT_CALL: bool = true;
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
