//! `edit_file`: replaces an exact piece of text in a file. The text must
//! occur exactly once unless `replace_all` says otherwise, so an edit never
//! lands somewhere the model did not mean.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{ToolError, Workspace};
use crate::error::io_error;
use crate::tool::Tool;
use crate::write::Pending;

/// Replace exact text in a file of the workspace. old_text must appear exactly
/// once (include surrounding lines to make it unique) unless replace_all is
/// true.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Path relative to the workspace root
    path: String,
    /// The exact text to replace
    old_text: String,
    /// The text to put in its place
    new_text: String,
    /// Replace every occurrence
    #[serde(default)]
    replace_all: bool,
}

impl Tool for Args {
    const NAME: &'static str = "edit_file";
    const AT_CALL: bool = true;
}

/// The write the call would make.
pub(super) fn plan(workspace: &Workspace, args: Args) -> Result<Pending, ToolError> {
    if args.old_text.is_empty() {
        return Err(ToolError::Failed(
            "old_text is empty; to create or overwrite a whole file use write_file".to_owned(),
        ));
    }
    let path = workspace.resolve_for_write(&args.path)?;
    let text = std::fs::read_to_string(&path).map_err(|err| io_error("read", &args.path, &err))?;
    let count = text.matches(&args.old_text).count();
    if count == 0 {
        return Err(ToolError::Failed(format!(
            "old_text does not appear in '{}'; read_file shows its current content (whitespace and indentation must match exactly)",
            args.path
        )));
    }
    if count > 1 && !args.replace_all {
        return Err(ToolError::Failed(format!(
            "old_text appears {count} times in '{}'; include more surrounding text to pick one, or set replace_all",
            args.path
        )));
    }
    let edited = if args.replace_all {
        text.replace(&args.old_text, &args.new_text)
    } else {
        text.replacen(&args.old_text, &args.new_text, 1)
    };
    let shown = workspace.display(&path);
    let said = format!(
        "replaced {count} occurrence{} in {shown}",
        if count == 1 { "" } else { "s" },
    );
    Ok(Pending {
        path,
        shown,
        content: edited,
        said,
        before: Some(text),
    })
}
