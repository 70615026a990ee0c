//! Sessions that work in a workspace: a new one (its checkout made here),
//! and one carried on from its log by `chock run --continue` or the
//! daemon's `chock run --adopt`.
//!
//! Carrying on is the log's lock changing hands and nothing more: take the
//! lock (a second taker is told who holds it), fold, prove by the log that
//! nobody is in the workspace ([`super::takeover`]), record the new
//! ownership (`session.open`, `workspace.open` naming the same checkout),
//! and run the next turn from the conversation the log holds. Chock adds no
//! message of its own. A tool call the model asked for that has no result
//! in the log was cut off with its process; it is not run again (its
//! effect is unknown), and the model is told so in its result.

use std::path::{Path, PathBuf};

use chock_log::event::{EndReason, Event, SessionEnd, UserMessage};
use chock_log::{EventId, LogWriter, SessionId, WriteError, fold_log, read_after};

use super::takeover::{Takeover, TakeoverError, check_takeover};
use super::{CreateOptions, GitPaths, Opened, WorkspaceError, check, toplevel};
use crate::history::{self, answer_cut_calls, unanswered_calls};
use crate::provider::Message;
use crate::session::{Checkout, Opening, SessionError, SessionOutcome, SessionSetup, drive};
use chock_policy::Action;

/// Why a session in a workspace could not start or carry on.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
    #[error(transparent)]
    Takeover(#[from] TakeoverError),
    #[error(transparent)]
    Write(#[from] WriteError),
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error("{0}")]
    Refused(String),
}

/// `chock run --continue [<id>]` or `chock run --adopt <id>`.
#[derive(Debug, Clone)]
pub struct CarryOn {
    /// The session; `None` means the newest session of the project.
    pub session: Option<String>,
    /// `--adopt`: the session must have been handed over.
    pub adopt: bool,
}

/// How a carried-on session starts.
#[derive(Debug, Clone)]
pub struct Carry<'a> {
    pub session: &'a SessionId,
    /// `--adopt`: the session must have been handed over.
    pub adopt: bool,
    /// A message from the person to add before the turn, if any.
    pub message: Option<&'a str>,
}

/// The result message given to a call cut off with the previous owner.
pub const INTERRUPTED: &str = "this call was cut off when the session's previous process ended, and it was not run again because its effect is unknown; check the state it would have changed and call it again if it is still needed";

/// Starts a new session in a new workspace of `setup.project`.
pub async fn run_new_in_workspace(
    setup: &SessionSetup<'_>,
    message: &str,
    allow_dirty: bool,
    id: Option<SessionId>,
    person: impl crate::person::Person,
    interrupt: impl Future<Output = impl Into<crate::turn::Interruption>>,
) -> Result<(SessionOutcome, Opened), StartError> {
    let integrate = integrate_decision(setup.policy);
    let id = id.unwrap_or_default();
    // A stop in force refuses the session before anything exists: every
    // action it took would be refused.
    if let Err(stopped) = chock_gate::check_stop(setup.project) {
        return Err(StartError::Refused(format!(
            "{stopped}; the session was not started: run it again once a person has lifted the stop"
        )));
    }
    // Every check that can refuse runs before the log exists, so a refusal
    // leaves nothing behind. The checkout is then made while the first
    // model request is sent (it needs no file of the workspace: the system
    // prompt is fixed and the guidance is read by a tool), and the session
    // waits for it before the first tool call (`drive`).
    let checked = check(&CreateOptions {
        state: setup.state,
        session: &id,
        project: setup.project,
        allow_dirty,
    })?;
    let root = checked.root();
    let pending = checked.start()?;
    let mut writer = match LogWriter::create(setup.state, &id) {
        Ok(writer) => writer,
        Err(err) => {
            // The checkout holds nothing yet but the person's copied files,
            // which are still in their own tree: remove it with the branch.
            if let Ok(opened) = pending.finish() {
                super::create::remove(&opened.repo, &opened.dir, &opened.branch);
            }
            return Err(err.into());
        }
    };
    writer.append(crate::session::open_event(setup, &id, setup.project))?;
    // An interactive session begins with no message: it asks for one.
    let mut conversation = Vec::new();
    if !message.is_empty() {
        writer.append(UserMessage {
            text: message.to_owned(),
        })?;
        conversation.push(Message::User {
            text: message.to_owned(),
        });
    }
    let (outcome, opened) = drive(
        setup,
        Opening {
            writer,
            id,
            root: root.clone(),
            checkout: Checkout::Pending {
                pending,
                integrate,
                bound: super::binds::recorded(setup.policy, setup.project, &root),
            },
            conversation,
        },
        person,
        interrupt,
    )
    .await?;
    match opened {
        Some(opened) => Ok((outcome, opened)),
        // drive settles a pending checkout before it returns Ok.
        None => Err(StartError::Refused(
            "the session ended without its workspace being made; see its log".to_owned(),
        )),
    }
}

/// Carries on session `carry.session` from its log, in its own workspace.
pub async fn run_carried_on(
    setup: &SessionSetup<'_>,
    carry: &Carry<'_>,
    person: impl crate::person::Person,
    interrupt: impl Future<Output = impl Into<crate::turn::Interruption>>,
) -> Result<(SessionOutcome, PathBuf), StartError> {
    let (id, log) = setup
        .state
        .find_session(carry.session.as_str())
        .map_err(|err| StartError::Refused(err.to_string()))?;
    let mut writer = LogWriter::open(&log)?;
    let events = ended_events(&mut writer, &id, carry.adopt)?;
    let folded = fold_log(&log).map_err(SessionError::from)?;
    let project = folded
        .state
        .project
        .clone()
        .unwrap_or_else(|| setup.project.to_owned());
    let taken = match check_takeover(&id, &events) {
        // Killed while its checkout was being made: made again (remake.rs).
        Err(TakeoverError::NoWorkspace { .. })
            if !carry.adopt && opened_without_workspace(&events) =>
        {
            super::remake::remake(setup.state, &id, &project)?
        }
        other => other?,
    };
    let branch = workspace_branch(&id, &taken, &project)?;
    if let Err(stopped) = chock_gate::check_stop(&project) {
        let outcome = stopped_before_turn(setup, carry.adopt, writer, id, &project, &stopped)?;
        return Ok((outcome, taken.dir));
    }
    let mut conversation = history::from_fold(&folded.state.conversation);
    let cut = unanswered_calls(&folded.state.conversation);
    let idle = cut.is_empty() && carry.message.is_none() && ends_with_answer(&conversation);
    if idle && !carry.adopt {
        return Err(StartError::Refused(format!(
            "session {} has nothing to carry on: its last turn finished; give a message to say what next (`chock run --continue {} \"...\"`)",
            id.as_str(),
            id.as_str()
        )));
    }
    writer.append(crate::session::open_event(setup, &id, &project))?;
    let paths = recorded_paths(&setup.state.session_dir(&id), &taken, &project, &branch);
    writer.append(chock_log::event::WorkspaceOpen {
        dir: taken.dir.clone(),
        commit: taken.commit.clone(),
        branch: Some(branch),
        common_dir: paths.as_ref().map(|p| p.common.clone()),
        binds: super::binds::recorded(setup.policy, &project, &tools_root(&project, &taken.dir)),
    })?;
    writer.append(integrate_decision(setup.policy))?;
    answer_cut_calls(&mut writer, &mut conversation, cut, INTERRUPTED)?;
    if let Some(text) = carry.message {
        writer.append(UserMessage {
            text: text.to_owned(),
        })?;
        conversation.push(Message::User {
            text: text.to_owned(),
        });
    }
    if idle {
        return Ok((idle_ending(writer, id)?, taken.dir));
    }
    let root = tools_root(&project, &taken.dir);
    let (outcome, _) = drive(
        setup,
        Opening {
            writer,
            id,
            root: root.clone(),
            checkout: Checkout::Ready(paths.map(|paths| (paths, taken.commit.clone()))),
            conversation,
        },
        person,
        interrupt,
    )
    .await?;
    Ok((outcome, taken.dir))
}

/// Whether the log's session opened and never recorded a workspace: a
/// session of this version killed before its checkout was made (one from
/// before workspaces has no `workspace.open` either, but no `chock/<id>`
/// checkout to make again is any different, so it is carried on the same).
fn opened_without_workspace(events: &[Event]) -> bool {
    let opened = events
        .iter()
        .any(|e| matches!(e.body, chock_log::EventBody::SessionOpen(_)));
    let workspace = events
        .iter()
        .any(|e| matches!(e.body, chock_log::EventBody::WorkspaceOpen(_)));
    opened && !workspace
}

/// The log's events, its last owner's ending made sure of: an adopt needs
/// a handover there; carrying on a log with no ending writes the `crashed`
/// one first (holding the lock proves the last owner is gone), so the
/// ending is older than what follows.
fn ended_events(
    writer: &mut LogWriter,
    id: &SessionId,
    adopt: bool,
) -> Result<Vec<Event>, StartError> {
    let log = writer.path().to_owned();
    let mut events = read_events(&log)?;
    let last = events.last().map(|e| &e.body);
    let ended = matches!(last, Some(chock_log::EventBody::SessionEnd(_)));
    if adopt {
        let handed = matches!(last, Some(chock_log::EventBody::SessionEnd(end)) if end.reason == EndReason::Handover);
        if !handed {
            return Err(StartError::Refused(format!(
                "session {} was not handed over (its log does not end with a handover), so it is not adopted; carry it on with `chock run --continue {}`",
                id.as_str(),
                id.as_str()
            )));
        }
    } else if !ended {
        let folded = fold_log(&log).map_err(SessionError::from)?;
        let pid = folded.state.owner_pid.unwrap_or_default();
        events.push(writer.append(SessionEnd {
            reason: EndReason::Crashed,
            detail: format!(
                "process {pid} stopped without ending the session; found by process {}",
                std::process::id()
            ),
        })?);
    }
    Ok(events)
}

/// The checkout's git directories from the host's own record, or, for a
/// session from before they were recorded, from the person's repository:
/// never from the checkout's `.git`, which a command wrote.
fn recorded_paths(
    session_dir: &Path,
    taken: &Takeover,
    project: &Path,
    branch: &str,
) -> Option<GitPaths> {
    let common = taken
        .common_dir
        .clone()
        .or_else(|| GitPaths::common_of(project))?;
    let paths = GitPaths::of_session(session_dir, &common, &taken.dir);
    paths.ensure_view(branch).is_ok().then_some(paths)
}

/// Handed over at a turn boundary with nothing asked since: the new owner
/// records that it holds the session and the workspace, and ends, so the
/// next message starts a turn from here.
fn idle_ending(mut writer: LogWriter, id: SessionId) -> Result<SessionOutcome, WriteError> {
    let detail = "adopted at a turn boundary with nothing to carry on: the last turn had finished and no message was given".to_owned();
    writer.append(SessionEnd {
        reason: EndReason::Done,
        detail: detail.clone(),
    })?;
    Ok(SessionOutcome {
        id,
        log: writer.path().to_owned(),
        reason: EndReason::Done,
        detail,
    })
}

/// The branch of the session's workspace, which must still exist.
fn workspace_branch(
    id: &SessionId,
    taken: &Takeover,
    project: &Path,
) -> Result<String, WorkspaceError> {
    let branch = taken
        .branch
        .clone()
        .unwrap_or_else(|| super::branch_name(id.as_str()));
    if !taken.dir.is_dir() {
        return Err(WorkspaceError::Missing {
            session: id.as_str().to_owned(),
            dir: taken.dir.clone(),
            branch,
            repo: project.to_owned(),
        });
    }
    Ok(branch)
}

/// A session a stop in force reaches before its first turn: nothing it
/// would do could run, so the model is not called. One a person carries on
/// is refused and its log left as it is; one the daemon adopts ends
/// `stopped` in its log.
fn stopped_before_turn(
    setup: &SessionSetup<'_>,
    adopt: bool,
    mut writer: LogWriter,
    id: SessionId,
    project: &Path,
    stopped: &chock_gate::Stopped,
) -> Result<SessionOutcome, StartError> {
    if !adopt {
        return Err(StartError::Refused(format!(
            "{stopped}; session {} was not carried on: once a person has lifted the stop, carry it on with `chock run --continue {}`",
            id.as_str(),
            id.as_str()
        )));
    }
    writer.append(crate::session::open_event(setup, &id, project))?;
    let detail = format!("{stopped}; the session was not carried on and its workspace is kept");
    writer.append(SessionEnd {
        reason: EndReason::Stopped,
        detail: detail.clone(),
    })?;
    Ok(SessionOutcome {
        id,
        log: writer.path().to_owned(),
        reason: EndReason::Stopped,
        detail,
    })
}

/// workspace.integrate, read once as the session starts (seeds 004): the
/// answer is recorded as a `decision` event, and an apply of this session
/// describes and carries out what that answer says.
pub fn integrate_decision(policy: &chock_policy::Policy) -> chock_log::event::Decision {
    crate::judge::decision_event(&policy.decide(&Action::workspace_integrate()), None)
}

/// Whether the log's recorded workspace.integrate answer permits moving a
/// branch; `None` when the log recorded none (an older session).
pub fn recorded_integrate(log: &Path) -> Option<bool> {
    let batch = read_after(log, EventId::NONE).ok()?;
    batch
        .events
        .iter()
        .rev()
        .filter_map(|raw| raw.parse().ok())
        .find_map(|event| match event.body {
            chock_log::EventBody::Decision(d) if d.action == "workspace.integrate" => {
                Some(d.decision != "deny")
            }
            _ => None,
        })
}

fn read_events(log: &Path) -> Result<Vec<Event>, StartError> {
    let batch = read_after(log, EventId::NONE).map_err(SessionError::from)?;
    Ok(batch
        .events
        .iter()
        .filter_map(|raw| raw.parse().ok())
        .collect())
}

fn ends_with_answer(conversation: &[Message]) -> bool {
    matches!(conversation.last(), Some(Message::Assistant { calls, .. }) if calls.is_empty())
}

/// The directory the tools work in: the same subdirectory of the worktree
/// that the project is of its repository.
fn tools_root(project: &Path, dir: &Path) -> PathBuf {
    match toplevel(project) {
        Ok(repo) => match project.canonicalize() {
            Ok(p) => dir.join(p.strip_prefix(&repo).unwrap_or(Path::new(""))),
            Err(_) => dir.to_owned(),
        },
        Err(_) => dir.to_owned(),
    }
}

/// A `--continue` or `--adopt` worked out before the provider is built:
/// which session, and the model and project its log names.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub session: SessionId,
    pub adopt: bool,
    /// The session's model, `instance/model`, unless `--model` overrides it.
    pub model: Option<String>,
    pub project: Option<PathBuf>,
}

/// Finds the session to carry on (the newest of `project` when none is
/// named) and refuses `--allow-dirty`, which would copy the person's files
/// over the agent's own edits in a workspace that moved.
pub fn resolve_carry(
    state: &chock_log::StateDir,
    project: &Path,
    carry: &CarryOn,
    allow_dirty: bool,
) -> Result<Resolved, StartError> {
    if allow_dirty {
        return Err(StartError::Refused(
            "--allow-dirty is refused when carrying a session on: it copies your uncommitted files over the files in the session's workspace, and in a workspace that moved those are the agent's own edits; copy what you need by hand".to_owned(),
        ));
    }
    let session = match &carry.session {
        Some(text) => {
            state
                .find_session(text)
                .map_err(|err| StartError::Refused(err.to_string()))?
                .0
        }
        None => chock_log::list_sessions(state, Some(project))
            .sessions
            .into_iter()
            .next()
            .map(|listed| listed.id)
            .ok_or_else(|| {
                StartError::Refused(format!(
                    "no session of the project {} to carry on: name one (`chock run --continue <session id>`, ids from `chock sessions`)",
                    project.display()
                ))
            })?,
    };
    let folded = fold_log(&state.log_path(&session)).map_err(SessionError::from)?;
    Ok(Resolved {
        session,
        adopt: carry.adopt,
        model: folded.state.model,
        project: folded.state.project,
    })
}
