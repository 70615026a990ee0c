//! `chock daemon`: adapts the command line to `chock_daemon::run`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use crate::exit;

/// Run the daemon that owns sessions and serves their logs.
///
/// Listens on the unix socket daemon.sock in the state directory (mode 0600; any uid but
/// this user's is refused). --host adds a TCP listener, which checks nobody:
/// put an authenticating proxy in front of it. Under systemd, sockets come
/// from socket activation and readiness is reported with sd-notify. Prints
/// one `listening on <address>` line per listener, in the form --daemon takes.
#[derive(Debug, Args)]
#[command(after_help = "See docs/daemon.md and docs/protocol.md.")]
pub(crate) struct DaemonArgs {
    /// The unix socket to listen on [default: daemon.sock in the state directory].
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,

    /// Also listen on TCP at this address (0.0.0.0 is accepted: anyone who
    /// can route to it can drive the daemon).
    #[arg(long, value_name = "ADDR")]
    host: Option<String>,

    /// The TCP port for --host; 0 asks the system for one and prints it
    /// [default: 7780].
    #[arg(long, value_name = "N")]
    port: Option<u16>,

    /// Run `chock workspace prune` with its defaults this often, in seconds
    /// (first after five minutes, or the period when shorter); 0 never
    /// [default: 86400, once a day]. See docs/workspaces.md.
    #[arg(long, value_name = "SECS")]
    prune_every: Option<u64>,

    /// The chock executable each session runs as `chock run` (tests only).
    #[arg(long, value_name = "PATH", hide = true)]
    run_exe: Option<PathBuf>,

    /// Keep what the allocator freed after a burst instead of giving it
    /// back (the benchmark's comparison only).
    #[arg(long, hide = true)]
    keep_freed_memory: bool,
}

pub(crate) fn run(args: DaemonArgs) -> anyhow::Result<ExitCode> {
    let tcp = super::output::tcp_address(
        args.host,
        args.port,
        chock_daemon::DEFAULT_PORT,
        "the daemon opens no TCP listener",
    )?;
    let state = chock_log::StateDir::resolve().context("cannot start the daemon")?;
    let this = std::env::current_exe()
        .context("cannot find this chock executable to run sessions with")?;
    let chock_exe = args.run_exe.unwrap_or_else(|| this.clone());
    let mut config = chock_daemon::Config::new(state.root().to_owned(), chock_exe);
    config.prune = match args.prune_every.unwrap_or(86_400) {
        0 => None,
        secs => Some(chock_daemon::Prune {
            exe: this,
            every: std::time::Duration::from_secs(secs),
        }),
    };
    config.socket = args.socket;
    config.tcp = tcp;
    config.return_memory = !args.keep_freed_memory;
    chock_daemon::run(config, |addresses| {
        super::output::announce(addresses, None);
    })?;
    Ok(ExitCode::from(exit::SUCCESS))
}
