//! A write a tool is about to make, before it touches the disk: the file,
//! the whole content it would leave behind, and what the tool says once it
//! is made. write_file and edit_file each make one; the session checks it
//! against the project's style rules, and only then is it committed, so a
//! write a rule refuses leaves the file as it was.

use std::path::PathBuf;

use crate::error::io_error;
use crate::{ToolError, ToolOutput};

/// One write, planned.
#[derive(Debug)]
pub(crate) struct Pending {
    pub(crate) path: PathBuf,
    /// The path relative to the workspace root, as the model names it.
    pub(crate) shown: String,
    /// The file's whole content after the write.
    pub(crate) content: String,
    /// What the tool says once the write is made.
    pub(crate) said: String,
}

impl Pending {
    /// Makes the write, creating missing parent directories.
    pub(crate) fn commit(&self) -> Result<ToolOutput, ToolError> {
        if let Some(parent) = self.path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|err| io_error("create the directory for", &self.shown, &err))?;
        }
        std::fs::write(&self.path, &self.content)
            .map_err(|err| io_error("write", &self.shown, &err))?;
        Ok(ToolOutput::ok(self.said.clone()))
    }
}
