//! `write_file`: creates or replaces a file of the workspace, creating its
//! parent directories.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{ToolError, Workspace};
use crate::tool::Tool;
use crate::write::Pending;

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

/// The write the call would make.
pub(super) fn plan(workspace: &Workspace, args: Args) -> Result<Pending, ToolError> {
    let path = workspace.resolve_for_write(&args.path)?;
    if path.is_dir() {
        return Err(ToolError::Failed(format!("'{}' is a directory", args.path)));
    }
    let shown = workspace.display(&path);
    let before = crate::write::before(&path);
    let said = format!(
        "{} {shown} ({}, {})",
        if path.exists() { "replaced" } else { "created" },
        counted(args.content.len(), "byte"),
        counted(args.content.lines().count(), "line"),
    );
    Ok(Pending {
        path,
        shown,
        content: args.content,
        said,
        before,
    })
}

/// `1 line`, `2 lines`.
fn counted(n: usize, unit: &str) -> String {
    if n == 1 {
        format!("1 {unit}")
    } else {
        format!("{n} {unit}s")
    }
}
