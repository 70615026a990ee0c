//! chock-mcp: the MCP client a session uses to reach the servers its
//! chock.zon and config.zon name.
//!
//! A server is reached over one of two transports: a pair of pipes to a
//! process the caller started (the runner starts it in the session's
//! sandbox; this crate never starts anything), or streamable HTTP to a url
//! whose host the caller has already allowed. Either way the framing and
//! both lifecycles are the official Rust SDK's (`rmcp`): the client probes
//! with `server/discover` (revision 2026-07-28, no handshake, `_meta` on
//! every request) and falls back to the `initialize` handshake of
//! 2025-11-25 for a server that does not know it, and [`Connected`] says
//! which was used.
//!
//! What this crate adds is what a session needs from a server it does not
//! trust: every wait bounded ([`Bounds`]), a stdio line that is not JSON or
//! is over [`MAX_LINE`] taken as the server failing rather than skipped
//! (`stdio.rs`), an HTTP client that follows no redirect and connects only
//! to the allowed host (`http.rs`), and results read into plain text and
//! images (`content.rs`) whatever the server put in them.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod client;
mod content;
mod error;
mod http;
mod stdio;

pub use client::{Bounds, Caller, Client, Connected, ListedTool};
pub use content::{Answer, AnswerImage};
pub use error::McpError;
pub use http::connect_url;
pub use stdio::{MAX_LINE, connect_stdio};
