//! `chock serve`: adapts the command line to `chock_serve::run`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use chock_control::Address;
use clap::Args;

use crate::exit;

/// Put a browser in front of a daemon.
///
/// Serves a page (sessions per project, a session's events live, the pending
/// question with Yes/No, a form to start a session) and its JSON routes under
/// /api/. Every fact comes from the daemon's protocol: serve is a client of
/// `chock daemon` and owns nothing. It listens on the unix socket serve.sock
/// in the state directory (mode 0600; any uid but this user's is answered
/// 403 Forbidden); put nginx or Caddy (with Authelia) in front of it, running as
/// this user. --host swaps the socket for a TCP listener, which checks
/// nobody. Under systemd, sockets come from socket activation and readiness
/// is reported with sd-notify. Prints `listening on <address>`.
#[derive(Debug, Args)]
#[command(after_help = "See docs/serve.md.")]
pub(crate) struct ServeArgs {
    /// The daemon to serve, as unix:/path or host:port [default: $CHOCK_DAEMON,
    /// else daemon.sock in the state directory].
    #[arg(long, value_name = "ADDR", value_parser = Address::parse)]
    daemon: Option<Address>,

    /// The unix socket to listen on [default: serve.sock in the state directory].
    #[arg(long, value_name = "PATH", conflicts_with = "host")]
    socket: Option<PathBuf>,

    /// Listen on TCP at this address instead of the socket. Nobody is checked
    /// there: anyone who can route to it can drive every session.
    #[arg(long, value_name = "ADDR")]
    host: Option<String>,

    /// The TCP port for --host; 0 asks the system for one and prints it
    /// [default: 7781].
    #[arg(long, value_name = "N")]
    port: Option<u16>,

    /// A name a browser may use to reach the --host listener, besides the
    /// --host address and localhost (repeat for more). Requests that name
    /// any other host are refused, so a page on another site cannot reach
    /// serve by rebinding its own name to this address.
    #[arg(long, value_name = "NAME", requires = "host")]
    allow_host: Vec<String>,
}

pub(crate) fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let tcp = super::output::tcp_address(
        args.host,
        args.port,
        chock_serve::DEFAULT_PORT,
        "serve listens on its unix socket",
    )?;
    let state = chock_log::StateDir::resolve().context("cannot start chock serve")?;
    let daemon = match &args.daemon {
        Some(address) => address.clone(),
        None => Address::from_env_or_default(state.root())
            .context(format!("${}", chock_control::DAEMON_ENV))?,
    };
    let socket = args
        .socket
        .unwrap_or_else(|| state.root().join("serve.sock"));
    let mut config = chock_serve::Config::new(daemon.clone(), socket);
    config.tcp = tcp;
    config.allow_hosts = args.allow_host;
    chock_serve::run(config, |addresses| {
        super::output::announce(addresses, Some(&format!("serving the daemon at {daemon}")));
    })?;
    Ok(ExitCode::from(exit::SUCCESS))
}
