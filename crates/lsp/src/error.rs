//! What can go wrong with a language server, each said once.

use std::time::Duration;

/// Why a server cannot be used (any more).
#[derive(Debug, thiserror::Error)]
pub enum LspError {
    /// Its pipes failed.
    #[error("its pipes failed: {0}")]
    Io(std::io::Error),
    /// It sent something that is not an LSP message.
    #[error("it sent something that is not LSP: {0}")]
    Garbage(String),
    /// It did not answer a request within its bound.
    #[error("it did not answer {method} within {} ms", .after.as_millis())]
    Timeout {
        method: &'static str,
        after: Duration,
    },
    /// It answered a request with an error.
    #[error("it answered {method} with the error {code}: {message}")]
    Answered {
        method: &'static str,
        code: i64,
        message: String,
    },
    /// Its output stream ended (the process exited, or closed it).
    #[error("it ended its output (the process exited or closed stdout)")]
    Ended,
    /// It failed earlier, for the reason said then.
    #[error("{0}")]
    Failed(String),
    /// It sent more than a session takes between two edits.
    #[error("it flooded the session: {0}; it was stopped")]
    Flooded(String),
}
