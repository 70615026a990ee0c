//! `write_file`: creates or replaces a file of the workspace, creating its
//! parent directories.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{ToolError, ToolOutput, Workspace};
use crate::error::io_error;
use crate::tool::Tool;

/// Write a file of the workspace, replacing it if it exists and creating
/// missing parent directories.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Path relative to the workspace root
    path: String,
    /// The file's whole new content
    content: String,
}

impl Tool for Args {
    const NAME: &'static str = "write_file";
    const AT_CALL: bool = true;
}

pub(super) fn run(workspace: &Workspace, args: Args) -> Result<ToolOutput, ToolError> {
    let path = workspace.resolve_for_write(&args.path)?;
    if path.is_dir() {
        return Err(ToolError::Failed(format!("'{}' is a directory", args.path)));
    }
    let existed = path.exists();
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|err| io_error("create the directory for", &args.path, &err))?;
    }
    std::fs::write(&path, &args.content).map_err(|err| io_error("write", &args.path, &err))?;
    Ok(ToolOutput::ok(format!(
        "{} {} ({}, {})",
        if existed { "replaced" } else { "created" },
        workspace.display(&path),
        counted(args.content.len(), "byte"),
        counted(args.content.lines().count(), "line"),
    )))
}

/// `1 line`, `2 lines`.
fn counted(n: usize, unit: &str) -> String {
    if n == 1 {
        format!("1 {unit}")
    } else {
        format!("{n} {unit}s")
    }
}
