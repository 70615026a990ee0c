//! `glob`: files of the workspace whose path matches a pattern. `*` stays
//! within one path component and `**` crosses them, as in most shells with
//! globstar.

use std::fmt::Write as _;

use globset::GlobBuilder;
use schemars::JsonSchema;
use serde::Deserialize;

use super::walk::walk;
use super::{ToolError, ToolOutput, Workspace};
use crate::tool::Tool;

const MAX_MATCHES: usize = 1_000;

/// Find files whose path matches a glob pattern such as 'src/**/*.rs'. '*'
/// matches within one directory level, '**' across levels.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Glob pattern, relative to path
    pattern: String,
    /// Directory to search from; '.' when omitted
    path: Option<String>,
}

impl Tool for Args {
    const NAME: &'static str = "glob";
    const AT_CALL: bool = true;
}

pub(super) fn run(workspace: &Workspace, args: Args) -> Result<ToolOutput, ToolError> {
    let matcher = GlobBuilder::new(&args.pattern)
        .literal_separator(true)
        .build()
        .map_err(|err| {
            ToolError::Failed(format!("'{}' is not a glob pattern: {err}", args.pattern))
        })?
        .compile_matcher();
    let given = args.path.as_deref().unwrap_or(".");
    let start = workspace.resolve(given)?;
    if !start.is_dir() {
        return Err(ToolError::Failed(format!("'{given}' is not a directory")));
    }
    let (found, stopped) = walk(workspace.root(), &start);
    let mut out = String::new();
    let mut count = 0;
    for entry in found.iter().filter(|entry| matcher.is_match(&entry.rel)) {
        count += 1;
        if count > MAX_MATCHES {
            let _ = writeln!(out, "[more than {MAX_MATCHES} matches; narrow the pattern]");
            break;
        }
        let _ = writeln!(
            out,
            "{}{}",
            workspace.display(&entry.path),
            if entry.is_dir { "/" } else { "" }
        );
    }
    if count == 0 {
        let _ = writeln!(out, "no path under '{given}' matches '{}'", args.pattern);
    }
    if stopped {
        let _ = writeln!(
            out,
            "[the search stopped early: the tree is very large; search a subdirectory]"
        );
    }
    Ok(ToolOutput::ok(out))
}
