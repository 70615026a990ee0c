//! `chock gateway`: the MCP gateway in front of a stdio MCP server.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

/// Run an MCP server behind a stdio proxy that refuses each tools/call while a stop is in
/// force and applies mcp.SERVER.tool.TOOL rows (a tool denied at start is hidden).
///
/// Newline-delimited JSON-RPC on stdin and stdout, the server's stderr passed through.
/// Speaks both MCP 2025-11-25 (initialize handshake) and 2026-07-28 (no handshake).
/// Refusals are JSON-RPC errors with code -31001 (stopped) or -31002 (denied by policy).
/// Exits non-zero when the server writes something that is not JSON-RPC or dies.
#[derive(Debug, Args)]
pub(crate) struct GatewayArgs {
    /// The server's name in policy rows and logs (default: the command's file name).
    #[arg(long, value_name = "NAME")]
    server: Option<String>,
    /// The project whose stops and rules apply (default: the current directory).
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// The MCP server command and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<OsString>,
}

pub(crate) fn run(args: GatewayArgs) -> anyhow::Result<ExitCode> {
    let project = super::gate::project_dir(args.project)?;
    let env = super::gate::gate_env()?;
    // A policy that cannot be read whole starts no server: the rows it holds
    // might deny a tool.
    let policy = chock_policy::Policy::load(&project)
        .context("cannot load the policy for the MCP gateway")?;
    let server = args.server.unwrap_or_else(|| {
        std::path::Path::new(&args.command[0])
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "server".to_owned())
    });
    let config = chock_gateway::Config {
        server,
        command: args.command,
        project,
        paths: env.paths,
        log: env.log,
        agent: chock_gate::detect_from_env().agent(),
        rules: Box::new(chock_gateway::PolicyRules(policy)),
    };
    let code = chock_gateway::run(config).context("the MCP gateway failed")?;
    Ok(ExitCode::from(code))
}
