//! `chock detach`: hand a running session to the daemon.

use super::output::outln;
use std::io::{IsTerminal as _, Write as _};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use chock_control::Address;
use chock_log::StateDir;
use chock_runner::detach::{DetachOptions, Progress, detach};

use crate::exit;

/// Hand a running session over to the daemon, which carries it on.
///
/// The session finishes what it is doing up to its next turn boundary (a
/// model call and its tool calls), says it is ready, and on this command's
/// confirm writes its ending (reason handover), lets go of its log and exits
/// 8; the daemon's `chock run --adopt` then takes the log and the same
/// workspace and carries on, adding no message. A session holding
/// background work hands over at the first boundary after that work is
/// recorded ended.
///
/// The daemon is proved to be there before the session is asked, and again
/// before the confirm. Ctrl-C before the confirm leaves the session running,
/// its log unchanged. While waiting, stderr shows what the session is doing,
/// what it holds and the time left. Exit code 0 when the daemon took the
/// session, 1 otherwise (stderr says why; the session keeps running unless
/// it says otherwise). See docs/detach.md.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The session's id, as `chock sessions` lists it [default: the newest
    /// session of the project in the current directory].
    session: Option<String>,
    /// The daemon, as unix:/path or host:port [default: $CHOCK_DAEMON, else
    /// daemon.sock in the state directory].
    #[arg(long, value_name = "ADDRESS", conflicts_with = "port", value_parser = Address::parse)]
    daemon: Option<Address>,
    /// Shorthand for --daemon 127.0.0.1:<N> (a `chock daemon --host`).
    #[arg(long, value_name = "N")]
    port: Option<u16>,
    /// Seconds each wait of the exchange may take (for the turn boundary,
    /// then for background work), 1 or more; at the bound the session
    /// keeps running.
    #[arg(long, value_name = "SECONDS", default_value_t = 300, value_parser = wait_seconds)]
    wait: u64,
}

/// `--wait`: a whole number of seconds, at least one; there is no upper
/// bound (a wait longer than the machine runs is a wait without end).
fn wait_seconds(text: &str) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(0) => Err("0 seconds leaves no time to answer: give 1 or more".to_owned()),
        Ok(seconds) => Ok(seconds),
        Err(_) => Err(format!(
            "'{text}' is not a whole number of seconds: give 1 or more, e.g. --wait 600"
        )),
    }
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let state = StateDir::resolve().context("cannot find the state directory")?;
    let daemon = match (&args.daemon, args.port) {
        (Some(address), _) => address.clone(),
        (None, Some(port)) => Address::Tcp {
            host: "127.0.0.1".to_owned(),
            port,
        },
        (None, None) => Address::from_env_or_default(state.root())
            .with_context(|| format!("${}", chock_control::DAEMON_ENV))?,
    };
    let project = std::env::current_dir().context("cannot read the current directory")?;
    let options = DetachOptions {
        state,
        session: args.session,
        project,
        daemon,
        wait: Duration::from_secs(args.wait),
    };
    let mut display = Display::new();
    let result = detach(&options, |progress| display.show(progress));
    display.finish();
    let detached = result?;
    outln!(
        "handed session {} over to the daemon at {}: it carries on there; follow it with `chock log -f {}`",
        detached.session.as_str(),
        detached.address,
        detached.session.as_str()
    );
    Ok(ExitCode::from(exit::SUCCESS))
}

/// Progress on stderr: one line rewritten in place on a terminal, otherwise
/// a line each time the summary changes (so a log file is not flooded with
/// the clock).
struct Display {
    terminal: bool,
    shown: Option<String>,
}

impl Display {
    fn new() -> Display {
        Display {
            terminal: std::io::stderr().is_terminal(),
            shown: None,
        }
    }

    fn show(&mut self, progress: &Progress) {
        let mut err = std::io::stderr().lock();
        if self.terminal {
            let _ = write!(err, "\r\x1b[Kchock: {}", progress.line());
            self.shown = Some(String::new());
        } else {
            let summary = progress.summary();
            if self.shown.as_ref() != Some(&summary) {
                let _ = writeln!(err, "chock: {}", progress.line());
                self.shown = Some(summary);
            }
        }
        let _ = err.flush();
    }

    fn finish(&mut self) {
        if self.terminal && self.shown.is_some() {
            let _ = write!(std::io::stderr(), "\r\x1b[K");
        }
    }
}
