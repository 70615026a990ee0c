//! `chock run`: one session, in the foreground.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use chock_log::StateDir;
use chock_log::event::EndReason;
use chock_runner::run::{RunOptions, default_config_path, run as run_session};

use crate::exit;

/// Run an agent session on a project: send the message to the model, let it
/// use its tools in the project, and record everything in the session log.
///
/// The model comes from the operator config,
/// `$XDG_CONFIG_HOME/chock/config.zon` (`.model = "instance/model"`, see
/// docs/providers.md), unless --model names one. The model's text is printed
/// as it arrives; the session's id and how it ended go to stderr. Ctrl-C
/// abandons the turn and ends the session as interrupted. Exit code 0 when
/// the session ended done, 1 when it ended otherwise (the log and stderr say
/// how).
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The project directory the session works on.
    project: PathBuf,
    /// What to ask the agent.
    message: String,
    /// The model for this session, as `<instance>/<model>` (an instance of
    /// .providers in config.zon).
    #[arg(long, value_name = "INSTANCE/MODEL")]
    model: Option<String>,
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let state = StateDir::resolve().context("cannot find the state directory")?;
    let options = RunOptions {
        project: args.project,
        message: args.message,
        model: args.model,
        config: default_config_path(),
        state,
    };
    let mut stdout = std::io::stdout().lock();
    let mut ends_in_newline = true;
    let outcome = run_session(&options, |delta| {
        // A closed stdout must not end the session: the log is the record.
        let _ = stdout.write_all(delta.as_bytes());
        let _ = stdout.flush();
        ends_in_newline = delta.ends_with('\n');
    })?;
    if !ends_in_newline {
        let _ = writeln!(stdout);
    }
    drop(stdout);
    match outcome.reason {
        EndReason::Done => {
            eprintln!("chock: session {} ended: done", outcome.id.as_str());
            if !outcome.detail.is_empty() {
                eprintln!("chock: {}", outcome.detail);
            }
            Ok(ExitCode::from(exit::SUCCESS))
        }
        reason => {
            eprintln!(
                "chock: session {} ended: {}: {}",
                outcome.id.as_str(),
                reason.as_str(),
                outcome.detail
            );
            Ok(ExitCode::from(exit::FAILURE))
        }
    }
}
