//! `chock sandbox`: run one command exactly as `run_command` would, so a
//! person can see what an agent's command sees. Exits with the command's
//! status (128 + signal when a signal ended it, named on stderr).

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use chock_sandbox::{ExitStatus, Sandbox, SandboxChild, SandboxSpec, SpawnError};

use crate::exit;

/// Run a command inside the sandbox every agent command runs in.
///
/// Fresh user, mount, pid, ipc, uts and network namespaces (loopback only),
/// a read-only system, a read-write workspace, a private /tmp, landlock,
/// seccomp, no_new_privs. The exit status is the command's own, or 128 plus
/// the signal that killed it. Status 125 means the sandbox could not be
/// built, 126 that the program could not be executed, 127 that it was not
/// found.
#[derive(Debug, PartialEq, Eq, clap::Args)]
#[command(
    after_help = "Examples:\n  chock sandbox -- ls -la\n  chock sandbox --workspace ~/src/app -- make test\n  chock sandbox --allow-jit -- node -e 'console.log(1)'"
)]
pub(crate) struct Args {
    /// The read-write project directory (default: the current directory).
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,

    /// Allow pages both writable and executable (what sandbox.jit = allow
    /// grants), which Node, Deno, Bun and the JVM need.
    #[arg(long)]
    allow_jit: bool,

    /// Print which isolation layers the command got, on stderr.
    #[arg(long)]
    report: bool,

    /// Run in this Nix dev shell: a closure file (one store path a line, as
    /// the Nix modules write for services.chock.devShell); its directories
    /// go first on PATH. See docs/nix.md.
    #[arg(long, value_name = "CLOSURE_FILE")]
    dev_shell: Option<PathBuf>,

    /// The dev shell's variables, as `nix print-dev-env --json` prints them
    /// (with --dev-shell).
    #[arg(long, value_name = "FILE", requires = "dev_shell")]
    dev_shell_env: Option<PathBuf>,

    #[command(flatten)]
    net: super::sandbox_net::NetArgs,

    /// The program and its arguments.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<OsString>,
}

impl Args {
    /// Whether `--net` was given.
    pub(crate) fn wants_network(&self) -> bool {
        self.net.wanted()
    }

    /// Whether `--dev-shell` was given (the full program reads it).
    pub(crate) fn wants_dev_shell(&self) -> bool {
        self.dev_shell.is_some()
    }

    /// Reads the words after `sandbox` when they have the plain form a
    /// shell or a script writes: `--workspace DIR` (or `--workspace=DIR`),
    /// `--allow-jit` and `--report`, each at most once, then `--` and the
    /// command. Anything else (help, the network's flags, a repeated or
    /// unknown flag, a value that looks like a flag) is `None`, for clap to
    /// read and answer. Building clap's command tree was a third of the
    /// front's own time before the sandbox (docs/performance.md); clap reads
    /// every line of this form the same way (a test compares the two).
    pub(crate) fn read_plain(words: &[OsString]) -> Option<Self> {
        let mut workspace = None;
        let mut allow_jit = false;
        let mut report = false;
        let mut rest = words.iter();
        while let Some(word) = rest.next() {
            let bytes = word.as_bytes();
            if bytes == b"--" {
                let command: Vec<OsString> = rest.cloned().collect();
                if command.is_empty() {
                    return None;
                }
                return Some(Self {
                    workspace,
                    allow_jit,
                    report,
                    dev_shell: None,
                    dev_shell_env: None,
                    net: super::sandbox_net::NetArgs::default(),
                    command,
                });
            }
            let value = match bytes {
                b"--allow-jit" if !allow_jit => {
                    allow_jit = true;
                    continue;
                }
                b"--report" if !report => {
                    report = true;
                    continue;
                }
                b"--workspace" => rest.next()?.as_bytes(),
                _ => bytes.strip_prefix(b"--workspace=")?,
            };
            if workspace.is_some() || value.is_empty() || value.starts_with(b"-") {
                return None;
            }
            workspace = Some(PathBuf::from(OsStr::from_bytes(value)));
        }
        None
    }
}

/// `chock sandbox` with every flag, the network's too.
pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let (workspace, mut spec) = base_spec(&args)?;
    if let Some(closure) = &args.dev_shell {
        let shell =
            chock_runner::tools::DevShell::from_files(closure, args.dev_shell_env.as_deref())
                .map_err(|err| anyhow::anyhow!("{err}"))?;
        eprintln!("chock: {}", shell.notice());
        let programs = chock_runner::tools::Programs::new(Some(shell));
        spec.env.extend(programs.env(std::env::var_os("PATH")));
    }
    let (spec, net) = super::sandbox_net::prepare(&args.net, &workspace, spec)?;
    execute(&args, spec, |child| match (net, child.take_router()) {
        (Some(plan), Some(link)) => super::sandbox_net::start(plan, link).map(Some),
        _ => Ok(None),
    })
}

/// `chock sandbox` without `--net`, as the front binary runs it: the same
/// steps as [`run`] with no reference to the router, the policy or an async
/// runtime, so none of them is linked into the front (see `front.rs`).
pub(crate) fn run_without_network(args: &Args) -> anyhow::Result<ExitCode> {
    debug_assert!(
        !args.wants_network() && !args.wants_dev_shell(),
        "the front passes --net and --dev-shell on"
    );
    let (_, spec) = base_spec(args)?;
    execute(args, spec, |_| Ok(()))
}

/// The workspace and the spec every `chock sandbox` starts from.
fn base_spec(args: &Args) -> anyhow::Result<(PathBuf, SandboxSpec)> {
    let workspace = match &args.workspace {
        Some(w) => w.clone(),
        None => std::env::current_dir()
            .context("cannot read the current directory: pass --workspace")?,
    };
    let mut spec = SandboxSpec::new(&workspace);
    spec.jit = args.allow_jit;
    Ok((workspace, spec))
}

/// Starts the command in `spec`, lets `router` give it a network (whatever
/// `router` returns is kept alive until the command ends), and turns the
/// command's end into this process's exit status.
fn execute<R>(
    args: &Args,
    spec: SandboxSpec,
    router: impl FnOnce(&mut SandboxChild) -> anyhow::Result<R>,
) -> anyhow::Result<ExitCode> {
    let sandbox = match Sandbox::new(spec) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("chock: {e} (exit status {})", exit::SANDBOX_FAILED);
            return Ok(ExitCode::from(exit::SANDBOX_FAILED));
        }
    };
    let mut child = match sandbox.spawn(&args.command) {
        Ok(c) => c,
        Err(e @ SpawnError::NotFound { .. }) => {
            eprintln!("chock: {e}");
            return Ok(ExitCode::from(exit::NOT_FOUND));
        }
        Err(e @ SpawnError::NotExecutable { .. }) => {
            eprintln!("chock: {e}");
            return Ok(ExitCode::from(exit::NOT_EXECUTABLE));
        }
        Err(e) => {
            eprintln!("chock: {e} (exit status {})", exit::SANDBOX_FAILED);
            return Ok(ExitCode::from(exit::SANDBOX_FAILED));
        }
    };
    let _router = router(&mut child)?;
    let report = child.report();
    if !report.is_complete() {
        for d in &report.degraded {
            eprintln!("chock: sandbox degraded: {d}");
        }
    }
    if args.report {
        eprintln!("chock: sandbox: {report}");
    }
    // Ctrl-C reaches pid 1 of the sandbox too (same process group), which
    // forwards it to the command; wait for the command's own verdict.
    // SAFETY: ignoring SIGINT/SIGQUIT in this process only.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::signal(libc::SIGQUIT, libc::SIG_IGN);
    }
    // The command's status is known before the sandbox has finished tearing
    // down; this process exits right after, and init reaps pid 1.
    let status = child
        .wait_command()
        .context("waiting for the sandboxed command")?;
    // This process ends next. Pid 1 is still exiting and shares its pages
    // copy-on-write: freeing the plan now would copy each page it writes
    // to, for memory the exit returns anyway.
    std::mem::forget(child);
    std::mem::forget(sandbox);
    Ok(match status {
        ExitStatus::Code(c) => ExitCode::from(u8::try_from(c).unwrap_or(1)),
        ExitStatus::Signal(s) => {
            eprintln!(
                "chock: {} {status}",
                args.command
                    .first()
                    .map(|c| c.to_string_lossy())
                    .unwrap_or_default()
            );
            ExitCode::from(u8::try_from(128 + s).unwrap_or(1))
        }
    })
}
