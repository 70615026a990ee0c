//! `write_memory`: keep notes for later sessions of this project, added to
//! the end of what is there or replacing all of it (see `memory`).

use std::path::Path;

use schemars::JsonSchema;
use serde::Deserialize;

use super::{ToolError, ToolOutput, memory};
use crate::tool::Tool;

/// Save notes for later sessions of this project: facts worth remembering, the
/// person's preferences, unfinished work. The text is added to the end of the
/// notes; set replace to true to rewrite them whole (read_memory first). The
/// notes hold at most 64 KiB.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The notes to save, in Markdown
    text: String,
    /// Replace all notes instead of adding to them (default false)
    #[serde(default)]
    replace: bool,
}

impl Tool for Args {
    const NAME: &'static str = "write_memory";
    const AT_CALL: bool = true;
}

pub(super) fn run(file: &Path, args: Args) -> Result<ToolOutput, ToolError> {
    let mut notes = if args.replace {
        String::new()
    } else {
        memory::read(file)?
    };
    if !notes.is_empty() && !notes.ends_with("\n\n") {
        notes.push_str(if notes.ends_with('\n') { "\n" } else { "\n\n" });
    }
    notes.push_str(args.text.trim_end());
    notes.push('\n');
    if notes.len() > memory::MAX_BYTES {
        return Err(ToolError::Failed(format!(
            "the notes would be {} bytes, more than the {} the memory holds; nothing was saved. \
             read_memory, condense the notes, and write them back with replace set to true",
            notes.len(),
            memory::MAX_BYTES
        )));
    }
    memory::write(file, &notes)?;
    Ok(ToolOutput::ok(format!(
        "saved; the project's notes are now {} bytes",
        notes.len()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(file: &Path, text: &str, replace: bool) -> Result<ToolOutput, ToolError> {
        run(
            file,
            Args {
                text: text.to_owned(),
                replace,
            },
        )
    }

    #[test]
    fn notes_are_added_to_the_end_or_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("m.md");
        write(&file, "one", false).unwrap();
        write(&file, "two\n\n", false).unwrap();
        assert_eq!(memory::read(&file).unwrap(), "one\n\ntwo\n");
        let out = write(&file, "fresh", true).unwrap();
        assert_eq!(out.text, "saved; the project's notes are now 6 bytes");
        assert_eq!(memory::read(&file).unwrap(), "fresh\n");
    }

    #[test]
    fn a_write_past_the_bound_is_refused_and_keeps_the_notes() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("m.md");
        write(&file, "keep me", false).unwrap();
        let err = write(&file, &"x".repeat(memory::MAX_BYTES), false).unwrap_err();
        assert!(err.to_string().contains("nothing was saved"), "{err}");
        assert!(err.to_string().contains("replace set to true"), "{err}");
        assert_eq!(memory::read(&file).unwrap(), "keep me\n");
    }
}
