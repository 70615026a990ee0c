//! Where a tool known only at run time comes from: its own file, so that
//! the session's tools can name it without reaching into the call's
//! parsing.

/// Where a run-time tool comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// An MCP server, by its name in the configuration.
    Mcp(String),
    /// A plugin, by its name.
    Plugin(String),
}
