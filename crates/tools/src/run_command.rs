//! `run_command`: runs one program inside the sandbox (chock-sandbox) with
//! the session's working directory as the writable workspace, and hands
//! back its exit status and output.
//!
//! A command's network is the session's policy's (`crate::net`): with a
//! router, each connection's host is decided at `net.connect.<reversed
//! host>` while the command runs; without one it has loopback only. With
//! `"background": true` the command is a job (`super::jobs`) and the call
//! answers at once. A permitted foreground `git push` gets a sandbox of its
//! own with that call's credential socket or ssh route and agent proxy
//! (`super::push_call`).
//!
//! The command is an argument vector, never a shell line: the program is
//! what the policy classifies (`exec.path.<name>`, `exec.workspace.<path>`,
//! ...), and a shell line would hide it. A model that wants a pipeline asks
//! for `["sh", "-c", "..."]`, which is decided as `exec.path.sh`.
//!
//! Everything is awaited on the caller's `current_thread` runtime: the
//! sandbox hands back a pidfd, which tokio polls like a socket, and the
//! output pipes are read as non-blocking descriptors. There is no thread and
//! no `spawn_blocking` (DESIGN.md, Processes). Both the time and the amount
//! of output kept are bounded: past the timeout the whole sandbox is killed,
//! past [`CAPTURE_LIMIT`] bytes a stream is drained and counted, not kept.

use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

use chock_policy::{Action, ExecContext};
use chock_sandbox::{
    Bind, DeviceNode, ExitStatus, Sandbox, SandboxChild, SandboxSpec, SpawnError, Stdio,
};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio::io::AsyncReadExt;
use tokio::io::unix::AsyncFd;
use tokio::net::unix::pipe;

use super::jobs::Jobs;
use super::pidfd::{PidFd, wait_exit};
use super::push_call::{self, PushCall};
use super::workspace::SANDBOX_ROOT;
use super::{Decide, Effect, ToolError, ToolOutput, serve_port};
use crate::command_devices::CommandDevices;
use crate::command_git::CommandGit;
use crate::git_shim::{self, Carry, GitClass};
use crate::net::NetSetup;
use crate::nix::Programs;
use crate::tool::{Offered, Tool};
use chock_sandbox::net::HostVerdict;

/// The variable that names the session in a command's environment.
pub const SESSION_ENV: &str = "CHOCK_SESSION";

/// Seconds a command may run when the model names no timeout.
pub(crate) const DEFAULT_TIMEOUT_SECS: u64 = 120;
/// The longest timeout a model may ask for.
pub(crate) const MAX_TIMEOUT_SECS: u64 = 600;
/// Bytes of each stream (stdout, stderr) kept; the rest is counted.
pub(crate) const CAPTURE_LIMIT: usize = 1024 * 1024;

/// Run a program in a sandbox whose only writable directory is the workspace
/// (and a fresh /tmp). The command is an argument vector, not a shell line: use
/// ["sh", "-c", "..."] for pipes and redirections. The result gives the exit
/// status, then stdout and stderr. Network: where the policy gives one,
/// HTTP_PROXY, HTTPS_PROXY and ALL_PROXY point at a router that decides each
/// host, and a refused connection says which rule would permit it; otherwise
/// there is loopback only. With "background": true the command starts as a job
/// and the call answers at once with its id (read it with job_output); a
/// background command's connections get only what the policy allows outright.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The program and its arguments, e.g. ["cargo", "test"]
    #[schemars(length(min = 1))]
    pub command: Vec<String>,
    /// Kill the command after this many seconds (default 120; not for
    /// background jobs)
    #[schemars(range(min = 1, max = MAX_TIMEOUT_SECS))]
    pub timeout_secs: Option<u64>,
    /// Start it as a background job (a server, a watcher) and answer at once
    /// with the job id
    #[serde(default)]
    pub background: bool,
    /// Secrets to give this command, by the names the instructions list
    /// (each reaches the command as the environment variable named there;
    /// its value is never shown, in the output it reads as [secret NAME])
    #[serde(default)]
    #[schemars(length(max = 16))]
    pub secrets: Vec<String>,
}

impl Tool for Args {
    const NAME: &'static str = "run_command";

    fn check(self) -> Result<Self, ToolError> {
        if self.command.first().is_none_or(String::is_empty) {
            return Err(ToolError::Arguments {
                tool: "run_command",
                detail: "command is empty; give the program first, e.g. [\"ls\", \"-l\"]"
                    .to_owned(),
            });
        }
        if self.background && self.timeout_secs.is_some() {
            return Err(ToolError::Arguments {
                tool: "run_command",
                detail: "a background job has no timeout (it runs until it ends or the session does); drop timeout_secs"
                    .to_owned(),
            });
        }
        if let Some(name) = self.secrets.iter().find(|n| Action::secret_use(n).is_err()) {
            return Err(ToolError::Arguments {
                tool: "run_command",
                detail: format!(
                    "'{name}' is not a secret's name: a name holds letters, digits and '_', as the instructions list them"
                ),
            });
        }
        if self.timeout_secs == Some(0) || self.timeout_secs > Some(MAX_TIMEOUT_SECS) {
            return Err(ToolError::Arguments {
                tool: "run_command",
                detail: format!("timeout_secs must be between 1 and {MAX_TIMEOUT_SECS}"),
            });
        }
        Ok(self)
    }

    /// Decided at its program's `exec.*` action, or where the git shim sorts
    /// it when its first word is git: a read-only git call at nothing (it
    /// costs what it always did), one nothing carries out at its action but
    /// not run.
    fn decided_at(&self, offered: Offered<'_>) -> Decide {
        match git_shim::classify(&self.command) {
            None => Decide::At(exec_action(self, offered.programs)),
            Some(GitClass::ReadOnly { .. }) => Decide::Nothing,
            Some(GitClass::Decide { action, carry }) => match carry {
                Carry::NotRun(text) => Decide::NotRun(action, text),
                Carry::Run | Carry::Push => Decide::At(action),
            },
        }
    }
}

impl Args {
    fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS))
    }
}

/// The policy action a command is decided at: its program classified
/// against the workspace as the command sees it (`/workspace`), the
/// session's dev shell and what provide_tool added, and the host's `PATH`
/// (a path with `..` is `exec.unparsed`).
pub(crate) fn exec_action(args: &Args, programs: Option<&Programs>) -> Action {
    let program = args.command.first().map_or("", String::as_str);
    let ctx = ExecContext {
        project_root: PathBuf::from(SANDBOX_ROOT),
        cwd: PathBuf::from(SANDBOX_ROOT),
        devshell: std::collections::HashSet::new(),
        path_dirs: std::env::var_os("PATH")
            .map(|path| std::env::split_paths(&path).collect())
            .unwrap_or_default(),
    };
    match programs {
        Some(programs) => programs.classify(program, &ctx),
        None => Action::exec_for(program, &ctx),
    }
}

/// A sandbox prepared once and shared by the commands that use it, or why
/// none could be.
type Prepared = Rc<Result<Sandbox, String>>;

/// The session's command runner: the prepared sandboxes (with and without
/// a router), built at the first command that needs each (and again when
/// the session's devices change), whether the
/// sandbox's report has been handed to the log yet, the network the policy
/// gives, and the background jobs.
#[derive(Debug)]
pub struct Commands {
    workspace: PathBuf,
    jit: bool,
    sandbox: RefCell<Option<Prepared>>,
    routed: RefCell<Option<Prepared>>,
    reported: Cell<bool>,
    net: Option<NetSetup>,
    jobs: RefCell<Jobs>,
    /// Where a push's credential directory is made; `None` gives a push
    /// no credential.
    push_dir: Option<PathBuf>,
    pushes: Cell<u64>,
    /// The session's private git directory and what the host has brought
    /// back from it (`None` for a session outside a worktree).
    git: Option<Box<dyn CommandGit>>,
    /// The session's id, as `CHOCK_SESSION` in every command's
    /// environment: it tells the hooks and the git dispatcher that a
    /// command is an agent's (docs/stop.md).
    session: Option<String>,
    /// The dev shell and what provide_tool added: every command's PATH
    /// and the dev shell's variables.
    programs: Rc<Programs>,
    /// Paths beside the worktree the session's workspace block binds.
    binds: Vec<Bind>,
    /// The session's devices, and the nodes the prepared sandboxes hold.
    devices: Option<Box<dyn CommandDevices>>,
    device_nodes: RefCell<Vec<DeviceNode>>,
}

impl Commands {
    /// A runner for `workspace` with no network (loopback only); `jit` lifts
    /// the write-xor-execute rule (`sandbox.jit`, read before the first
    /// turn).
    pub fn new(workspace: &Path, jit: bool) -> Self {
        Self {
            workspace: workspace.to_owned(),
            jit,
            sandbox: RefCell::new(None),
            routed: RefCell::new(None),
            reported: Cell::new(false),
            net: None,
            jobs: RefCell::new(Jobs::default()),
            push_dir: None,
            pushes: Cell::new(0),
            git: None,
            session: None,
            programs: Rc::default(),
            binds: Vec::new(),
            devices: None,
            device_nodes: RefCell::new(Vec::new()),
        }
    }

    /// Gives commands the session's programs: the dev shell's environment
    /// and what provide_tool adds (builder style).
    #[must_use]
    pub fn with_programs(mut self, programs: Rc<Programs>) -> Self {
        self.programs = programs;
        self
    }

    /// The session's programs.
    pub fn programs(&self) -> &Rc<Programs> {
        &self.programs
    }

    /// What every command is given besides `env`: the dev shell's
    /// variables and the PATH its directories and provide_tool's lead.
    fn with_programs_env(&self, env: &[(String, String)]) -> Vec<(String, String)> {
        let mut all = self.programs.env(std::env::var_os("PATH"));
        all.retain(|(name, _)| !env.iter().any(|(n, _)| n == name));
        all.extend(env.iter().cloned());
        all
    }

    /// Asks the session to decide `nix.net.<host>` (or, for `None`,
    /// `nix.net.build.opaque`) for a build provide_tool is about to run;
    /// `what` is the question's sentence.
    pub(crate) async fn decide_nix_net(&self, host: Option<&str>, what: String) -> HostVerdict {
        let Some(net) = &self.net else {
            return HostVerdict::Refuse(
                "this session has no judge for a build's fetches".to_owned(),
            );
        };
        let (reply, answer) = tokio::sync::oneshot::channel();
        let record = crate::net::Record::NixNet {
            host: host.map(str::to_owned),
            what,
            reply,
        };
        if net.records.send(record).is_err() {
            return HostVerdict::Refuse("the session is ending".to_owned());
        }
        answer
            .await
            .unwrap_or_else(|_| HostVerdict::Refuse("the session is ending".to_owned()))
    }

    /// Runs one of the session's own programs (nix_eval's evaluator, not a
    /// command of the model's) in the session's sandbox without a router,
    /// to its end or its bound: its status (`None` at the bound) and its
    /// output.
    pub(crate) async fn run_own(
        &self,
        argv: &[String],
        timeout: Duration,
    ) -> Result<(Option<ExitStatus>, String, String), String> {
        let prepared = self.sandbox(false);
        let sandbox = prepared
            .as_ref()
            .as_ref()
            .map_err(|err| format!("the sandbox cannot be built: {err}"))?;
        let mut child = sandbox
            .spawn_with_env(argv, &self.with_programs_env(&[]))
            .map_err(|err| err.to_string())?;
        let ran = collect(&mut child, timeout)
            .await
            .map_err(|err| format!("waiting for it failed: {err}"))?;
        Ok((
            ran.status,
            ran.stdout.text("stdout"),
            ran.stderr.text("stderr"),
        ))
    }

    /// Binds these paths into every command's sandbox (builder style): the
    /// workspace block's binds, as the runner decided them.
    #[must_use]
    pub fn with_binds(mut self, binds: Vec<Bind>) -> Self {
        self.binds = binds;
        self
    }

    /// Passes the session's devices into every command (builder style),
    /// found anew at each command's start: see [`CommandDevices`].
    #[must_use]
    pub fn with_devices(mut self, devices: impl CommandDevices + 'static) -> Self {
        let (nodes, _) = devices.nodes();
        self.device_nodes = RefCell::new(nodes);
        self.devices = Some(Box::new(devices));
        self
    }

    /// Refuses a command when a bind's place in the workspace passes
    /// through a symbolic link: the worktree is written by commands, and
    /// the sandbox makes a bind's mount point there while the host's root
    /// is still reachable, so a link planted on the way would have it make
    /// a directory wherever the link points.
    fn bind_targets_plain(&self) -> Result<(), String> {
        for bind in &self.binds {
            let Ok(rel) = bind.dst.strip_prefix(SANDBOX_ROOT) else {
                continue;
            };
            let mut host = self.workspace.clone();
            for part in rel.components() {
                host.push(part);
                match std::fs::symlink_metadata(&host) {
                    Ok(meta) if meta.file_type().is_symlink() => {
                        return Err(format!(
                            "the command was not run: {} in the workspace is a symbolic link, and the bind at {} is placed through it; remove the link (a bind's place is a directory of the workspace, or nothing)",
                            Path::new(SANDBOX_ROOT)
                                .join(host.strip_prefix(&self.workspace).unwrap_or(&host))
                                .display(),
                            bind.dst.display()
                        ));
                    }
                    Ok(_) => {}
                    Err(_) => break,
                }
            }
        }
        Ok(())
    }

    /// Asks where the session's devices are now; where that changed, the
    /// prepared sandboxes are dropped (the next command builds its own
    /// with the nodes as they are). The sentences say what changed.
    fn refresh_devices(&self) -> Vec<String> {
        let Some(devices) = &self.devices else {
            return Vec::new();
        };
        let (nodes, said) = devices.nodes();
        if *self.device_nodes.borrow() != nodes {
            *self.device_nodes.borrow_mut() = nodes;
            self.sandbox.borrow_mut().take();
            self.routed.borrow_mut().take();
        }
        said
    }

    /// Names the session in every command's environment, `CHOCK_SESSION`
    /// (builder style).
    #[must_use]
    pub fn with_session(mut self, id: &str) -> Self {
        self.session = Some(id.to_owned());
        self
    }

    /// Gives commands the session's private git directory (builder style):
    /// see [`CommandGit`].
    #[must_use]
    pub fn with_git(mut self, git: impl CommandGit + 'static) -> Self {
        self.git = Some(Box::new(git));
        self
    }

    /// Brings back the commits commands made in the private git directory;
    /// the sentences for a notice ([`CommandGit::bring_back`]).
    pub fn bring_back_git(&self) -> Vec<String> {
        self.git
            .as_ref()
            .map(|git| git.bring_back())
            .unwrap_or_default()
    }

    /// Makes each permitted foreground `git push` a directory of its own in
    /// `dir` (the session's directory) with its credential socket (builder
    /// style).
    #[must_use]
    pub fn with_push_credentials(mut self, dir: &Path) -> Self {
        self.push_dir = Some(dir.to_owned());
        self
    }

    /// A push's own sandbox and socket, when `args` is a foreground push
    /// and pushes get credentials here.
    fn push_call(&self, args: &Args, base: &Sandbox) -> Result<Option<PushCall>, String> {
        let Some(parent) = self.push_dir.as_deref() else {
            return Ok(None);
        };
        if args.background || !push_call::is_push(&args.command) {
            return Ok(None);
        }
        let n = self.pushes.get() + 1;
        self.pushes.set(n);
        push_call::prepare(
            base,
            &args.command,
            &self.workspace,
            self.git.as_deref(),
            parent,
            &format!("push-{n}"),
        )
    }

    /// Gives commands the network `net` describes (builder style).
    #[must_use]
    pub fn with_network(mut self, net: NetSetup) -> Self {
        self.net = Some(net);
        self
    }

    /// Whether some rule could let a port be published (serve_port is
    /// offered only then).
    pub fn could_serve(&self) -> bool {
        self.net.as_ref().is_some_and(NetSetup::could_serve)
    }

    fn sandbox(&self, routed: bool) -> Prepared {
        let cell = if routed { &self.routed } else { &self.sandbox };
        if let Some(prepared) = cell.borrow().as_ref() {
            return Rc::clone(prepared);
        }
        let prepared = Rc::new(self.spec(routed).and_then(|mut spec| {
            spec.stdin = Stdio::Null;
            Sandbox::new(spec).map_err(|err| err.to_string())
        }));
        *cell.borrow_mut() = Some(Rc::clone(&prepared));
        prepared
    }

    /// What every sandbox of the session is made of: the workspace at
    /// `/workspace`, the private git directory, the session's name, jit as
    /// decided, piped output, and a router when `routed`.
    pub(crate) fn spec(&self, routed: bool) -> Result<SandboxSpec, String> {
        let mut spec = SandboxSpec::new(&self.workspace);
        spec.workspace_at = Some(PathBuf::from(SANDBOX_ROOT));
        if let Some(git) = &self.git {
            let mounts = git.prepare(&self.workspace, Path::new(SANDBOX_ROOT))?;
            spec.binds.extend(mounts.binds);
            spec.env.extend(mounts.env);
        }
        spec.binds.extend(self.binds.iter().cloned());
        spec.devices.clone_from(&self.device_nodes.borrow());
        if let Some(id) = &self.session {
            spec.env.push((SESSION_ENV.to_owned(), id.clone()));
        }
        spec.jit = self.jit;
        spec.stdout = Stdio::Piped;
        spec.stderr = Stdio::Piped;
        if routed {
            spec = if self.net.as_ref().is_some_and(NetSetup::fake_resolver) {
                spec.with_fake_resolver()
            } else {
                spec.with_router()
            };
        }
        Ok(spec)
    }

    /// The session's network, for a process other than a command (an MCP
    /// server) that is given a router.
    pub(crate) fn net(&self) -> Option<&NetSetup> {
        self.net.as_ref()
    }

    /// Whether a command gets a router: a foreground one per
    /// `.policy.net.router`; a background one per `.policy.net.background`,
    /// or (refusing every host) where a port could be published from it.
    pub(crate) fn routed(&self, background: bool) -> bool {
        self.net
            .as_ref()
            .is_some_and(|net| net.policy.command_gets_router(background))
    }

    /// Reads a job's output (job_output), after waiting as asked.
    pub(crate) async fn job_output(&self, args: &crate::job_output::Args) -> ToolOutput {
        let result = async {
            let (mut done, wait) = self.jobs.borrow().output_of(args)?;
            if !wait.is_zero() {
                let _ = tokio::time::timeout(wait, done.wait_for(|ended| *ended)).await;
            }
            self.jobs.borrow().report(&args.job)
        }
        .await;
        result.unwrap_or_else(|err| ToolOutput::error(err.to_string()))
    }

    /// Publishes a port of a background job (serve_port), where the
    /// session offers the tool at all.
    pub(crate) fn serve_port(&self, args: &serve_port::Args) -> ToolOutput {
        if !self.could_serve() {
            return ToolOutput::error(
                "serve_port is not offered in this session: no rule could permit a net.serve.<port>",
            );
        }
        let result = self.jobs.borrow().publish(args.port, args.job.as_deref());
        match result {
            Ok(text) => ToolOutput::ok(text),
            Err(err) => ToolOutput::error(err.to_string()),
        }
    }

    /// Kills the background jobs still running (the session is ending) and
    /// waits until each end is recorded.
    pub async fn finish(&self) -> Vec<String> {
        let mut jobs = std::mem::take(&mut *self.jobs.borrow_mut());
        jobs.finish().await;
        self.bring_back_git()
    }

    /// Runs the model's call to its end; `env` is what this call alone is
    /// given (the secrets the session decided it may have, as variables).
    pub(crate) async fn run_args(&self, args: &Args, env: &[(String, String)]) -> ToolOutput {
        let devices_said = self.refresh_devices();
        if let Err(text) = self.bind_targets_plain() {
            return ToolOutput::error(text);
        }
        let routed = self.routed(args.background);
        let prepared = self.sandbox(routed);
        let sandbox = match prepared.as_ref() {
            Ok(sandbox) => sandbox,
            Err(err) => {
                return ToolOutput::error(format!("the sandbox cannot be built: {err}"));
            }
        };
        let push = match self.push_call(args, sandbox) {
            Ok(push) => push,
            Err(text) => return ToolOutput::error(text),
        };
        let sandbox = push.as_ref().map_or(sandbox, |push| &push.sandbox);
        let mut child = match sandbox.spawn_with_env(&args.command, &self.with_programs_env(env)) {
            Ok(child) => child,
            Err(err @ SpawnError::NotFound { .. }) => return ToolOutput::error(err.to_string()),
            Err(err) => return ToolOutput::error(format!("the command did not start: {err}")),
        };
        let notice = (!self.reported.replace(true)).then(|| child.report().to_string());
        let link = child.take_router().map(std::sync::Arc::new);
        let router = match (&self.net, &link) {
            (Some(net), Some(link)) => match net.start(link, args.background) {
                Ok(router) => Some(router),
                Err(err) => {
                    let _ = child.kill();
                    return ToolOutput::error(format!(
                        "the command's network could not be started ({err}); it was not run"
                    ));
                }
            },
            _ => None,
        };
        let mut output = if args.background {
            let records = self.net.as_ref().map(|net| net.records.clone());
            let (started, recorded) =
                self.jobs
                    .borrow_mut()
                    .start(child, args.command.join(" "), link, router, records);
            // The log says the job started before the result does (a session
            // that is ending answers by dropping the sender).
            if let Some(recorded) = recorded {
                let _ = recorded.await;
            }
            started
        } else {
            let mut child = Foreground(child);
            let ran = match &push {
                // The sockets answer while the push runs, and only then.
                Some(push) => tokio::select! {
                    ran = collect(&mut child.0, args.timeout()) => ran,
                    never = push.serve() => match never {},
                },
                None => collect(&mut child.0, args.timeout()).await,
            };
            drop(router);
            let mut output = match ran {
                Ok(ran) => ran.render(args.timeout()),
                Err(err) => ToolOutput::error(format!("waiting for the command failed: {err}")),
            };
            if let Some(push) = &push
                && output.is_error
            {
                push.explain(&mut output.text);
            }
            drop(push);
            output
        };
        let mut said: Vec<String> = notice
            .map(|report| format!("commands run in a sandbox with {report}"))
            .into_iter()
            .collect();
        if !args.background {
            said.extend(self.bring_back_git());
        }
        if !said.is_empty() {
            output = output.with_effect(Effect::Notice {
                subject: "sandbox".to_owned(),
                text: said.join("\n"),
            });
        }
        if !devices_said.is_empty() {
            output.text = format!("{}\n{}", devices_said.join("\n"), output.text);
            output = output.with_effect(Effect::Notice {
                subject: "devices".to_owned(),
                text: devices_said.join("\n"),
            });
        }
        output
    }
}

/// A command the call waits for. A call dropped before the command ends
/// (the person cut the turn short) kills it and reaps it, so nothing the
/// abandoned call started goes on changing the workspace.
struct Foreground(SandboxChild);

impl Drop for Foreground {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// One stream's bytes, the first [`CAPTURE_LIMIT`] of them, and how many more
/// there were.
#[derive(Debug, Default)]
struct Captured {
    bytes: Vec<u8>,
    dropped: u64,
}

impl Captured {
    fn text(&self, name: &str) -> String {
        let mut text = String::from_utf8_lossy(&self.bytes).into_owned();
        if self.dropped > 0 {
            text.push_str(&format!(
                "\n[{} more bytes of {name} were not kept]",
                self.dropped
            ));
        }
        text
    }
}

/// What a finished (or killed) command left.
#[derive(Debug)]
struct Ran {
    /// `None` when the timeout killed it.
    status: Option<ExitStatus>,
    stdout: Captured,
    stderr: Captured,
}

impl Ran {
    fn render(&self, timeout: Duration) -> ToolOutput {
        let head = match self.status {
            Some(status) => status.to_string(),
            None => format!(
                "timed out after {} s and was killed; pass a larger timeout_secs (at most {MAX_TIMEOUT_SECS}) if it needs longer",
                timeout.as_secs()
            ),
        };
        let text = format!(
            "{head}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.stdout.text("stdout"),
            self.stderr.text("stderr")
        );
        if self.status.is_some_and(ExitStatus::success) {
            ToolOutput::ok(text)
        } else {
            ToolOutput::error(text)
        }
    }
}

async fn collect(child: &mut SandboxChild, timeout: Duration) -> std::io::Result<Ran> {
    let stdout = child
        .stdout
        .take()
        .map(pipe::Receiver::from_owned_fd)
        .transpose()?;
    let stderr = child
        .stderr
        .take()
        .map(pipe::Receiver::from_owned_fd)
        .transpose()?;
    let mut ran = Ran {
        status: None,
        stdout: Captured::default(),
        stderr: Captured::default(),
    };
    // The safe constructor is deprecated for types that do not tie the
    // descriptor's life to themselves; `PidFd` borrows the child that owns
    // the pidfd, so the descriptor outlives the registration, and the crate
    // forbids the unsafe `register`.
    #[expect(
        deprecated,
        reason = "the pidfd outlives the registration: PidFd borrows its owner"
    )]
    let mut pidfd = AsyncFd::new(PidFd(child))?;
    let finished = {
        let work = async {
            let ((), (), status) = tokio::join!(
                drain(stdout, &mut ran.stdout),
                drain(stderr, &mut ran.stderr),
                wait_exit(&mut pidfd)
            );
            status
        };
        tokio::time::timeout(timeout, work).await
    };
    match finished {
        Ok(status) => ran.status = Some(status?),
        Err(_elapsed) => {
            // Killing pid 1 takes the whole pid namespace with it.
            pidfd.get_mut().0.kill()?;
            wait_exit(&mut pidfd).await?;
        }
    }
    Ok(ran)
}

/// Reads a stream to its end, keeping the first [`CAPTURE_LIMIT`] bytes. A
/// read error ends the stream: the output is best effort, the status is not.
async fn drain(stream: Option<pipe::Receiver>, into: &mut Captured) {
    let Some(mut stream) = stream else { return };
    let mut buf = vec![0u8; 64 * 1024];
    while let Ok(n) = stream.read(&mut buf).await {
        if n == 0 {
            break;
        }
        let room = CAPTURE_LIMIT.saturating_sub(into.bytes.len()).min(n);
        into.bytes.extend_from_slice(&buf[..room]);
        into.dropped += (n - room) as u64;
    }
}
