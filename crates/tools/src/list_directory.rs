//! `list_directory`: what a directory of the workspace holds, optionally a
//! few levels deep. Directories end in `/`, symlinks show their target.

use std::fmt::Write as _;

use schemars::JsonSchema;
use serde::Deserialize;

use super::{ToolError, ToolOutput, Workspace};
use crate::error::io_error;
use crate::tool::Tool;

const MAX_DEPTH: usize = 5;
const MAX_ENTRIES: usize = 2_000;

/// List the files and directories in a directory of the workspace. Directories
/// end in '/'.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Directory relative to the workspace root; '.' when omitted
    path: Option<String>,
    /// How many levels to list (default 1)
    #[schemars(range(min = 1, max = MAX_DEPTH))]
    depth: Option<usize>,
}

impl Tool for Args {
    const NAME: &'static str = "list_directory";
    const AT_CALL: bool = true;
}

pub(super) fn run(workspace: &Workspace, args: Args) -> Result<ToolOutput, ToolError> {
    let given = args.path.as_deref().unwrap_or(".");
    let dir = workspace.resolve(given)?;
    let meta = std::fs::metadata(&dir).map_err(|err| io_error("list", given, &err))?;
    if !meta.is_dir() {
        return Err(ToolError::Failed(format!(
            "'{given}' is a file, not a directory; use read_file to read it"
        )));
    }
    let depth = args.depth.unwrap_or(1).clamp(1, MAX_DEPTH);
    let mut out = String::new();
    let mut count = 0;
    list(&dir, depth, 0, &mut out, &mut count).map_err(|err| io_error("list", given, &err))?;
    if count == 0 {
        out.push_str("(empty directory)\n");
    } else if count >= MAX_ENTRIES {
        let _ = writeln!(
            out,
            "[stopped after {MAX_ENTRIES} entries; list a subdirectory]"
        );
    }
    Ok(ToolOutput::ok(out))
}

fn list(
    dir: &std::path::Path,
    depth: usize,
    level: usize,
    out: &mut String,
    count: &mut usize,
) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.filter_map(Result::ok).collect();
    entries.sort_by_key(std::fs::DirEntry::file_name);
    let indent = "  ".repeat(level);
    for entry in entries {
        if *count >= MAX_ENTRIES {
            return Ok(());
        }
        *count += 1;
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_symlink() {
            let target = std::fs::read_link(entry.path())
                .map(|target| target.display().to_string())
                .unwrap_or_default();
            let _ = writeln!(out, "{indent}{name} -> {target}");
        } else if kind.is_dir() {
            let _ = writeln!(out, "{indent}{name}/");
            // .git is shown but never opened: its contents are noise here.
            if level + 1 < depth && name != ".git" {
                list(&entry.path(), depth, level + 1, out, count)?;
            }
        } else {
            let _ = writeln!(out, "{indent}{name}");
        }
    }
    Ok(())
}
