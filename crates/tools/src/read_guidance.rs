//! `read_guidance`: the instructions a project leaves for coding agents.
//! Files are gathered from the workspace root down to the directory asked
//! about (nearer files last, so they read as the more specific word), under
//! the names the common agents use.

use std::fmt::Write as _;
use std::path::Path;

use schemars::JsonSchema;
use serde::Deserialize;

use super::{ToolError, ToolOutput, Workspace};
use crate::tool::Tool;

/// Guidance file names, in the order they are shown within a directory.
pub const GUIDANCE_FILES: [&str; 5] = [
    "AGENTS.md",
    "CLAUDE.md",
    "GEMINI.md",
    ".github/copilot-instructions.md",
    "CONVENTIONS.md",
];

/// Read the project's guidance for agents (AGENTS.md, CLAUDE.md and the like)
/// from the workspace root down to a directory.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Directory whose guidance applies; the workspace root when omitted
    path: Option<String>,
}

impl Tool for Args {
    const NAME: &'static str = "read_guidance";
    const AT_CALL: bool = true;
}

pub(super) fn run(workspace: &Workspace, args: Args) -> Result<ToolOutput, ToolError> {
    let given = args.path.as_deref().unwrap_or(".");
    let target = workspace.resolve(given)?;
    let rel = target
        .strip_prefix(workspace.root())
        .unwrap_or(Path::new(""));
    let mut dirs = vec![workspace.root().to_owned()];
    let mut dir = workspace.root().to_owned();
    for component in rel.components() {
        dir.push(component);
        if dir.is_dir() {
            dirs.push(dir.clone());
        }
    }
    let mut out = String::new();
    for dir in dirs {
        for name in GUIDANCE_FILES {
            let file = dir.join(name);
            // Guidance is read through the same confinement as every tool: a
            // symlinked AGENTS.md pointing out of the workspace is skipped.
            let shown = workspace.display(&file);
            let Ok(resolved) = workspace.resolve(&shown) else {
                continue;
            };
            let Ok(text) = std::fs::read_to_string(&resolved) else {
                continue;
            };
            let _ = writeln!(out, "== {shown} ==\n{}\n", text.trim_end());
        }
    }
    if out.is_empty() {
        out = format!(
            "no guidance files ({}) between the workspace root and '{given}'",
            GUIDANCE_FILES.join(", ")
        );
    }
    Ok(ToolOutput::ok(out))
}
