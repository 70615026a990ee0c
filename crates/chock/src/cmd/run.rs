//! `chock run`: one session, in the foreground.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use chock_log::event::EndReason;
use chock_log::{SessionId, StateDir};
use chock_runner::workspace::kept_notes;
use chock_runner::{CarryOn, RunOptions, default_config_path, run as run_session};
use chock_terminal::Interface;

use crate::exit;

/// Run an agent session on a project: send the message to the model, let it
/// use its tools in its own git worktree of the project, and record
/// everything in the session log.
///
/// The session works in a workspace, a git worktree under the state
/// directory on branch chock/<session id>, started at the project's HEAD
/// (see docs/workspaces.md); `chock workspace apply <id>` carries its
/// commits back. `--continue [<id>]` carries on an existing session from
/// its log, in the same workspace, adding no message but the one given.
///
/// The model comes from the operator config,
/// `$XDG_CONFIG_HOME/chock/config.zon` (`.model = "instance/model"`, see
/// docs/providers.md), unless --model names one.
///
/// With no message, on a terminal, the session is interactive: a prompt
/// for each message, the model's text rendered as it streams, each tool
/// call a line with its outcome, questions answered in place, slash
/// commands (/help lists them); Ctrl-C interrupts the turn and the session
/// stays; Ctrl-D, or Ctrl-C twice at the prompt, leaves (see
/// docs/terminal.md).
///
/// With a message, it runs that one task: the model's text is printed on
/// stdout as it arrives, each step and the session's id on stderr, and
/// Ctrl-C abandons the turn and ends the session as interrupted. Exit code 0 when
/// the session ended done, 8 when it handed itself over to the daemon
/// (`chock detach`), 1 when it ended otherwise (the log and stderr say how).
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The project directory the session works on (a git repository with a
    /// branch checked out). With --continue or --adopt, leave it out: the
    /// one word given is the message.
    project: Option<PathBuf>,
    /// What to ask the agent. Leave it out, on a terminal, for an
    /// interactive session.
    message: Option<String>,
    /// Copy your uncommitted files (tracked changes and untracked files git
    /// does not ignore) into the new session's workspace. Refused with
    /// --continue and --adopt.
    #[arg(long)]
    allow_dirty: bool,
    /// Carry on a session from its log, in its own workspace: the newest
    /// session of the project in the current directory, or the one named.
    #[arg(long = "continue", value_name = "SESSION_ID", num_args = 0..=1, conflicts_with = "adopt")]
    continue_session: Option<Option<String>>,
    /// Carry on a session that was handed over (what the daemon runs).
    #[arg(long, value_name = "SESSION_ID")]
    adopt: Option<String>,
    /// The model for this session, as `<instance>/<model>` (an instance of
    /// .providers in config.zon).
    #[arg(long, value_name = "INSTANCE/MODEL")]
    model: Option<String>,
    /// The id the new session takes; the daemon chooses it before the
    /// process exists so that `start` can answer with it.
    #[arg(long, value_name = "SESSION_ID", hide = true, conflicts_with_all = ["continue_session", "adopt"])]
    session_id: Option<String>,
    /// The session that spawned this one: a subagent, started by its
    /// parent's spawn_agent (docs/subagents.md).
    #[arg(long, value_name = "SESSION_ID", hide = true, requires = "session_id")]
    parent: Option<String>,
    /// The agent profile a subagent's parent named.
    #[arg(long, value_name = "NAME", hide = true, requires = "parent")]
    agent: Option<String>,
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let state = StateDir::resolve().context("cannot find the state directory")?;
    let carry = match (args.continue_session, args.adopt) {
        (Some(session), _) => Some(CarryOn {
            session,
            adopt: false,
        }),
        (None, Some(session)) => Some(CarryOn {
            session: Some(session),
            adopt: true,
        }),
        (None, None) => None,
    };
    let (project, message) = match (&carry, args.project, args.message) {
        (Some(_), None, None) => (PathBuf::from("."), String::new()),
        (Some(_), Some(word), None) => (PathBuf::from("."), word.to_string_lossy().into_owned()),
        (Some(_), Some(_), Some(_)) => {
            return Err(exit::Usage(
                "with --continue or --adopt give at most one word, the message: the project is the session's own"
                    .to_owned(),
            )
            .into());
        }
        (None, Some(project), Some(message)) => (project, message),
        (None, Some(project), None) => (project, String::new()),
        (_, _, _) => {
            return Err(exit::Usage(
                "give the project directory and the message: chock run <project dir> <message>"
                    .to_owned(),
            )
            .into());
        }
    };
    // A subagent works in its parent's workspace: the project's kept ones
    // were said when the parent started.
    if carry.is_none() && args.parent.is_none() {
        for note in kept_notes(&state, &project) {
            eprintln!("chock: note: {note}");
        }
    }
    let person = if message.is_empty() && carry.is_none() {
        Interface::interactive().ok_or_else(|| {
            exit::Usage(
                "give the message, or run `chock run <project dir>` on a terminal for an interactive session: chock run <project dir> <message>"
                    .to_owned(),
            )
        })?
    } else {
        Interface::one_shot()
    };
    let session_id = args
        .session_id
        .as_deref()
        .map(SessionId::parse)
        .transpose()
        .context("--session-id is not a session id")?;
    let parent = args
        .parent
        .as_deref()
        .map(SessionId::parse)
        .transpose()
        .context("--parent is not a session id")?;
    let options = RunOptions {
        session_id,
        parent,
        agent: args.agent,
        project,
        message,
        model: args.model,
        config: default_config_path(),
        state,
        allow_dirty: args.allow_dirty,
        carry,
        say: say_on_stderr,
        on_note: Some(|note| eprintln!("chock: note: {note}")),
    };
    let started = person.started();
    let outcome = run_session(&options, person);
    started.wait();
    let outcome = outcome?;
    eprintln!(
        "chock: the session's workspace is {}: see `chock workspace show {}`",
        options.state.workspace_dir(&outcome.id).display(),
        outcome.id.as_str()
    );
    match outcome.reason {
        EndReason::Done => {
            eprintln!("chock: session {} ended: done", outcome.id.as_str());
            if !outcome.detail.is_empty() {
                eprintln!("chock: {}", outcome.detail);
            }
            Ok(ExitCode::from(exit::SUCCESS))
        }
        EndReason::Handover => {
            eprintln!(
                "chock: session {} handed over: the daemon carries it on; follow it with `chock log -f {}`",
                outcome.id.as_str(),
                outcome.id.as_str()
            );
            Ok(ExitCode::from(exit::HANDED_OVER))
        }
        EndReason::Stopped => {
            eprintln!(
                "chock: session {} ended: stopped: {}",
                outcome.id.as_str(),
                outcome.detail
            );
            eprintln!(
                "chock: once a person has lifted the stop (`chock resume`), carry it on with `chock run --continue {}`",
                outcome.id.as_str()
            );
            Ok(ExitCode::from(exit::FAILURE))
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

/// A sentence from the session for the person (a wait before a retry,
/// thinking shown folded), on stderr beside the model's text on stdout.
fn say_on_stderr(text: &str) {
    eprintln!("chock: {text}");
}
