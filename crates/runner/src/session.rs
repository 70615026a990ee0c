//! A session from its first event to its last: take the log, fold it, append
//! the person's message, run one turn with every step recorded as it
//! happens, and end the session with a reason. [`run_new`] works in the
//! project directly (tests and embedders); `chock run` works in a git
//! workspace (`crate::workspace::session`). Both, and a carried-on session,
//! run their turn through one `drive`.
//!
//! Everything runs on the caller's task: the log writer is synchronous
//! (one `write(2)` per event) and the provider is driven on the same
//! `current_thread` runtime. The writer sits in a `RefCell` so that the
//! network's records (`crate::net`: decisions on a command's connections,
//! background jobs) are appended beside the turn, never holding it across
//! an await.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use chock_log::event::{
    Decision as LogDecision, EndReason, Handover, Notice, PlanItem as LogPlanItem,
    PlanStatus as LogPlanStatus, PlanUpdate, SessionEnd, SessionOpen, TitleSet, ToolResult,
    TurnEnd as LogTurnEnd, UserMessage,
};
use chock_log::{LogWriter, ReadError, SessionId, StateDir, WriteError, fold_log};
use chock_policy::{Action, Decision, Policy};

use crate::approval::{ApproveSocket, SocketError, Terminal, TerminalSlot};
use crate::beside::Beside;
use crate::compact::Compactor;
use crate::config::SearchConfig;
use crate::handover::{Boundary, HandoverSocket, HandoverSocketError};
use crate::history;
use crate::judge::{Judge, decision_event};
use chock_tools::net::NetSetup;

use crate::net;
use crate::person::{Begun, Person};
use crate::provider::{AssistantTurn, Message, Provider, ToolCall};
use crate::review::Reviewer;
use crate::stop::StopCheck;
use crate::turn::{Gate, Interruption, TurnContext, TurnEnd, TurnHooks, TurnLimits};
use crate::workspace::{Opened, Pending, WorkspaceError};
use chock_tools::{
    Call, Commands, Decide, Effect, LspServers, McpTools, Offered, PlanStatus, SessionTools,
    ToolName, ToolOutput, Unparsed, Workspace, memory_file,
};

/// What a session needs before it starts.
#[derive(Debug)]
pub struct SessionSetup<'a> {
    pub state: &'a StateDir,
    /// The project the session works on; until workspaces land, the tools
    /// work in it directly.
    pub project: &'a Path,
    /// The model as the person named it, `instance/model`, for the log.
    pub model_label: &'a str,
    /// The model's name at its server.
    pub model: &'a str,
    pub provider: &'a Provider,
    /// The policy every tool call is decided by.
    pub policy: &'a Policy,
    pub system: &'a str,
    pub limits: TurnLimits,
    /// The engine behind web_search, from the operator's config.zon.
    pub search: Option<&'a SearchConfig>,
    /// The model that answers `agent_review` and `agent_then_human`; the
    /// session's own model when `None`.
    pub reviewer: Option<Reviewer<'a>>,
    /// Tokens the model's context holds; compaction starts as the
    /// conversation nears it.
    pub context_tokens: u64,
    /// Show questions on the terminal on stdin too (`chock run` in the
    /// foreground), when stdin is one.
    pub foreground: bool,
    /// Where a sentence for the person at the terminal goes (a wait before
    /// a retry, thinking shown folded); the binary prints it to stderr.
    pub say: fn(&str),
    /// What the start read (guidance, memory, skills), recorded in the log
    /// at the start; `system` holds its instructions. `None` for a session
    /// told only `system`.
    pub start: Option<&'a crate::context::StartContext>,
    /// The dev shell its commands run in (config.zon's `.devshell`).
    pub dev_shell: Option<&'a chock_tools::DevShell>,
    /// Subagents: what this session needs to start them, and what it is a
    /// child of when it is one. `None`: it starts none.
    pub agents: Option<&'a crate::subagent::Agents>,
    /// What the start settled about the project's style rules (`None`: no
    /// rule is checked, and nothing is said).
    pub style: Option<&'a crate::style::StyleStart>,
    /// What `/model` may switch to in an interactive session (`None`: the
    /// session keeps its model, and `/model` says so).
    pub models: Option<&'a crate::models::Models>,
}

impl SessionSetup<'_> {
    fn lineage(&self) -> Option<&crate::subagent::Lineage> {
        self.agents.and_then(|a| a.lineage.as_ref())
    }
}

/// The `session.open` of a new session of `project`, naming its parent
/// when it is a subagent.
pub(crate) fn open_event(setup: &SessionSetup<'_>, id: &SessionId, project: &Path) -> SessionOpen {
    SessionOpen {
        session_id: id.clone(),
        project: project.to_owned(),
        model: setup.model_label.to_owned(),
        pid: std::process::id(),
        chock_version: env!("CARGO_PKG_VERSION").to_owned(),
        parent: setup.lineage().map(|l| l.parent.clone()),
    }
}

/// How a session ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionOutcome {
    pub id: SessionId,
    pub log: PathBuf,
    pub reason: EndReason,
    /// The ending's sentence for a person (empty for a plain `done`).
    pub detail: String,
}

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error(transparent)]
    Write(#[from] WriteError),
    #[error(transparent)]
    Read(#[from] ReadError),
    #[error(transparent)]
    Approvals(#[from] SocketError),
    #[error(transparent)]
    Handovers(#[from] HandoverSocketError),
    #[error("cannot use {} as the session's workspace: {detail}", path.display())]
    Workspace { path: PathBuf, detail: String },
    /// The checkout made beside the first model request failed.
    #[error(transparent)]
    Checkout(WorkspaceError),
}

/// Starts a new session with `message` and runs it to its end. `person`
/// sees the model's text as it streams. When `interrupt` completes (Ctrl-C,
/// for `chock run`) the turn is abandoned at its next wait and the session
/// ends `interrupted`; tools run between waits, so a tool call is never left
/// half recorded.
pub async fn run_new(
    setup: &SessionSetup<'_>,
    message: &str,
    person: impl Person,
    interrupt: impl Future<Output = impl Into<Interruption>>,
) -> Result<SessionOutcome, SessionError> {
    let workspace = Workspace::new(setup.project).map_err(|err| SessionError::Workspace {
        path: setup.project.to_owned(),
        detail: err.to_string(),
    })?;
    let id = SessionId::new();
    let mut writer = LogWriter::create(setup.state, &id)?;
    // The runner folds before it appends anything (DESIGN.md); a new log
    // folds to nothing, but a continued one will not, and both take this
    // path.
    let folded = fold_log(writer.path())?;
    let mut conversation: Vec<Message> = history::from_fold(&folded.state.conversation);
    writer.append(open_event(setup, &id, setup.project))?;
    writer.append(UserMessage {
        text: message.to_owned(),
    })?;
    conversation.push(Message::User {
        text: message.to_owned(),
    });
    let root = workspace.root().to_owned();
    let (outcome, _) = drive(
        setup,
        Opening {
            writer,
            id,
            root: root.clone(),
            checkout: Checkout::Ready(None),
            conversation,
        },
        person,
        interrupt,
    )
    .await?;
    Ok(outcome)
}

/// The session's workspace as `drive` starts: there already, or a checkout
/// still being made, with the `workspace.integrate` decision to record
/// beside its `workspace.open` once it is.
#[derive(Debug)]
pub(crate) enum Checkout {
    /// There already; with the checkout's git directories and starting
    /// commit when it is a session's worktree.
    Ready(Option<(crate::workspace::GitPaths, String)>),
    Pending {
        pending: Pending,
        integrate: LogDecision,
        /// The binds its `workspace.open` records.
        bound: Vec<chock_log::event::BoundPath>,
    },
    Opened(Opened),
}

impl Checkout {
    /// The workspace the tools work in at `root`: one still being made is
    /// taken as planned (no tool runs before it exists).
    fn workspace(&self, root: PathBuf) -> Result<Workspace, SessionError> {
        match self {
            Checkout::Pending { .. } => Ok(Workspace::planned(root)),
            Checkout::Ready(_) | Checkout::Opened(_) => {
                Workspace::new(&root).map_err(|err| SessionError::Workspace {
                    detail: err.to_string(),
                    path: root,
                })
            }
        }
    }

    /// The private git directory commands of this checkout use.
    fn sandbox_git(
        &self,
        session_dir: &Path,
        id: &SessionId,
    ) -> Option<crate::workspace::SandboxGit> {
        let (paths, start) = match self {
            Checkout::Ready(known) => known.clone()?,
            Checkout::Pending { pending, .. } => (
                pending.checked().paths().clone(),
                pending.checked().commit().to_owned(),
            ),
            Checkout::Opened(opened) => (opened.paths.clone(), opened.commit.clone()),
        };
        let branch = crate::workspace::branch_name(id.as_str());
        Some(crate::workspace::SandboxGit::new(
            session_dir,
            paths,
            &branch,
            &start,
        ))
    }
}

/// Runs the turn for a session whose log is open and whose opening events
/// are written: reads sandbox.jit, binds approve.sock, runs the turn with
/// every step recorded, and ends the session with a reason. Every way a
/// session starts (new, in a workspace, carried on) comes through here.
///
/// A checkout still being made is waited for when the model's first answer
/// is in, before it is recorded and before any tool runs, and its
/// `workspace.open` written then; one that fails ends the session with its
/// error in the log (`session.end`) and returns it. The checkout made is
/// handed back.
pub(crate) async fn drive(
    setup: &SessionSetup<'_>,
    opening: Opening,
    person: impl Person,
    interrupt: impl Future<Output = impl Into<Interruption>>,
) -> Result<(SessionOutcome, Option<Opened>), SessionError> {
    let Opening {
        mut writer,
        id,
        root,
        checkout,
        mut conversation,
    } = opening;
    let mut person = person;
    let begun = Begun {
        id: &id,
        model: setup.model_label,
        root: &root,
        log: writer.path(),
    };
    if let Some(tap) = person.begin(&begun) {
        writer.set_tap(tap);
    }
    let workspace = checkout.workspace(root)?;
    // sandbox.jit is read before the first turn, where nobody can be asked:
    // only allow turns write-xor-execute off.
    let jit = Judge::before_first_turn(setup.policy, &Action::sandbox_jit());
    let writer = RefCell::new(writer);
    if let Err(err) = writer.borrow_mut().append(decision_event(&jit, None)) {
        return Err(settled_before_error(checkout, &writer, err.into()));
    }
    if let Err(err) = record_dev_shell(&writer, setup.dev_shell) {
        return Err(settled_before_error(checkout, &writer, err.into()));
    }
    let session_dir = setup.state.session_dir(&id);
    let beside = Beside::start(
        setup.policy,
        setup.project,
        workspace.root(),
        &session_dir,
        &writer,
    );
    let mut beside = match beside {
        Ok(beside) => beside,
        Err(err) => return Err(settled_before_error(checkout, &writer, err.into())),
    };
    if let Some(verdict) = setup.style.and_then(|s| s.verdict.as_ref())
        && let Err(err) = writer.borrow_mut().append(decision_event(verdict, None))
    {
        return Err(settled_before_error(checkout, &writer, err.into()));
    }
    if let Some(start) = setup.start
        && let Err(err) = record_start(&writer, start)
    {
        return Err(settled_before_error(checkout, &writer, err.into()));
    }
    let (records, mut net_records) = tokio::sync::mpsc::unbounded_channel();
    let programs = std::rc::Rc::new(chock_tools::Programs::new(setup.dev_shell.cloned()));
    // A subagent keeps whatever hardening its parent kept.
    let jit_allowed = jit.decision == Decision::Allow && setup.lineage().is_none_or(|l| l.jit);
    let (commands, git) = commands_for(setup, &id, &workspace, &checkout, jit_allowed, records);
    let commands = beside.give(commands).with_programs(programs.clone());
    let servers = McpTools::default();
    let plugins = chock_tools::plugins::PluginTools::default();
    let lsp = LspServers::default();
    let tools = tools_for(setup, &servers, &lsp)
        .with_nix(chock_tools::NixTools::new(programs, setup.project))
        .with_plugins(&plugins);
    if let Err(err) = crate::plugins::start(
        setup.policy,
        setup.project,
        workspace.root(),
        setup.state,
        &writer,
        &plugins,
    ) {
        return Err(settled_before_error(checkout, &writer, err.into()));
    }
    let (approvals, handover) = match bind_sockets(setup, &id) {
        Ok(sockets) => sockets,
        Err(err) => return Err(settled_before_error(checkout, &writer, err)),
    };
    let judge =
        judge_for(setup, &writer, &approvals).asking_as(setup.agents.and_then(|a| a.asker(&id)));
    let children = crate::subagent::Children::new(
        id.clone(),
        setup.state,
        setup.project,
        setup.model_label,
        setup.foreground,
        setup.agents,
    );
    let mut limits = setup.limits;
    if limits.max_session_calls.is_some() {
        let log = writer.borrow().path().to_owned();
        limits.session_calls_before = fold_log(&log)?.state.model_calls.len();
    }
    let cx = TurnContext {
        provider: setup.provider,
        model: setup.model,
        system: setup.system,
        workspace: &workspace,
        commands: &commands,
        tools: &tools,
        limits,
    };
    let mut hooks = LogHooks {
        writer: &writer,
        judge: &judge,
        policy: setup.policy,
        secrets: crate::secrets::Redactor::default(),
        tools: &tools,
        handover: &handover,
        compaction: Compactor::for_session(
            setup.provider,
            setup.model,
            setup.system,
            setup.context_tokens,
        ),
        checkout,
        person,
        say: setup.say,
        thought: 0,
        said_unknown: std::collections::BTreeSet::new(),
        children: &children,
        answering: None,
    };
    // A subagent starts from its parent's promises and grants; promises and
    // grants made earlier in a carried-on session bind this process too.
    let inherited = match setup.lineage() {
        Some(lineage) => hooks.inherit(lineage, &id),
        None => Ok(()),
    };
    if let Err(err) = inherited.and_then(|()| hooks.replay()) {
        return Err(settled_after(&mut hooks, err));
    }
    let interrupt = async { Into::<Interruption>::into(interrupt.await) };
    let mut interrupt = std::pin::pin!(interrupt);
    // Ctrl-C (or SIGTERM, SIGHUP) abandons the turn at its next wait and
    // the session ends interrupted; tools run between waits, so no call is
    // half recorded. The network's records are appended as they come, and
    // handover asks taken, beside the turn (answered at its boundaries).
    let mut turn_closed = false;
    let end = match start_servers(
        setup,
        &mut hooks,
        &commands,
        (&servers, &lsp),
        interrupt.as_mut(),
    )
    .await
    {
        Err(err) => return Err(settled_after(&mut hooks, err)),
        Ok(Some(end)) => Ok(Some(end)),
        Ok(None) => {
            let talk = converse::Talk {
                cx: &cx,
                models: setup.models,
                label: setup.model_label,
                net_records: &mut net_records,
                turn_closed: &mut turn_closed,
            };
            talk.run(&mut conversation, &mut hooks, interrupt.as_mut())
                .await
        }
    };
    let (end, opened) = hooks.settled(end)?;
    drop(hooks);
    // Subagents do not outlive the session that started them.
    children.end_all(&writer).await?;
    // The servers do not outlive the session (a next owner starts its own).
    servers.stop();
    lsp.stop().await;
    let leftovers = git.filter(|_| !matches!(end, Ok(Some(TurnEnd::HandOver))));
    wind_down(&commands, &mut net_records, &writer, &judge, leftovers, &id).await?;
    if !matches!(end, Ok(Some(TurnEnd::HandOver))) {
        beside.end(&mut writer.borrow_mut())?;
    }
    let outcome = close(
        writer.into_inner(),
        id,
        end,
        approvals,
        handover,
        turn_closed,
    )
    .await?;
    Ok((outcome, opened))
}

/// The dev shell's notice, the session's first: where it came from and how
/// many store paths it mounts.
fn record_dev_shell(
    writer: &RefCell<LogWriter>,
    shell: Option<&chock_tools::DevShell>,
) -> Result<(), WriteError> {
    let Some(shell) = shell else { return Ok(()) };
    writer.borrow_mut().append(Notice {
        subject: "devshell".to_owned(),
        text: shell.notice(),
    })?;
    Ok(())
}

/// The start's record in the log: which files the instructions hold and
/// their sizes, the skills offered, and each note (a block Chock does not
/// act on, a skill skipped), one notice each.
fn record_start(
    writer: &RefCell<LogWriter>,
    start: &crate::context::StartContext,
) -> Result<(), WriteError> {
    let mut writer = writer.borrow_mut();
    writer.append(Notice {
        subject: "context".to_owned(),
        text: start.record(),
    })?;
    for note in &start.notes {
        writer.append(Notice {
            subject: "start".to_owned(),
            text: note.clone(),
        })?;
    }
    Ok(())
}

/// What fetch_url, web_search, read_image, the memory tools and the MCP
/// servers' tools share for the session.
fn tools_for<'s>(
    setup: &SessionSetup<'s>,
    servers: &'s McpTools,
    lsp: &'s LspServers,
) -> SessionTools<'s> {
    let tools = SessionTools::new(
        setup.policy,
        memory_file(setup.state, setup.project),
        setup.search,
        setup.provider.image_support(),
    )
    .with_skills(setup.start.map(|s| s.skills.clone()).unwrap_or_default())
    .with_mcp(servers)
    .with_agents(
        setup.agents.is_some_and(crate::subagent::Agents::can_spawn),
        setup.agents.and_then(crate::subagent::Agents::only_tools),
    )
    .with_lsp(lsp);
    match setup.style.and_then(crate::style::StyleStart::rules) {
        Some(rules) => tools.with_style(rules),
        None => tools,
    }
}

/// `err`, once a checkout still being made is recorded (whatever the error).
fn settled_after<F>(hooks: &mut LogHooks<'_, F>, err: SessionError) -> SessionError {
    let _ = hooks.settle();
    err
}

/// The MCP servers and the language servers start before the first turn,
/// together; a local one runs in the workspace, so that is made first. An
/// interruption while they start ends the session before its turn
/// (`Some`).
async fn start_servers<F>(
    setup: &SessionSetup<'_>,
    hooks: &mut LogHooks<'_, F>,
    commands: &Commands,
    (servers, lsp): (&McpTools, &LspServers),
    interrupt: std::pin::Pin<&mut impl Future<Output = Interruption>>,
) -> Result<Option<TurnEnd>, SessionError> {
    if crate::mcp::any_local(setup.policy) || !setup.policy.lsp_servers().is_empty() {
        hooks.settle()?;
    }
    let start = async {
        let (mcp, lsp) = futures_util::future::join(
            crate::mcp::start(
                setup.policy,
                commands,
                hooks.writer,
                servers,
                &hooks.secrets,
            ),
            crate::lsp::start(setup.policy, commands, hooks.writer, lsp),
        )
        .await;
        mcp.and(lsp)
    };
    tokio::select! {
        started = start => started.map(|()| None).map_err(SessionError::from),
        why = interrupt => Ok(Some(TurnEnd::Interrupted(why))),
    }
}

/// Background jobs do not outlive the session: each still running is
/// killed, and its end recorded (a session that hands over holds none: it
/// said ready only once the log showed every job ended); the connections
/// still queued are decided without asking; what the sandbox's git left
/// is brought back and said; and a session that ends (rather than hands
/// over) has what it left uncommitted committed on its branch (`git`).
async fn wind_down(
    commands: &Commands,
    net_records: &mut tokio::sync::mpsc::UnboundedReceiver<chock_tools::net::Record>,
    writer: &RefCell<LogWriter>,
    judge: &Judge<'_>,
    git: Option<crate::workspace::SandboxGit>,
    id: &SessionId,
) -> Result<(), SessionError> {
    let said = commands.finish().await;
    net::drain(net_records, writer, judge).await?;
    if !said.is_empty() {
        writer.borrow_mut().append(Notice {
            subject: "sandbox".to_owned(),
            text: said.join("\n"),
        })?;
    }
    if let Some(git) = git.filter(|git| git.paths.work_tree.is_dir()) {
        let text = match git.commit_leftovers(id.as_str()) {
            Ok(None) => return Ok(()),
            Ok(Some(tip)) => format!(
                "what the session left uncommitted was committed on {} as {}",
                git.branch,
                tip.get(..7).unwrap_or(&tip)
            ),
            Err(err) => err.to_string(),
        };
        writer.borrow_mut().append(Notice {
            subject: "workspace".to_owned(),
            text,
        })?;
    }
    Ok(())
}

/// What a session starts `drive` with: its log, open and holding the
/// opening events; its id; where its tools work; its checkout; the
/// conversation so far.
pub(crate) struct Opening {
    pub(crate) writer: LogWriter,
    pub(crate) id: SessionId,
    pub(crate) root: PathBuf,
    pub(crate) checkout: Checkout,
    pub(crate) conversation: Vec<Message>,
}

/// The session's command runner: its workspace, jit as decided, the
/// network, push credentials and the private git directory of its
/// checkout, which is also handed back for the session's end.
fn commands_for(
    setup: &SessionSetup<'_>,
    id: &SessionId,
    workspace: &Workspace,
    checkout: &Checkout,
    jit: bool,
    records: chock_tools::net::Records,
) -> (Commands, Option<crate::workspace::SandboxGit>) {
    let session_dir = setup.state.session_dir(id);
    let commands = Commands::new(workspace.root(), jit)
        .with_session(id.as_str())
        .with_network(NetSetup::new(setup.policy, records))
        .with_push_credentials(&session_dir);
    match checkout.sandbox_git(&session_dir, id) {
        Some(git) => (
            commands.with_git(crate::workspace::BringBack::new(git.clone())),
            Some(git),
        ),
        None => (commands, None),
    }
}

/// approve.sock and handover.sock beside the session's log.
fn bind_sockets(
    setup: &SessionSetup<'_>,
    id: &SessionId,
) -> Result<(ApproveSocket, HandoverSocket), SessionError> {
    let approvals = ApproveSocket::bind(&setup.state.approve_socket(id))?;
    let handover = HandoverSocket::bind(&setup.state.handover_socket(id))?;
    Ok((approvals, handover))
}

/// The session's one judge: its policy, the reviewer (the configured one,
/// else the session's own model) and the doors to a person.
fn judge_for<'s>(
    setup: &SessionSetup<'s>,
    writer: &'s RefCell<LogWriter>,
    approvals: &'s ApproveSocket,
) -> Judge<'s> {
    let own = Reviewer {
        provider: setup.provider,
        model: setup.model,
        label: setup.model_label,
    };
    let terminal = TerminalSlot::new(if setup.foreground {
        Terminal::stdin()
    } else {
        None
    });
    Judge::new(
        setup.policy.clone(),
        writer,
        approvals,
        terminal,
        setup.reviewer.unwrap_or(own),
        StopCheck::new(setup.project, setup.state.decisions_log()),
    )
}

/// Ends the turn in the log (unless `turn_closed`: an interactive session
/// ended its last turn already, and the person left at the prompt) and the
/// session with its reason, or hands it over when a client confirmed.
async fn close(
    mut writer: LogWriter,
    id: SessionId,
    end: TurnOrCheckout,
    approvals: ApproveSocket,
    handover: HandoverSocket,
    turn_closed: bool,
) -> Result<SessionOutcome, SessionError> {
    if !turn_closed {
        writer.append(LogTurnEnd {})?;
    }
    let end = match end {
        Ok(end) => end,
        Err(err) => {
            writer.append(SessionEnd {
                reason: EndReason::Error,
                detail: err.to_string(),
            })?;
            return Err(SessionError::Checkout(err));
        }
    };
    if matches!(end, Some(TurnEnd::HandOver)) {
        return hand_over(writer, id, approvals, handover).await;
    }
    let (reason, detail) = match end {
        Some(end) => ending(end),
        None => (
            EndReason::Interrupted,
            "interrupted by the person; the turn was abandoned".to_owned(),
        ),
    };
    writer.append(SessionEnd {
        reason: reason.clone(),
        detail: detail.clone(),
    })?;
    Ok(SessionOutcome {
        id,
        log: writer.path().to_owned(),
        reason,
        detail,
    })
}

/// `err`, after waiting for a checkout still being made and recording it
/// (best effort: `err` is what is returned either way), so a session that
/// fails before its turn still names the workspace that exists.
fn settled_before_error(
    checkout: Checkout,
    writer: &RefCell<LogWriter>,
    err: SessionError,
) -> SessionError {
    if let Checkout::Pending {
        pending,
        integrate,
        bound,
    } = checkout
        && let Ok(opened) = pending.finish()
    {
        let mut writer = writer.borrow_mut();
        if writer.append(opened.event_with(bound)).is_ok() {
            let _ = writer.append(integrate);
        }
    }
    err
}

/// The session's end after a confirmed handover: the ending is written and
/// flushed, the sockets beside the log are removed (so the next owner's own
/// are never removed by this one's teardown), the lock is released, and
/// only then is the client told, so a client that hears `ok` can have the
/// daemon take the log at once.
async fn hand_over(
    mut writer: LogWriter,
    id: SessionId,
    approvals: ApproveSocket,
    handover: HandoverSocket,
) -> Result<SessionOutcome, SessionError> {
    let detail = HANDED_OVER.to_owned();
    writer.append(Handover {
        to: "daemon".to_owned(),
    })?;
    let ending = writer.append(SessionEnd {
        reason: EndReason::Handover,
        detail: detail.clone(),
    })?;
    let confirmed = handover.take_confirmed();
    drop(approvals);
    drop(handover);
    let log = writer.path().to_owned();
    drop(writer);
    if let Some(confirmed) = confirmed {
        confirmed.done(ending.id.0).await;
    }
    Ok(SessionOutcome {
        id,
        log,
        reason: EndReason::Handover,
        detail,
    })
}

/// The detail of a handover ending.
pub const HANDED_OVER: &str =
    "handed over at a turn boundary; the daemon's `chock run --adopt` carries it on from this log";

pub(crate) fn ending(end: TurnEnd) -> (EndReason, String) {
    match end {
        TurnEnd::Done => (EndReason::Done, String::new()),
        TurnEnd::MaxTokens => (
            EndReason::Done,
            "the model stopped at its output token limit; raise .max_tokens in config.zon for longer answers"
                .to_owned(),
        ),
        TurnEnd::Stuck(why) => (EndReason::Error, why),
        TurnEnd::Budget(calls) => (
            EndReason::Error,
            format!(
                "the turn made {calls} model calls without finishing and was stopped: .max_model_calls = {calls} in config.zon bounds a turn; raise it, or carry the session on to let the model go on"
            ),
        ),
        TurnEnd::SessionBudget(calls) => (
            EndReason::Error,
            format!(
                "the session made {calls} model calls in all and was stopped: .max_session_model_calls = {calls} in config.zon bounds a session; raise it to carry the session on"
            ),
        ),
        TurnEnd::Provider(err) => (EndReason::Error, err.to_string()),
        TurnEnd::HandOver => (EndReason::Handover, HANDED_OVER.to_owned()),
        TurnEnd::Interrupted(Interruption::Person) => (
            EndReason::Interrupted,
            "interrupted by the person; the turn was abandoned".to_owned(),
        ),
        TurnEnd::Interrupted(Interruption::Signal(signal)) => (
            EndReason::Interrupted,
            format!("interrupted by {signal}; the turn was abandoned"),
        ),
        TurnEnd::Stopped(text) => (
            EndReason::Stopped,
            format!("{text}; the workspace is kept"),
        ),
    }
}

/// How a turn ended (`None`: interrupted), or the checkout that failed.
type TurnOrCheckout = Result<Option<TurnEnd>, WorkspaceError>;

/// Records each step of a turn in the log as it happens.
pub(crate) struct LogHooks<'w, F> {
    pub(crate) writer: &'w RefCell<LogWriter>,
    /// The session's one judge, shared with the network's decisions.
    pub(crate) judge: &'w Judge<'w>,
    /// The session's policy, for its secrets.
    pub(crate) policy: &'w Policy,
    /// Every secret value given so far, kept out of outputs.
    pub(crate) secrets: crate::secrets::Redactor,
    pub(crate) tools: &'w SessionTools<'w>,
    pub(crate) handover: &'w HandoverSocket,
    pub(crate) compaction: Compactor<'w>,
    /// The workspace's checkout, waited for before anything depends on it.
    pub(crate) checkout: Checkout,
    pub(crate) person: F,
    /// Where sentences for the person at the terminal go.
    pub(crate) say: fn(&str),
    /// Characters of thinking streamed in the current model call.
    pub(crate) thought: usize,
    /// Output item types already said to be unknown in this run.
    pub(crate) said_unknown: std::collections::BTreeSet<String>,
    /// The subagents this session started.
    pub(crate) children: &'w crate::subagent::Children<'w>,
    /// The model that answers now, when `/model` switched from the
    /// session's own (`instance/model`, for `assistant.message`'s `model`).
    pub(crate) answering: Option<String>,
}

impl<F> LogHooks<'_, F> {
    /// The turn's end once the checkout is settled: a turn that ended
    /// before the model's first answer (a provider error, Ctrl-C) still
    /// waits for its checkout, so the log names the workspace that exists,
    /// or says why none does. A checkout that failed is the turn's error;
    /// any other error is the session's.
    fn settled(
        &mut self,
        end: Result<Option<TurnEnd>, SessionError>,
    ) -> Result<(TurnOrCheckout, Option<Opened>), SessionError> {
        let end = end.and_then(|end| self.settle().map(|()| end));
        let opened = match std::mem::replace(&mut self.checkout, Checkout::Ready(None)) {
            Checkout::Opened(opened) => Some(opened),
            Checkout::Ready(_) | Checkout::Pending { .. } => None,
        };
        match end {
            Ok(end) => Ok((Ok(end), opened)),
            Err(SessionError::Checkout(err)) => Ok((Err(err), opened)),
            Err(other) => Err(other),
        }
    }

    /// Waits for a checkout still being made and records it: its
    /// `workspace.open` and the `workspace.integrate` decision. Nothing
    /// after the first model request depends on the workspace before this
    /// (the answer is recorded after it, the tools run after that). The
    /// wait blocks the session's thread, which has nothing else to do: the
    /// model has answered and no tool may run yet.
    pub(crate) fn settle(&mut self) -> Result<(), SessionError> {
        match std::mem::replace(&mut self.checkout, Checkout::Ready(None)) {
            Checkout::Pending {
                pending,
                integrate,
                bound,
            } => {
                let opened = pending.finish().map_err(SessionError::Checkout)?;
                self.append(opened.event_with(bound))?;
                self.append(integrate)?;
                self.checkout = Checkout::Opened(opened);
            }
            other => self.checkout = other,
        }
        Ok(())
    }

    pub(crate) fn append(
        &self,
        body: impl Into<chock_log::event::EventBody>,
    ) -> Result<(), WriteError> {
        self.writer.borrow_mut().append(body).map(drop)
    }
}

impl<F: Person> TurnHooks for LogHooks<'_, F> {
    type Error = SessionError;

    fn text(&mut self, delta: &str) {
        self.person.text(delta);
    }

    fn thinking(&mut self, delta: &str) {
        self.thought += delta.chars().count();
    }

    async fn assistant(&mut self, turn: &AssistantTurn) -> Result<(), SessionError> {
        self.settle()?;
        self.record_answer(turn)
    }

    async fn before_model_call(
        &mut self,
        conversation: &mut Vec<Message>,
        tools: &[crate::provider::ToolSpec],
    ) -> Result<(), SessionError> {
        // A server that failed since the last request has its tools
        // withdrawn before the model is offered them again.
        for text in self
            .tools
            .mcp()
            .map(McpTools::withdraw_failed)
            .unwrap_or_default()
        {
            self.append(Notice {
                subject: "mcp".to_owned(),
                text,
            })?;
        }
        // What background subagents said since the last call.
        conversation.extend(
            self.children
                .take_arrived()
                .into_iter()
                .map(|text| Message::User { text }),
        );
        self.maybe_compact(conversation, tools).await?;
        self.compaction.sent = conversation.len();
        self.thought = 0;
        Ok(())
    }

    async fn provider_wait(
        &mut self,
        wait: &crate::provider::RetryWait,
    ) -> Result<(), SessionError> {
        self.record_wait(wait)
    }

    async fn before_tool(
        &mut self,
        call: &ToolCall,
        parsed: &Result<Call, Unparsed>,
    ) -> Result<Gate, SessionError> {
        // Settled at the answer already; kept here so that no path to a
        // tool can pass an unmade checkout.
        self.settle()?;
        let decide = match parsed {
            Ok(typed) => typed.decided_at(Offered {
                serve: self.judge.could_permit("net.serve"),
                search: self.tools.can_search(),
                skills: Some(self.tools.skills()),
                programs: self.tools.nix().map(|nix| &*nix.programs),
                nix_build: self.judge.could_permit("nix.build"),
            }),
            // Arguments that do not parse are answered with what is wrong;
            // a tool decided at `call.<tool>` is decided first, as it
            // would be with any arguments.
            Err(unparsed) => unparsed
                .tool
                .and_then(ToolName::call_action)
                .map_or(Decide::Nothing, Decide::At),
        };
        // The stop is read before anything else, for every call.
        let named = match &decide {
            Decide::At(action) | Decide::NotRun(action, _) => action.to_string(),
            Decide::Nothing | Decide::Refuse(_) => format!("call.{}", call.name),
        };
        if let Some(text) = self.judge.stop(&named, Some(call.id.clone()))? {
            return Ok(Gate::Stopped(text));
        }
        if let Some(refusal) = self.narrowed(parsed) {
            return Ok(Gate::Refuse(refusal));
        }
        if let Ok(Call::JobOutput(args)) = parsed
            && let Some(output) = self
                .child_job(&args.job, args.wait_secs.unwrap_or(0))
                .await?
        {
            self.append(history::call_event(call, None))?;
            return Ok(Gate::Answered(output));
        }
        // The session tools are carried out here: they ask a person or
        // change the session's own policy.
        if let Ok(typed) = parsed
            && typed.tool().is_some_and(ToolName::is_session_tool)
        {
            return self.session_tool(typed, call).await;
        }
        let (action, not_run) = match decide {
            Decide::Nothing => (None, None),
            Decide::At(action) => (Some(action), None),
            Decide::NotRun(action, text) => (Some(action), Some(text)),
            Decide::Refuse(text) => return Ok(Gate::Refuse(text)),
        };
        if let Some(action) = action
            && let Some(refusal) = self.gate(call, &action).await?
        {
            return Ok(Gate::Refuse(refusal));
        }
        // A stop written while a person or the reviewer was asked holds:
        // the call is not run, whatever the answer was.
        if let Some(text) = self.judge.stop(&named, Some(call.id.clone()))? {
            return Ok(Gate::Stopped(text));
        }
        if let Some(text) = not_run {
            // Permitted, and still nothing carries it out (git fetch and
            // the like): the agent is told what is missing.
            return Ok(Gate::Refuse(text));
        }
        let named_secrets = parsed.as_ref().map_or(&[][..], Call::secrets);
        let given = match self.give_secrets(call, named_secrets).await? {
            Ok(given) => given,
            Err(refusal) => return Ok(Gate::Refuse(refusal)),
        };
        self.append(history::call_event(call, None))?;
        if given.env().is_empty() {
            Ok(Gate::Run)
        } else {
            Ok(Gate::RunGiven(given))
        }
    }

    fn redact(&self, output: &mut ToolOutput) {
        self.secrets.redact_output(output);
    }

    async fn boundary(&mut self, last: bool) -> Result<Boundary, SessionError> {
        if self.children_at_boundary(last).await? {
            return Ok(Boundary::Resume);
        }
        if !self.handover.asked() {
            return Ok(Boundary::Continue);
        }
        // Only an asked session reads its own log here: what it still
        // holds is what the log shows open, the same fold every reader uses.
        let log = self.writer.borrow().path().to_owned();
        let last_event = || self.writer.borrow().last_id().0;
        if last {
            // After the final answer there is no later boundary to hand over
            // at: while the client still asks, wait here for the work.
            return Ok(self
                .handover
                .wait_at_last_boundary(|| crate::handover::held(&log), last_event)
                .await);
        }
        let Some((holdings, workspace)) = crate::handover::held(&log) else {
            return Ok(Boundary::Continue);
        };
        Ok(self
            .handover
            .at_boundary(holdings, last_event(), workspace.as_deref())
            .await)
    }

    fn stopped(&self) -> Option<String> {
        self.judge.stopped()
    }

    async fn tool_result(
        &mut self,
        call: &ToolCall,
        output: &ToolOutput,
    ) -> Result<(), SessionError> {
        // What the tool decided while it ran comes before its result.
        if let Some(Effect::Decisions(verdicts)) = &output.effect {
            for verdict in verdicts {
                self.append(decision_event(verdict, Some(call.id.clone())))?;
            }
        }
        self.append(ToolResult {
            call_id: call.id.clone(),
            ok: !output.is_error,
            output: output.text.clone(),
            truncated: output.is_truncated(),
            diff: output.diff.clone(),
        })?;
        match &output.effect {
            None | Some(Effect::Decisions(_)) => {}
            Some(Effect::Notice { subject, text }) => {
                self.append(Notice {
                    subject: subject.clone(),
                    text: text.clone(),
                })?;
            }
            Some(Effect::Title(title)) => {
                self.append(TitleSet {
                    title: title.clone(),
                })?;
            }
            Some(Effect::Plan(items)) => {
                self.append(PlanUpdate {
                    items: items
                        .iter()
                        .map(|item| LogPlanItem {
                            text: item.step.clone(),
                            status: match item.status {
                                PlanStatus::Pending => LogPlanStatus::Pending,
                                PlanStatus::InProgress => LogPlanStatus::InProgress,
                                PlanStatus::Done => LogPlanStatus::Done,
                            },
                        })
                        .collect(),
                })?;
            }
        }
        Ok(())
    }
}

mod converse {
    //! (Kept in this file: it drives the session's hooks, which are
    //! this file's.)
    //!
    //! A session's turns, one after another, for as long as its person goes on
    //! talking. A session that is not interactive runs one turn and ends, as
    //! it always has. An interactive one (`chock run <project>` on a terminal)
    //! asks its person for a message, runs the turn, and asks again: every
    //! turn is in the same log, the same workspace and the same conversation.
    //!
    //! Beside each turn run the network's records and `handover.sock`, as they
    //! do for a single turn; beside the prompt too, and a handover asked while
    //! the person is at the prompt is answered there, that being a boundary.
    //!
    //! A turn the person cuts short (Ctrl-C) is abandoned at its next wait, as
    //! an interrupted session's is; here the session stays. What the cut left
    //! open is closed in the log before the person is asked again: each call of
    //! the last answer without a result gets one saying so, a question still
    //! open is answered no, a `notice` says the turn was interrupted, and the
    //! turn ends. The conversation is then read back from the log, the one
    //! account of what happened.
    //!
    //! At the prompt the person may also switch the model for the next
    //! turns (`/model`, decided as at the start: `crate::models`) or compact
    //! the conversation now (`/compact`); neither is a turn, and the person
    //! is told what came of it and asked again. The model switched to is
    //! owned here, and each later turn's context names it.

    use std::cell::RefCell;
    use std::rc::Rc;

    use chock_log::event::{Answer, ApprovalAnswer, Notice, TurnEnd as LogTurnEnd, UserMessage};
    use chock_log::{LogWriter, fold_log};

    use super::{LogHooks, SessionError, ending};
    use crate::history;
    use crate::models::{Models, Switched};
    use crate::person::{Next, Person, Told};
    use crate::provider::Message;
    use crate::turn::{Boundary, Interruption, TurnContext, TurnEnd, TurnHooks, run_turn};

    /// The result a call gets when the person cut its turn short.
    pub(crate) const CUT_SHORT: &str = "this call was cut short: the person interrupted the turn (Ctrl-C) before it finished, so its effect is unknown; check the state it would have changed before calling it again";

    /// What the turns of one session share besides the conversation and hooks.
    pub(crate) struct Talk<'a, 'c> {
        /// The first turn's context; a model `/model` switched to replaces
        /// its provider and model for the turns after.
        pub(crate) cx: &'a TurnContext<'c>,
        /// What `/model` chooses from (`None`: the session keeps its model).
        pub(crate) models: Option<&'a Models>,
        /// The session's own model, `instance/model`.
        pub(crate) label: &'a str,
        pub(crate) net_records:
            &'a mut tokio::sync::mpsc::UnboundedReceiver<chock_tools::net::Record>,
        /// Set once a turn's end is in the log and no turn has begun since.
        pub(crate) turn_closed: &'a mut bool,
    }

    /// How one turn ran out.
    enum Ran {
        Ended(TurnEnd),
        /// The person cut it short.
        Cut,
        /// The network's records could not be kept (`None`: interrupted).
        Gone,
    }

    /// What the prompt came to.
    enum Said {
        Next(Next),
        /// A client asked for a handover while the person was at the prompt.
        Asked,
        Interrupted(Interruption),
        Gone,
    }

    impl Talk<'_, '_> {
        /// Runs the session's turns; how the last ended (`None`: interrupted
        /// while the network's records were written).
        pub(crate) async fn run<P: Person>(
            self,
            conversation: &mut Vec<Message>,
            hooks: &mut LogHooks<'_, P>,
            mut interrupt: std::pin::Pin<&mut impl Future<Output = Interruption>>,
        ) -> Result<Option<TurnEnd>, SessionError> {
            let (writer, judge, handover) = (hooks.writer, hooks.judge, hooks.handover);
            let interactive = hooks.person.interactive();
            let mut limits = self.cx.limits;
            // Before the first turn the person is asked only when the session
            // began without a message; after every turn, always.
            let mut ask = interactive && !matches!(conversation.last(), Some(Message::User { .. }));
            // The model `/model` switched to last, owned here for the turns.
            let mut switched: Option<Rc<Switched>> = None;
            loop {
                if ask {
                    let said = tokio::select! {
                        next = hooks.person.next() => Said::Next(next),
                        () = asked(handover) => Said::Asked,
                        why = interrupt.as_mut() => Said::Interrupted(why),
                        recorded = crate::net::record(self.net_records, writer, judge) => {
                            recorded?;
                            Said::Gone
                        }
                        never = handover.serve() => match never {},
                    };
                    match said {
                        Said::Next(Next::Message(text)) => {
                            hooks.append(UserMessage { text: text.clone() })?;
                            conversation.push(Message::User { text });
                            *self.turn_closed = false;
                        }
                        Said::Next(Next::Model(name)) => {
                            let current = switched.as_ref().map_or(self.label, |s| &s.label);
                            let told = match self.switch(hooks, &name, current)? {
                                Ok(chosen) => {
                                    let chosen = Rc::new(chosen);
                                    hooks.compaction.switch(Rc::clone(&chosen));
                                    hooks.answering =
                                        (chosen.label != self.label).then(|| chosen.label.clone());
                                    let told = Told::Model(chosen.label.clone());
                                    switched = Some(chosen);
                                    told
                                }
                                Err(refused) => Told::Refused(refused),
                            };
                            hooks.person.told(&told);
                            continue;
                        }
                        Said::Next(Next::Compact) => {
                            let cut = hooks.person.cut();
                            let told = tokio::select! {
                                told = hooks.compact_now(conversation) => told?,
                                () = cut => Told::Refused(
                                    "the compaction was cut short (Ctrl-C), so nothing was compacted; /compact tries again".to_owned(),
                                ),
                                why = interrupt.as_mut() => return Ok(Some(TurnEnd::Interrupted(why))),
                            };
                            hooks.person.told(&told);
                            continue;
                        }
                        Said::Next(Next::Leave) => return Ok(Some(TurnEnd::Done)),
                        Said::Next(Next::Gone) => {
                            return Ok(Some(TurnEnd::Interrupted(Interruption::Signal("SIGHUP"))));
                        }
                        Said::Asked => {
                            if hooks.boundary(true).await? == Boundary::HandOver {
                                return Ok(Some(TurnEnd::HandOver));
                            }
                            continue;
                        }
                        Said::Interrupted(why) => return Ok(Some(TurnEnd::Interrupted(why))),
                        Said::Gone => return Ok(None),
                    }
                }
                ask = true;
                let cx = match &switched {
                    Some(chosen) => TurnContext {
                        provider: &chosen.provider,
                        model: &chosen.model,
                        limits,
                        ..*self.cx
                    },
                    None => TurnContext { limits, ..*self.cx },
                };
                let cut = hooks.person.cut();
                let ran = tokio::select! {
                    end = run_turn(&cx, conversation, hooks) => Ran::Ended(end?),
                    why = interrupt.as_mut() => Ran::Ended(TurnEnd::Interrupted(why)),
                    () = cut => Ran::Cut,
                    recorded = crate::net::record(self.net_records, writer, judge) => {
                        recorded?;
                        Ran::Gone
                    }
                    never = handover.serve() => match never {},
                };
                let end = match ran {
                    Ran::Gone => return Ok(None),
                    Ran::Cut => {
                        close_cut(writer)?;
                        *conversation = history::from_fold(
                            &fold_log(writer.borrow().path())?.state.conversation,
                        );
                        None
                    }
                    Ran::Ended(end) if !interactive || ends_session(&end) => return Ok(Some(end)),
                    Ran::Ended(end) => Some(end),
                };
                if let Some(end) = end
                    && !matches!(end, TurnEnd::Done)
                {
                    hooks.append(Notice {
                        subject: "turn".to_owned(),
                        text: ending(end).1,
                    })?;
                }
                hooks.append(LogTurnEnd {})?;
                *self.turn_closed = true;
                if limits.max_session_calls.is_some() {
                    limits.session_calls_before =
                        fold_log(writer.borrow().path())?.state.model_calls.len();
                }
            }
        }
    }

    impl Talk<'_, '_> {
        /// `/model <name>`: the model chosen and allowed as at the start,
        /// and the switch recorded (a `notice`); or the sentence saying why
        /// not, with nothing recorded and the model kept.
        fn switch<P>(
            &self,
            hooks: &LogHooks<'_, P>,
            name: &str,
            current: &str,
        ) -> Result<Result<Switched, String>, SessionError> {
            let Some(models) = self.models else {
                return Ok(Err(format!(
                    "this session cannot switch models (it was not started by chock run); it keeps {current}"
                )));
            };
            let chosen = match models.switch(hooks.policy, name, current) {
                Ok(chosen) => chosen,
                Err(refused) => return Ok(Err(refused)),
            };
            hooks.append(Notice {
                subject: MODEL_NOTICE.to_owned(),
                text: format!(
                    "the model is now {} (was {current}), switched by the person with /model; {}",
                    chosen.label, chosen.rule
                ),
            })?;
            Ok(Ok(chosen))
        }
    }

    /// The subject of the `notice` that records a switch of model.
    pub(crate) const MODEL_NOTICE: &str = "model";

    /// Whether a turn's end ends an interactive session too: a handover, a
    /// stop, a signal, the session's budget spent. Anything else (the answer,
    /// a provider's failure, the turn's budget) leaves the person at the prompt.
    fn ends_session(end: &TurnEnd) -> bool {
        matches!(
            end,
            TurnEnd::HandOver
                | TurnEnd::Stopped(_)
                | TurnEnd::Interrupted(_)
                | TurnEnd::SessionBudget(_)
        )
    }

    /// Closes in the log what a cut turn left open (see the module docs).
    fn close_cut(writer: &RefCell<LogWriter>) -> Result<(), SessionError> {
        let folded = fold_log(writer.borrow().path())?;
        let mut writer = writer.borrow_mut();
        for pending in &folded.state.pending_approvals {
            writer.append(ApprovalAnswer {
                request_id: pending.request_id.clone(),
                answer: Answer::No,
                by: "interrupted".to_owned(),
                text: None,
            })?;
        }
        let cut = history::unanswered_calls(&folded.state.conversation);
        history::answer_cut_calls(&mut writer, &mut Vec::new(), cut, CUT_SHORT)?;
        writer.append(Notice {
            subject: "turn".to_owned(),
            text:
                "interrupted by the person (Ctrl-C); the turn was abandoned and the session goes on"
                    .to_owned(),
        })?;
        Ok(())
    }

    /// Completes once a client has asked for a handover. The ask is taken by
    /// `handover.sock`'s own server; this only looks, a few times a second.
    async fn asked(handover: &crate::handover::HandoverSocket) {
        while !handover.asked() {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }
}
