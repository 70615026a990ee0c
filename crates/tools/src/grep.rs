//! `grep`: lines of the workspace's text files that match a regular
//! expression, as `path:line:text`. Binary files and very large files are
//! skipped; an optional glob narrows the files searched.

use std::fmt::Write as _;

use globset::GlobBuilder;
use regex::RegexBuilder;
use schemars::JsonSchema;
use serde::Deserialize;

use super::walk::walk;
use super::{ToolError, ToolOutput, Workspace};
use crate::tool::Tool;

const MAX_MATCHES: usize = 500;
const MAX_FILE_BYTES: u64 = 5 * 1024 * 1024;
const MAX_LINE_CHARS: usize = 400;

/// Search the workspace's text files for lines matching a regular expression
/// (Rust regex syntax). Prints path:line:text.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Regular expression
    pattern: String,
    /// File or directory to search; '.' when omitted
    path: Option<String>,
    /// Only search files whose path matches this glob, e.g. '**/*.rs'
    glob: Option<String>,
    #[serde(default)]
    case_insensitive: bool,
}

impl Tool for Args {
    const NAME: &'static str = "grep";
    const AT_CALL: bool = true;
}

pub(super) fn run(workspace: &Workspace, args: Args) -> Result<ToolOutput, ToolError> {
    let regex = RegexBuilder::new(&args.pattern)
        .case_insensitive(args.case_insensitive)
        .build()
        .map_err(|err| {
            ToolError::Failed(format!(
                "'{}' is not a valid regular expression: {err}",
                args.pattern
            ))
        })?;
    let filter = match &args.glob {
        None => None,
        Some(glob) => Some(
            GlobBuilder::new(glob)
                .literal_separator(true)
                .build()
                .map_err(|err| ToolError::Failed(format!("'{glob}' is not a glob pattern: {err}")))?
                .compile_matcher(),
        ),
    };
    let given = args.path.as_deref().unwrap_or(".");
    let start = workspace.resolve(given)?;
    let files: Vec<std::path::PathBuf> = if start.is_file() {
        vec![start.clone()]
    } else if start.is_dir() {
        let (found, _) = walk(workspace.root(), &start);
        found
            .into_iter()
            .filter(|entry| !entry.is_dir)
            .filter(|entry| filter.as_ref().is_none_or(|glob| glob.is_match(&entry.rel)))
            .map(|entry| entry.path)
            .collect()
    } else {
        return Err(ToolError::Failed(format!(
            "'{given}' does not exist; list_directory or glob shows what does"
        )));
    };
    let mut out = String::new();
    let mut count = 0;
    'files: for file in files {
        let Ok(meta) = std::fs::metadata(&file) else {
            continue;
        };
        if !meta.is_file() || meta.len() > MAX_FILE_BYTES {
            continue;
        }
        let Ok(bytes) = std::fs::read(&file) else {
            continue;
        };
        if bytes.iter().take(8192).any(|&b| b == 0) {
            continue;
        }
        let text = String::from_utf8_lossy(&bytes);
        let shown = workspace.display(&file);
        for (number, line) in text.lines().enumerate() {
            if !regex.is_match(line) {
                continue;
            }
            count += 1;
            if count > MAX_MATCHES {
                let _ = writeln!(
                    out,
                    "[more than {MAX_MATCHES} matching lines; narrow the pattern or the path]"
                );
                break 'files;
            }
            let line = match line.char_indices().nth(MAX_LINE_CHARS) {
                Some((cut, _)) => format!("{}...", &line[..cut]),
                None => line.to_owned(),
            };
            let _ = writeln!(out, "{shown}:{}:{line}", number + 1);
        }
    }
    if count == 0 {
        let _ = writeln!(out, "no line under '{given}' matches '{}'", args.pattern);
    }
    Ok(ToolOutput::ok(out))
}
