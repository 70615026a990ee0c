//! `chock ssh-connect`: the `ProxyCommand` ssh runs inside the sandbox of
//! an approved push to an ssh remote. Hidden from the top-level help;
//! docs/git-shim.md ("ssh remotes") documents it.

use std::net::{Ipv4Addr, SocketAddr};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args as ClapArgs;

use crate::exit;

/// ssh's route for a push Chock runs: a tunnel through the session's network router.
///
/// ssh runs this (as `ProxyCommand`) inside the sandbox of an approved `git push` to an ssh
/// remote. It asks the router on the sandbox's loopback for `CONNECT host:port`, which the
/// policy decides at `net.connect.<host>`, and then carries ssh's stdin and stdout through the
/// tunnel. A refusal is printed on stderr with the router's sentence. Not meant to be run by
/// hand.
#[derive(Debug, ClapArgs)]
pub(crate) struct Args {
    /// The one `host:port` this push may reach (fixed when the push was approved).
    #[arg(long, value_name = "HOST:PORT")]
    only: String,
    /// The router's port on the sandbox's loopback.
    #[arg(long, value_name = "PORT", default_value_t = chock_sandbox::net::ROUTER_PORT)]
    router_port: u16,
    /// The host ssh connects to (its `%h`).
    host: String,
    /// The port ssh connects to (its `%p`).
    port: u16,
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let router = SocketAddr::from((Ipv4Addr::LOCALHOST, args.router_port));
    chock_runner::push::ssh_connect(
        router,
        &args.only,
        &args.host,
        args.port,
        std::io::stdin(),
        std::io::stdout().lock(),
    )
    .context("ssh-connect")?;
    Ok(ExitCode::from(exit::SUCCESS))
}
