//! The MCP gateway: a stdio proxy in front of one MCP server.
//!
//! It forwards every message unchanged (initialize, tools/list, server/discover,
//! notifications, responses) except two: a `tools/call` reached by a stop, or
//! naming a tool the policy denies at start, is answered by the gateway with a
//! JSON-RPC error and never reaches the server; and a `tools/list` result
//! loses the tools denied at start. Nothing depends on the initialize
//! handshake, so MCP 2025-11-25 (handshake) and 2026-07-28 (no handshake,
//! `_meta` protocol version on every request, `server/discover`, results with
//! `resultType`) pass through alike.
//!
//! Framing is newline-delimited JSON-RPC on stdin and stdout; the server's
//! stderr is inherited. The server writing a line that is not JSON-RPC, or
//! exiting while the client is still connected, ends the gateway with a
//! non-zero exit after answering every request still in flight.
#![forbid(unsafe_code)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod filter;
mod proxy;
mod rules;

use std::ffi::OsString;
use std::path::PathBuf;

use chock_gate::{Agent, StopPaths};

pub use filter::{ERROR_POLICY, ERROR_SERVER_GONE, ERROR_STOPPED};
pub use rules::{AllowAll, DenyTools, PolicyRules, ToolRules};

/// Everything one gateway run needs.
#[derive(Debug)]
pub struct Config {
    /// The server's name in `mcp.<server>.tool.<tool>` and in the log.
    pub server: String,
    /// The server command and its arguments.
    pub command: Vec<OsString>,
    /// The project whose stops apply.
    pub project: PathBuf,
    pub paths: StopPaths,
    /// The decision log; `None` when it cannot be located.
    pub log: Option<PathBuf>,
    /// The agent that started the gateway, when its environment says.
    pub agent: Option<Agent>,
    pub rules: Box<dyn ToolRules>,
}

#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    #[error(
        "no MCP server command given: put it after `--`, e.g. chock gateway -- mcp-server-time"
    )]
    NoCommand,
    #[error("cannot start the MCP server {command:?}: {error}; check the command and PATH")]
    Spawn {
        command: String,
        error: std::io::Error,
    },
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    #[error("{0}")]
    Server(String),
    #[error("i/o error talking to the MCP client: {0}")]
    Client(std::io::Error),
}

/// Run the gateway until the client or the server is done. `Ok(0)` is a clean
/// end (the client closed its side and the server exited 0).
pub fn run(config: Config) -> Result<u8, GatewayError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(GatewayError::Runtime)?;
    let result = runtime.block_on(proxy::serve(config));
    // Reading stdin parks a blocking thread that no one will wake once the
    // server is gone; do not wait for it.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    result
}
