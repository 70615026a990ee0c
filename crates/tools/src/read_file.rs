//! `read_file`: a text file of the workspace, whole or a range of lines.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{ToolError, ToolOutput, Workspace};
use crate::error::WholeFile;
use crate::tool::Tool;

/// Files larger than this are refused rather than read into memory.
const MAX_BYTES: u64 = 20 * 1024 * 1024;

/// Read a text file of the workspace. Give offset and limit (in lines) to read
/// part of a long file.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Path relative to the workspace root
    path: String,
    /// First line to read, counting from 1
    #[schemars(range(min = 1))]
    offset: Option<usize>,
    /// How many lines to read
    #[schemars(range(min = 1))]
    limit: Option<usize>,
}

impl Tool for Args {
    const NAME: &'static str = "read_file";
    const AT_CALL: bool = true;
}

pub(super) fn run(workspace: &Workspace, args: Args) -> Result<ToolOutput, ToolError> {
    let bytes = WholeFile {
        max_bytes: MAX_BYTES,
        reads: "read_file reads",
        for_directory: "use list_directory to see what is in it",
        for_large: "use grep to find the part you need",
    }
    .read(workspace, &args.path)?;
    if bytes.iter().take(8192).any(|&b| b == 0) {
        return Err(ToolError::Failed(format!(
            "'{}' is a binary file; read_file reads text",
            args.path
        )));
    }
    let text = String::from_utf8_lossy(&bytes);
    if args.offset.is_none() && args.limit.is_none() {
        return Ok(ToolOutput::ok(text.into_owned()));
    }
    let first = args.offset.unwrap_or(1).max(1);
    let total = text.lines().count();
    if first > total.max(1) {
        return Err(ToolError::Failed(format!(
            "'{}' has {total} lines; offset {first} is past the end",
            args.path
        )));
    }
    let take = args.limit.unwrap_or(usize::MAX);
    let mut out: String = text
        .split_inclusive('\n')
        .skip(first - 1)
        .take(take)
        .collect();
    let last = (first - 1).saturating_add(take).min(total);
    if last < total {
        out.push_str(&format!(
            "\n[lines {first}-{last} of {total}; read on with offset {}]",
            last + 1
        ));
    }
    Ok(ToolOutput::ok(out))
}
