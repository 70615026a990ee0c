//! What can go wrong with one server, said so that the session can put it
//! in a notice by the server's name and in a result the model reads.

/// One server's failure.
#[derive(Debug, Clone, thiserror::Error)]
pub enum McpError {
    /// The lifecycle (discover, or initialize) failed.
    #[error("{detail}")]
    Start { detail: String },
    /// Nothing came back within the bound.
    #[error("did not answer {what} within {ms} ms")]
    Timeout { what: &'static str, ms: u64 },
    /// The server wrote something that is not an MCP message.
    #[error("wrote a line that is not JSON-RPC: {line:?}")]
    Garbage { line: String },
    /// The server wrote a message longer than the bound.
    #[error("wrote a message over {limit} bytes")]
    TooLong { limit: usize },
    /// The connection is gone (the process exited, the socket closed).
    #[error("is no longer running ({detail})")]
    Closed { detail: String },
    /// The server answered the request with an error.
    #[error("answered with an error: {message}")]
    Server { message: String },
    /// The url cannot be reached the way Chock reaches one.
    #[error("cannot be reached at its url: {detail}")]
    Url { detail: String },
}

impl McpError {
    /// Whether the server is gone for good (its tools are withdrawn), as
    /// against one request that failed.
    pub fn is_fatal(&self) -> bool {
        matches!(
            self,
            McpError::Garbage { .. } | McpError::TooLong { .. } | McpError::Closed { .. }
        )
    }
}
