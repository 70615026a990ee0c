//! `chock run`'s library half: everything between the parsed command line
//! and a finished session. It reads the operator's config, chooses the
//! model, builds the provider, and drives the session on a `current_thread`
//! runtime built here, so that the whole session stays on the calling
//! thread (DESIGN.md, Processes). The binary only parses arguments, prints
//! what it is handed and maps the outcome to an exit code.

use std::path::{Path, PathBuf};

use chock_log::{SessionId, StateDir};

use crate::config::{Config, ConfigError};
use crate::context::{Sources, StartContext};
use crate::person::Person;
use crate::provider::{Provider, ProviderError};
use crate::review::Reviewer;
use crate::session::{SessionError, SessionOutcome, SessionSetup};

/// What the model is told about its situation before the person's message.
pub(crate) const SYSTEM_PROMPT: &str = "You are a coding agent working in a project directory on the person's machine. \
Use the tools to read and change files; paths are relative to the project root. \
Commands run in a sandbox that shows the project root at /workspace; the file tools take those paths too. \
The project's guidance at its root and the notes earlier sessions kept follow below; read_guidance reads the guidance of nested directories before you change code there. \
Save what a later session should know with write_memory. \
Keep the person informed with update_plan for multi-step work, and give the session a short title with set_title. \
When the task is done, say briefly what you changed.";

/// One `chock run`.
#[derive(Debug)]
pub struct RunOptions {
    pub project: PathBuf,
    pub message: String,
    /// `--model instance/model`, overriding the config's `.model`.
    pub model: Option<String>,
    /// The operator config file (usually [`Config::default_path`]).
    pub config: PathBuf,
    pub state: StateDir,
    /// `--allow-dirty`: copy the person's uncommitted files into a new
    /// workspace.
    pub allow_dirty: bool,
    /// `--continue` / `--adopt`: carry on an existing session instead.
    pub carry: Option<CarryOn>,
    /// The id a new session takes, when its starter chose one (the daemon
    /// names the session before the child exists, to answer `start`).
    pub session_id: Option<SessionId>,
    /// Where a sentence for the person at the terminal goes: a wait before
    /// a retry, thinking shown folded.
    pub say: fn(&str),
    /// Told each note of the start once, before the session runs: a block
    /// of a policy file Chock does not act on, a skill skipped.
    pub on_note: Option<fn(&str)>,
    /// The session that spawned this one, when it is a subagent (the
    /// parent's `spawn_agent` starts `chock run --parent <id>`).
    pub parent: Option<SessionId>,
    /// The agent profile the parent named for this subagent.
    pub agent: Option<String>,
}

pub use crate::workspace::session::CarryOn;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(
        "cannot use the project directory {}: {detail}; give an existing directory, a git repository: chock run <project dir> <message>",
        path.display()
    )]
    Project { path: PathBuf, detail: String },
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Provider(#[from] ProviderError),
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error(transparent)]
    Policy(#[from] chock_policy::LoadError),
    #[error("the model '{model}' cannot be used: {reason}")]
    ModelName { model: String, reason: String },
    #[error(
        "the policy does not let this session use the model '{model}' (model.select is read before the first turn, so only allow lets a model be used):\n{explanation}"
    )]
    ModelRefused { model: String, explanation: String },
    #[error("cannot start the session's runtime: {0}")]
    Runtime(std::io::Error),
    #[error(transparent)]
    Start(#[from] crate::workspace::session::StartError),
    #[error("{0}")]
    Secrets(String),
    #[error(transparent)]
    Lineage(#[from] crate::subagent::LineageError),
    /// A style rule does not compile: the session is refused at its start.
    #[error("the project's style rules cannot be used, so the session did not start: {0}")]
    Style(chock_style::CompileError),
}

/// Runs one session to its end for `person`: shown the streamed text and,
/// when it asks, every event; asked for each next message when it is
/// interactive.
pub fn run(options: &RunOptions, person: impl Person) -> Result<SessionOutcome, RunError> {
    let lineage = match &options.parent {
        Some(parent) => Some(crate::subagent::Lineage::resolve(
            &options.state,
            parent,
            options.session_id.as_ref(),
            options.agent.as_deref(),
        )?),
        None => None,
    };
    let project = match &lineage {
        Some(lineage) => lineage.project.clone(),
        None => project_dir(&options.project)?,
    };
    let carried = match &options.carry {
        Some(carry) => Some(crate::workspace::session::resolve_carry(
            &options.state,
            &project,
            carry,
            options.allow_dirty,
        )?),
        None => None,
    };
    let model = match (&options.model, &carried) {
        (Some(model), _) => Some(model.clone()),
        (None, Some(c)) => c.model.clone(),
        (None, None) => None,
    };
    let project = carried
        .as_ref()
        .and_then(|c| c.project.clone())
        .unwrap_or(project);
    let config = Config::load(&options.config)?;
    let chosen = config.choose(model.as_deref(), &options.config)?;
    let label = format!("{}/{}", chosen.instance, chosen.model);
    let policy = chock_policy::Policy::load(&project)?;
    check_model(&policy, &chosen, &label)?;
    crate::secrets::refuse_unbuilt_bindings(&policy).map_err(RunError::Secrets)?;
    let style = crate::style::StyleStart::prepare(&policy).map_err(RunError::Style)?;
    let provider = Provider::new(chosen.instance, chosen.provider, &project)?;
    // The reviewer is another model config.zon may name; model.select
    // decides it like the session's own.
    let reviewing = reviewer_of(&config, &options.config, &policy, &project)?;
    let reviewer = reviewing.as_ref().map(|(model, label, provider)| Reviewer {
        provider,
        model,
        label,
    });
    let context_tokens = crate::models::window(&config, &chosen);
    let models = crate::models::Models::new(config.clone(), &options.config, &project);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(RunError::Runtime)?;
    let skills = chock_tools::Skills::load(&chock_tools::SkillDirs::discover(
        config.skills_dir.as_deref(),
        &project,
    ));
    let (dev_shell, shell_note) = runtime.block_on(dev_shell_of(&config, &project));
    let mut begun = StartContext::gather(Sources {
        base: SYSTEM_PROMPT,
        project: &project,
        operator_guidance: options.config.parent().map(|dir| dir.join("AGENTS.md")),
        memory: chock_tools::memory_file(&options.state, &project),
        policy: &policy,
        skills,
    });
    begun.notes.extend(shell_note);
    let agents = crate::subagent::Agents::for_session(
        &options.state,
        &config,
        &options.config,
        &project,
        lineage,
    );
    let system = format!("{}{}", begun.instructions, agents.instructions());
    begun.notes.extend(style.unchecked().map(str::to_owned));
    if let Some(on_note) = options.on_note {
        for note in &begun.notes {
            on_note(note);
        }
    }
    let setup = SessionSetup {
        state: &options.state,
        project: &project,
        model_label: &label,
        model: chosen.model,
        provider: &provider,
        policy: &policy,
        system: &system,
        limits: config.turn_limits(),
        search: config.search.as_ref(),
        reviewer,
        context_tokens,
        foreground: true,
        say: options.say,
        start: Some(&begun),
        dev_shell: dev_shell.as_ref(),
        agents: Some(&agents),
        style: Some(&style),
        models: Some(&models),
    };
    // Ctrl-C, SIGTERM (`timeout`, a service manager) and SIGHUP (a closed
    // terminal) end the session interrupted, its log ended and its sockets
    // removed. A failure to install a handler leaves that signal with its
    // default effect (the process dies, and the log shows no ending): the
    // session is still worth running.
    let interrupt = interrupted(!person.interactive());
    let session = start(&setup, options, carried.as_ref(), person, interrupt);
    Ok(runtime.block_on(session)?)
}

/// The dev shell config.zon names, made before the first turn; where one
/// was asked for and cannot be had, the note that says why (the session
/// runs without one).
async fn dev_shell_of(
    config: &Config,
    project: &Path,
) -> (Option<chock_tools::DevShell>, Option<String>) {
    let Some(wanted) = config.devshell.as_ref().filter(|d| d.wanted()) else {
        return (None, None);
    };
    match chock_tools::DevShell::load(wanted, project).await {
        Ok(shell) => (shell, None),
        Err(err) => (
            None,
            Some(format!(
                "{err}; this session runs without a dev shell (config.zon's .devshell names it)"
            )),
        ),
    }
}

/// Completes when the process gets SIGTERM or SIGHUP, or, when `ctrl_c`
/// (a session that is not interactive, where Ctrl-C ends the session
/// rather than its turn), when the person presses Ctrl-C; saying which.
async fn interrupted(ctrl_c: bool) -> crate::turn::Interruption {
    use crate::turn::Interruption;
    use tokio::signal::unix::{SignalKind, signal};
    let wait = |kind| async move {
        match signal(kind) {
            Ok(mut signal) => signal.recv().await,
            Err(_) => std::future::pending().await,
        }
    };
    let person = async {
        match ctrl_c {
            true => tokio::signal::ctrl_c().await,
            false => std::future::pending().await,
        }
    };
    tokio::select! {
        Ok(()) = person => Interruption::Person,
        _ = wait(SignalKind::terminate()) => Interruption::Signal("SIGTERM"),
        _ = wait(SignalKind::hangup()) => Interruption::Signal("SIGHUP"),
    }
}

/// The reviewer config.zon names, as its model, label and provider, once
/// model.select allowed it.
fn reviewer_of<'c>(
    config: &'c Config,
    path: &Path,
    policy: &chock_policy::Policy,
    project: &Path,
) -> Result<Option<(&'c str, String, Provider)>, RunError> {
    let Some(name) = &config.reviewer else {
        return Ok(None);
    };
    let choice = config.choose(Some(name), path)?;
    let label = format!("{}/{}", choice.instance, choice.model);
    check_model(policy, &choice, &label)?;
    let provider = Provider::new(choice.instance, choice.provider, project)?;
    Ok(Some((choice.model, label, provider)))
}

/// The project directory the person named, made canonical; refused when it
/// is not a directory.
fn project_dir(path: &Path) -> Result<PathBuf, RunError> {
    let project = path.canonicalize().map_err(|err| RunError::Project {
        path: path.to_owned(),
        detail: err.to_string(),
    })?;
    if !project.is_dir() {
        return Err(RunError::Project {
            path: path.to_owned(),
            detail: "it is not a directory".to_owned(),
        });
    }
    Ok(project)
}

/// model.select for a chosen model (read before the first turn: only allow
/// lets it be used).
fn check_model(
    policy: &chock_policy::Policy,
    chosen: &crate::config::ModelChoice<'_>,
    label: &str,
) -> Result<(), RunError> {
    let verdict = policy
        .model_select(chosen.instance, chosen.model)
        .map_err(|err| RunError::ModelName {
            model: label.to_owned(),
            reason: err.to_string(),
        })?;
    if verdict.refused() {
        return Err(RunError::ModelRefused {
            model: label.to_owned(),
            explanation: verdict.render(),
        });
    }
    Ok(())
}

/// A new session in a new workspace, or the one `carried` names carried on.
async fn start(
    setup: &SessionSetup<'_>,
    options: &RunOptions,
    carried: Option<&crate::workspace::session::Resolved>,
    person: impl Person,
    interrupt: impl Future<Output = impl Into<crate::turn::Interruption>>,
) -> Result<SessionOutcome, crate::workspace::session::StartError> {
    if let Some(lineage) = setup.agents.and_then(|a| a.lineage.as_ref()) {
        // A subagent is never interactive: its one task, then its answer.
        let mut person = person;
        let id = options.session_id.clone().unwrap_or_default();
        let on_text = |delta: &str| person.text(delta);
        let outcome =
            crate::subagent::run_child(setup, lineage, id, &options.message, on_text, interrupt)
                .await?;
        return Ok(outcome);
    }
    let outcome = match carried {
        Some(c) => {
            let carry = crate::workspace::session::Carry {
                session: &c.session,
                adopt: c.adopt,
                message: (!options.message.is_empty()).then_some(options.message.as_str()),
            };
            crate::workspace::session::run_carried_on(setup, &carry, person, interrupt)
                .await?
                .0
        }
        None => {
            crate::workspace::session::run_new_in_workspace(
                setup,
                &options.message,
                options.allow_dirty,
                options.session_id.clone(),
                person,
                interrupt,
            )
            .await?
            .0
        }
    };
    Ok(outcome)
}

/// The config path for `chock run` when none is given: see
/// [`Config::default_path`]; with neither `XDG_CONFIG_HOME` nor `HOME`
/// set, a relative `config.zon` that will not exist (and so produces the
/// error that says what to write).
pub fn default_config_path() -> PathBuf {
    Config::default_path().unwrap_or_else(|| Path::new("config.zon").to_owned())
}
