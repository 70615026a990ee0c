//! What a tool call that could not be carried out says to the model, and
//! the reading of one whole file the file tools share.

use crate::workspace::{PathError, Workspace};

/// A tool call that could not be carried out, worded for the model.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error(
        "the arguments for {tool} are not valid: {detail}. Send a JSON object matching the tool's schema"
    )]
    Arguments { tool: &'static str, detail: String },
    #[error(transparent)]
    Path(#[from] PathError),
    #[error("{0}")]
    Failed(String),
}

/// How a tool that reads one whole file of the workspace bounds it, and what
/// it tells the model to do instead when it will not read it.
pub(crate) struct WholeFile {
    /// Most bytes read.
    pub(crate) max_bytes: u64,
    /// What the tool does with the bytes, for the error: "read_file reads".
    pub(crate) reads: &'static str,
    /// What to do instead with a directory.
    pub(crate) for_directory: &'static str,
    /// What to do instead with a larger file.
    pub(crate) for_large: &'static str,
}

impl WholeFile {
    /// The bytes of the file at `given` (relative to the workspace root),
    /// unless it is a directory, larger than the bound or cannot be read.
    pub(crate) fn read(&self, workspace: &Workspace, given: &str) -> Result<Vec<u8>, ToolError> {
        let path = workspace.resolve(given)?;
        let meta = std::fs::metadata(&path).map_err(|err| io_error("read", given, &err))?;
        if meta.is_dir() {
            return Err(ToolError::Failed(format!(
                "'{given}' is a directory; {}",
                self.for_directory
            )));
        }
        if meta.len() > self.max_bytes {
            return Err(ToolError::Failed(format!(
                "'{given}' is {} bytes, more than {} ({}); {}",
                meta.len(),
                self.reads,
                self.max_bytes,
                self.for_large
            )));
        }
        std::fs::read(&path).map_err(|err| io_error("read", given, &err))
    }
}

/// An I/O failure on `path`, worded for the model.
pub(crate) fn io_error(what: &str, path: &str, err: &std::io::Error) -> ToolError {
    let hint = match err.kind() {
        std::io::ErrorKind::NotFound => "; list_directory or glob shows what exists",
        std::io::ErrorKind::PermissionDenied => "; the file's permissions do not allow it",
        _ => "",
    };
    ToolError::Failed(format!("cannot {what} '{path}': {err}{hint}"))
}
