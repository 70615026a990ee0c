//! [`Sandbox`]: a prepared spec, and `spawn`, which clones the child and
//! waits (synchronously, like `std::process::Command::spawn`) until the
//! command has been executed or the sandbox failed to build.
//!
//! The child is cloned with a raw `clone(2)` carrying every namespace flag
//! and `CLONE_PIDFD`, so the caller gets a pidfd it can poll (tokio's
//! `AsyncFd`) without threads or SIGCHLD handlers. Two pipes connect the
//! child to the caller: the setup pipe (closed by exec, or carrying the
//! step and errno that failed) and the status pipe (pid 1 writes the
//! command's wait status before it exits).

use std::ffi::{CString, OsStr, OsString, c_char, c_int};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::sync::{Arc, Mutex, OnceLock};

use crate::child::{self, step};
use crate::error::{SpawnError, SpecError};
use crate::landlock as ll;
use crate::plan::{self, Layout};
use crate::report::{LandlockState, SandboxReport};
use crate::seccomp::{self, Filters};
use crate::spec::{NetworkMode, SandboxSpec, Stdio};
use crate::status::ExitStatus;

/// Set to a comma-separated list to pretend parts of the kernel are missing,
/// so the degraded paths can be tested: `no-userns`, `no-landlock`,
/// `no-netns-helper` (pid 1 makes the network namespace itself),
/// `netns-refused` (the helper reports the namespace refused); or
/// `pause-child=MS`, which holds the cloned child for MS milliseconds
/// before it arms its parent-death signal, so a test can kill the caller
/// in that window. For tests only; documented in docs/sandbox.md.
pub const FORCE_ENV: &str = "CHOCK_SANDBOX_FORCE";

/// The report's words for a sandbox without namespaces, by the reason.
const NO_USERNS: &str = "user namespaces unavailable";
const NO_NETNS: &str = "network namespaces refused by the kernel";

/// What the child needs that does not change between spawns.
#[derive(Debug)]
pub(crate) struct Prepared {
    pub(crate) layout: Layout,
    pub(crate) uid_map: CString,
    pub(crate) gid_map: CString,
    pub(crate) filters_ns: Arc<Filters>,
    pub(crate) filters_degraded: OnceLock<Arc<Filters>>,
    pub(crate) jit: bool,
    pub(crate) rlimits: Vec<(libc::__rlimit_resource_t, libc::rlim_t, libc::rlim_t)>,
    /// This process's argument strings after the program's name (start,
    /// length), which pid 1 blanks: it is a copy of the caller, and
    /// `/proc/1/cmdline` inside would show the caller's whole command line
    /// (a session's `chock run ... "<message>"`).
    pub(crate) args_tail: Option<(usize, usize)>,
}

/// Where this process's argument strings lie past `argv[0]`, read once
/// from `/proc/self/stat` (fields 48 and 49, `arg_start` and `arg_end`).
fn args_tail() -> Option<(usize, usize)> {
    static TAIL: OnceLock<Option<(usize, usize)>> = OnceLock::new();
    *TAIL.get_or_init(|| {
        let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        // The name (field 2) may hold spaces and parentheses: the fields
        // that follow start after the last ')', at field 3.
        let rest = &stat[stat.rfind(')')? + 1..];
        let mut fields = rest.split_ascii_whitespace().skip(48 - 3);
        let start: usize = fields.next()?.parse().ok()?;
        let end: usize = fields.next()?.parse().ok()?;
        let first = std::env::args_os().next()?.len() + 1;
        let from = start.checked_add(first)?;
        (end > from).then(|| (from, end - from))
    })
}

/// What one spawn hands the child. Raw pointers into `_argv`/`_envp` stay
/// valid because the vectors live as long as this struct.
#[derive(Debug)]
pub(crate) struct PerSpawn {
    pub(crate) namespaces: bool,
    pub(crate) filter: Arc<Filters>,
    pub(crate) setup_w: c_int,
    /// The parent's end of the setup pipe, which the child closes first
    /// (its copy would keep the pipe's reader alive; see `child::main`).
    pub(crate) setup_r: c_int,
    /// Milliseconds the child waits before arming its parent-death signal
    /// (tests only, [`FORCE_ENV`]).
    pub(crate) pause_ms: u32,
    /// How pid 1 gets its network namespace (tests only, [`FORCE_ENV`]).
    pub(crate) netns: crate::netns::Mode,
    pub(crate) status_w: c_int,
    pub(crate) landlock_fd: Option<c_int>,
    pub(crate) stdio: [Option<c_int>; 3],
    pub(crate) keep: [c_int; 4],
    /// The namespace's end of the router link, or -1 (see `net::inside`).
    pub(crate) net_fd: c_int,
    /// The port the router's listener binds inside the namespace.
    pub(crate) net_port: u16,
    /// Whether pid 1 also binds the fake resolver's UDP socket.
    pub(crate) net_resolver: bool,
    /// The signals the command resets to their default before it execs
    /// (bit `n - 1` for signal `n`): see [`non_default_signals`].
    pub(crate) reset_signals: u64,
    pub(crate) candidates: Vec<CString>,
    pub(crate) argv: Vec<*const c_char>,
    pub(crate) envp: Vec<*const c_char>,
    _argv: Vec<CString>,
    _envp: Vec<CString>,
}

/// A prepared sandbox: build once, spawn many commands.
#[derive(Debug)]
pub struct Sandbox {
    prep: Prepared,
    spec: SandboxSpec,
    force_no_userns: bool,
    force_no_landlock: bool,
    /// `pause-child=MS` of [`FORCE_ENV`], in milliseconds (0: none).
    pause_child_ms: u32,
    /// `no-netns-helper` or `netns-refused` of [`FORCE_ENV`].
    netns: crate::netns::Mode,
}

/// A running sandboxed command.
#[derive(Debug)]
pub struct SandboxChild {
    pid: i32,
    pidfd: OwnedFd,
    status_r: Option<OwnedFd>,
    command: Option<ExitStatus>,
    exited: Option<ExitStatus>,
    report: SandboxReport,
    net: Option<crate::net::RouterLink>,
    /// The write end of the command's stdin, when piped.
    pub stdin: Option<OwnedFd>,
    /// The read end of the command's stdout, when piped.
    pub stdout: Option<OwnedFd>,
    /// The read end of the command's stderr, when piped.
    pub stderr: Option<OwnedFd>,
    /// What the spawn prepared for the child, freed with this handle rather
    /// than right after the clone: until pid 1 exits it shares this
    /// process's pages copy-on-write, and freeing writes to them, so each
    /// page touched would be copied for nothing.
    _spawned: Spawned,
}

/// The memory a spawn prepared for the child ([`SandboxChild::_spawned`]).
/// Its `Debug` shows nothing of it: the environment can hold a secret given
/// to this one command, which no report or panic message may carry.
struct Spawned {
    _per: PerSpawn,
    _env: Vec<(OsString, OsString)>,
}

impl std::fmt::Debug for Spawned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Spawned { .. }")
    }
}

// SAFETY: `PerSpawn`'s raw pointers point into the vectors it owns and are
// never read again once the child has been spawned; nothing here is shared.
unsafe impl Send for Spawned {}
// SAFETY: as above; `Spawned` is never read at all.
unsafe impl Sync for Spawned {}

fn os(what: &'static str) -> SpawnError {
    SpawnError::Os {
        what,
        error: io::Error::last_os_error(),
    }
}

/// The signals whose disposition is not the default in this process, as
/// the command would inherit them through pid 1: the ignored ones survive
/// `execve` (Rust ignores SIGPIPE), and a handler must not run in the
/// command before it execs. Read from `/proc/self/status` (`SigIgn`,
/// `SigCgt`) once per spawn, which costs three system calls where asking
/// the kernel signal by signal in the child cost sixty-two; the signals a
/// caller commonly ignores or catches are reset in any case, and when the
/// file cannot be read, every signal is.
fn non_default_signals() -> u64 {
    const ALWAYS: [c_int; 12] = [
        libc::SIGHUP,
        libc::SIGINT,
        libc::SIGQUIT,
        libc::SIGPIPE,
        libc::SIGTERM,
        libc::SIGUSR1,
        libc::SIGUSR2,
        libc::SIGCHLD,
        libc::SIGTSTP,
        libc::SIGTTIN,
        libc::SIGTTOU,
        libc::SIGWINCH,
    ];
    let always = ALWAYS.iter().fold(0u64, |m, s| m | 1 << (s - 1));
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return u64::MAX;
    };
    let mask = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
    };
    match (mask("SigIgn:"), mask("SigCgt:")) {
        (Some(ignored), Some(caught)) => always | ignored | caught,
        _ => u64::MAX,
    }
}

fn pipe() -> Result<(OwnedFd, OwnedFd), SpawnError> {
    let mut fds = [0 as c_int; 2];
    // SAFETY: pipe2 fills two descriptors we then own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return Err(os("pipe"));
    }
    // SAFETY: fresh descriptors from pipe2.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

impl Sandbox {
    /// Prepares `spec`: checks paths, plans the new root, compiles seccomp.
    pub fn new(spec: SandboxSpec) -> Result<Self, SpecError> {
        let force = std::env::var(FORCE_ENV).unwrap_or_default();
        let forced = || force.split(',').map(str::trim);
        let has = |name: &str| forced().any(|f| f == name);
        let force_no_userns = has("no-userns");
        let force_no_landlock = has("no-landlock");
        let pause_child_ms = forced()
            .find_map(|f| f.strip_prefix("pause-child="))
            .and_then(|ms| ms.parse().ok())
            .unwrap_or(0);
        let netns = if has("netns-refused") {
            crate::netns::Mode::Refused
        } else if has("no-netns-helper") {
            crate::netns::Mode::Itself
        } else {
            crate::netns::Mode::Helper
        };
        let layout = plan::layout(&spec, ll::masks(ll::kernel_abi()))?;
        // SAFETY: geteuid/getegid cannot fail.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        let nproc = 4096;
        let prep = Prepared {
            layout,
            uid_map: CString::new(format!("{uid} {uid} 1\n")).unwrap_or_default(),
            gid_map: CString::new(format!("{gid} {gid} 1\n")).unwrap_or_default(),
            filters_ns: filters(spec.jit, true)?,
            filters_degraded: OnceLock::new(),
            jit: spec.jit,
            rlimits: vec![
                (libc::RLIMIT_CORE, 0, 0),
                (libc::RLIMIT_NOFILE, 1024, 4096),
                (libc::RLIMIT_NPROC, nproc, nproc),
            ],
            args_tail: args_tail(),
        };
        Ok(Self {
            prep,
            spec,
            force_no_userns,
            force_no_landlock,
            pause_child_ms,
            netns,
        })
    }

    /// Pretends user namespaces and/or landlock are missing, as
    /// [`FORCE_ENV`] does: for testing the degraded paths only.
    pub fn force_missing(&mut self, no_userns: bool, no_landlock: bool) {
        self.force_no_userns |= no_userns;
        self.force_no_landlock |= no_landlock;
    }

    /// Makes pid 1 unshare the network namespace itself (`itself`), or has
    /// its helper report the namespace refused (`refused`), as
    /// [`FORCE_ENV`]'s `no-netns-helper` and `netns-refused` do: for
    /// testing those paths only.
    pub fn force_netns(&mut self, itself: bool, refused: bool) {
        if refused {
            self.netns = crate::netns::Mode::Refused;
        } else if itself {
            self.netns = crate::netns::Mode::Itself;
        }
    }

    /// The spec this sandbox was built from.
    pub fn spec(&self) -> &SandboxSpec {
        &self.spec
    }

    /// The workspace, resolved.
    pub fn workspace(&self) -> &std::path::Path {
        &self.prep.layout.workspace
    }

    /// Runs `argv` in the sandbox. Returns once the program has been
    /// executed; fails if it was not found, or the sandbox could not be built.
    pub fn spawn<S: AsRef<OsStr>>(&self, argv: &[S]) -> Result<SandboxChild, SpawnError> {
        self.spawn_with_env(argv, &[])
    }

    /// [`Self::spawn`], with `extra` added to this one program's
    /// environment (over the spec's own values): what one call is given
    /// and the next is not, such as a secret.
    pub fn spawn_with_env<S: AsRef<OsStr>>(
        &self,
        argv: &[S],
        extra: &[(String, String)],
    ) -> Result<SandboxChild, SpawnError> {
        let program = argv
            .first()
            .ok_or(SpawnError::EmptyCommand)?
            .as_ref()
            .to_owned();
        let landlock = ll::state(self.force_no_landlock);
        if !self.force_no_userns {
            match self.spawn_mode(argv, extra, true, landlock, NO_USERNS) {
                Err(SpawnError::Os {
                    what: "clone",
                    error: source,
                }) if refused(&source) => {}
                other => return other,
            }
        }
        if landlock == LandlockState::Unavailable {
            return Err(SpawnError::NoIsolation {
                program: program.to_string_lossy().into_owned(),
                missing: "user namespaces are refused and landlock is unavailable".to_owned(),
            });
        }
        self.spawn_mode(argv, extra, false, landlock, NO_USERNS)
    }

    /// Spawns with or without namespaces; `without` says in the report why
    /// there are none ([`NO_USERNS`], [`NO_NETNS`]).
    fn spawn_mode<S: AsRef<OsStr>>(
        &self,
        argv: &[S],
        extra: &[(String, String)],
        namespaces: bool,
        landlock: LandlockState,
        without: &'static str,
    ) -> Result<SandboxChild, SpawnError> {
        let program = argv
            .first()
            .ok_or(SpawnError::EmptyCommand)?
            .as_ref()
            .to_owned();
        let mut env = self.spec.environment(std::env::vars_os());
        env.retain(|(k, _)| !extra.iter().any(|(e, _)| k.to_str() == Some(e.as_str())));
        env.extend(extra.iter().map(|(k, v)| (k.into(), v.into())));
        let path_var = env
            .iter()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.clone());
        let candidates = plan::exec_candidates(&program, path_var.as_deref());
        let c_argv = argv
            .iter()
            .map(|a| {
                CString::new(a.as_ref().as_bytes())
                    .map_err(|_| SpawnError::Nul(a.as_ref().to_string_lossy().into_owned()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let c_envp = env
            .iter()
            .map(|(k, v)| {
                let mut kv = OsString::from(k);
                kv.push("=");
                kv.push(v);
                CString::new(kv.as_bytes())
                    .map_err(|_| SpawnError::Nul(kv.to_string_lossy().into_owned()))
            })
            .collect::<Result<Vec<_>, _>>()?;

        let landlock_fd = match landlock {
            LandlockState::Unavailable => None,
            _ => {
                let mut rules = self.prep.layout.host_rules.clone();
                if !namespaces {
                    rules.read.push(ll::HostPath {
                        path: "/proc".into(),
                        is_dir: true,
                    });
                }
                Some(
                    ll::create(&rules, !namespaces).map_err(|e| SpawnError::Setup {
                        step: "create the landlock ruleset".to_owned(),
                        error: io::Error::other(e),
                    })?,
                )
            }
        };

        let filter = if namespaces {
            Arc::clone(&self.prep.filters_ns)
        } else {
            match self.prep.filters_degraded.get() {
                Some(f) => Arc::clone(f),
                None => {
                    let f = filters(self.prep.jit, false).map_err(|e| SpawnError::Setup {
                        step: "compile the seccomp filter".to_owned(),
                        error: io::Error::other(e.to_string()),
                    })?;
                    Arc::clone(self.prep.filters_degraded.get_or_init(|| f))
                }
            }
        };
        let (setup_r, setup_w) = pipe()?;
        let (status_r, status_w) = if namespaces {
            pipe().map(|(r, w)| (Some(r), Some(w)))?
        } else {
            (None, None)
        };
        let mut held: Vec<OwnedFd> = Vec::new();
        let mut ours: [Option<OwnedFd>; 3] = [None, None, None];
        let mut stdio: [Option<c_int>; 3] = [None; 3];
        for (i, mode) in [self.spec.stdin, self.spec.stdout, self.spec.stderr]
            .into_iter()
            .enumerate()
        {
            match mode {
                Stdio::Inherit => {}
                Stdio::Null => {
                    let fd = std::fs::OpenOptions::new()
                        .read(i == 0)
                        .write(i != 0)
                        .open("/dev/null")
                        .map_err(|source| SpawnError::Os {
                            what: "open /dev/null",
                            error: source,
                        })?;
                    let fd = OwnedFd::from(fd);
                    stdio[i] = Some(fd.as_raw_fd());
                    held.push(fd);
                }
                Stdio::Piped => {
                    let (r, w) = pipe()?;
                    let (theirs, mine) = if i == 0 { (r, w) } else { (w, r) };
                    stdio[i] = Some(theirs.as_raw_fd());
                    held.push(theirs);
                    ours[i] = Some(mine);
                }
            }
        }

        let mut argv_ptrs: Vec<*const c_char> = c_argv.iter().map(|c| c.as_ptr()).collect();
        argv_ptrs.push(std::ptr::null());
        let mut envp_ptrs: Vec<*const c_char> = c_envp.iter().map(|c| c.as_ptr()).collect();
        envp_ptrs.push(std::ptr::null());
        let lfd = landlock_fd.as_ref().map(AsRawFd::as_raw_fd);
        let (net_host, net_child, net_port, net_resolver) = match self.spec.network {
            NetworkMode::Router { port, resolver } if namespaces => {
                let (h, c) = crate::net::link_pair().map_err(|source| SpawnError::Os {
                    what: "socketpair for the router",
                    error: source,
                })?;
                (Some(h), Some(c), port, resolver)
            }
            _ => (None, None, 0, false),
        };
        let nfd = net_child.as_ref().map_or(-1, AsRawFd::as_raw_fd);
        let sw = status_w.as_ref().map_or(-1, AsRawFd::as_raw_fd);
        let per = PerSpawn {
            namespaces,
            filter,
            setup_w: setup_w.as_raw_fd(),
            setup_r: setup_r.as_raw_fd(),
            pause_ms: self.pause_child_ms,
            netns: match self.netns {
                // The helper saves time only on a second CPU; on one it
                // would only add its start and exit.
                crate::netns::Mode::Helper if namespaces && cpus_allowed() < 2 => {
                    crate::netns::Mode::Itself
                }
                mode => mode,
            },
            status_w: sw,
            landlock_fd: lfd,
            stdio,
            keep: [setup_w.as_raw_fd(), sw, lfd.unwrap_or(-1), nfd],
            net_fd: nfd,
            net_port,
            net_resolver,
            reset_signals: non_default_signals(),
            candidates,
            argv: argv_ptrs,
            envp: envp_ptrs,
            _argv: c_argv,
            _envp: c_envp,
        };

        let mut flags = libc::CLONE_PIDFD as libc::c_ulong | libc::SIGCHLD as libc::c_ulong;
        if namespaces {
            flags |= (libc::CLONE_NEWUSER
                | libc::CLONE_NEWNS
                | libc::CLONE_NEWPID
                | libc::CLONE_NEWIPC
                | libc::CLONE_NEWUTS) as libc::c_ulong;
            // The network namespace is made by pid 1's helper, in parallel
            // with the root (see `netns::Helper`).
        }
        let mut pidfd: c_int = -1;
        // SAFETY: a fork-style clone (no new stack); the child only runs
        // `child::main`, which never returns and makes raw calls only.
        let pid = unsafe {
            libc::syscall(
                libc::SYS_clone,
                flags,
                0usize,
                &raw mut pidfd,
                0usize,
                0usize,
            )
        };
        if pid < 0 {
            return Err(os("clone"));
        }
        if pid == 0 {
            // SAFETY: we are the freshly cloned child.
            unsafe { child::main(&self.prep, &per) }
        }
        // SAFETY: CLONE_PIDFD stored a descriptor we now own.
        let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd) };
        drop(setup_w);
        drop(status_w);
        drop(held);
        drop(landlock_fd);
        drop(net_child);

        let failure = read_failure(setup_r.as_fd())?;
        let report = self.report(namespaces, landlock, without);
        let [stdin, stdout, stderr] = ours;
        let mut child = SandboxChild {
            pid: pid as i32,
            pidfd,
            status_r,
            command: None,
            exited: None,
            report,
            net: net_host.map(|h| crate::net::RouterLink::new(h, net_resolver)),
            stdin,
            stdout,
            stderr,
            _spawned: Spawned {
                _per: per,
                _env: env,
            },
        };
        if let Some((st, errno)) = failure {
            // The child exits right after writing; reap it so nothing lingers.
            let _ = child.wait();
            let source = io::Error::from_raw_os_error(errno);
            let name = program.to_string_lossy().into_owned();
            return Err(match st {
                step::EXEC if errno == libc::ENOENT || errno == libc::ENOTDIR => {
                    SpawnError::NotFound { program: name }
                }
                step::EXEC => SpawnError::NotExecutable {
                    program: name,
                    error: source,
                },
                step::UID_MAP | step::PRIVATE | step::BASE | step::NETNS
                    if namespaces && refused(&source) =>
                {
                    // User namespaces exist but confer nothing (an LSM
                    // restriction), or the kernel refuses a network
                    // namespace: degrade like a refused clone.
                    let (what, without) = if st == step::NETNS {
                        ("network namespaces are refused", NO_NETNS)
                    } else {
                        ("user namespaces do not work", NO_USERNS)
                    };
                    if landlock == LandlockState::Unavailable {
                        return Err(SpawnError::NoIsolation {
                            program: name,
                            missing: format!("{what} ({source}) and landlock is unavailable"),
                        });
                    }
                    return self.spawn_mode(argv, extra, false, landlock, without);
                }
                _ => SpawnError::Setup {
                    step: self.describe(st),
                    error: source,
                },
            });
        }
        Ok(child)
    }

    fn report(&self, namespaces: bool, landlock: LandlockState, without: &str) -> SandboxReport {
        let mut degraded = Vec::new();
        if !namespaces {
            degraded.push(format!(
                "{without}: running with landlock and seccomp only (no private root, pid, network or /tmp; processes may outlive the command; TCP and UDP refused by seccomp)"
            ));
        }
        match landlock {
            LandlockState::Full { .. } => {}
            LandlockState::Partial { abi, missing } => degraded.push(format!(
                "landlock only partly enforced (kernel ABI {abi}: {missing})"
            )),
            LandlockState::Unavailable => degraded.push(
                "landlock unavailable: the mount namespace is the only file-system wall".to_owned(),
            ),
        }
        let mdwe = !self.prep.jit && mdwe_available();
        if self.prep.jit {
            degraded.push("sandbox.jit allowed: pages may be writable and executable".to_owned());
        }
        SandboxReport {
            namespaces,
            landlock,
            seccomp: true,
            jit: self.prep.jit,
            mdwe,
            degraded,
        }
    }

    fn describe(&self, st: u32) -> String {
        match st {
            step::PDEATHSIG => "arm the parent-death signal".into(),
            step::PARENT_GONE => "check the parent is alive".into(),
            step::UID_MAP => "write the user namespace's uid and gid maps".into(),
            step::PRIVATE => "make the mount namespace private".into(),
            step::BASE => "mount the new root's tmpfs".into(),
            step::PIVOT => "pivot to the new root".into(),
            step::OLD_ROOT => "detach the host's root".into(),
            step::ROOT_RO => "make the new root read-only".into(),
            step::FORK => "fork the command from pid 1".into(),
            step::SETSID => "start a new session".into(),
            step::RLIMIT => "set resource limits".into(),
            step::CAPS => "drop capabilities".into(),
            step::NNP => "set no_new_privs".into(),
            step::LANDLOCK => "enforce the landlock ruleset".into(),
            step::SECCOMP => "install the seccomp filter".into(),
            step::CHDIR => format!(
                "enter the working directory {}",
                self.prep.layout.cwd.to_string_lossy()
            ),
            step::STDIO => "connect standard input and output".into(),
            step::LOOPBACK => "bring up the loopback interface".into(),
            step::NETNS => "create the network namespace".into(),
            step::ROUTER => "open the router's listener inside the namespace".into(),
            n if n >= step::OP_BASE => self
                .prep
                .layout
                .steps
                .get((n - step::OP_BASE) as usize)
                .map_or_else(|| format!("step {n}"), plan::Step::describe),
            n => format!("step {n}"),
        }
    }
}

/// The compiled filter for `(jit, inet)`, shared by every sandbox of this
/// process: a runner builds many, and compiling is the dearest part of `new`.
fn filters(jit: bool, inet: bool) -> Result<Arc<Filters>, SpecError> {
    type Cache = Vec<((bool, bool), Arc<Filters>)>;
    static CACHE: Mutex<Cache> = Mutex::new(Vec::new());
    let mut cache = CACHE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, f)) = cache.iter().find(|(k, _)| *k == (jit, inet)) {
        return Ok(Arc::clone(f));
    }
    let f = Arc::new(seccomp::build(jit, inet)?);
    cache.push(((jit, inet), Arc::clone(&f)));
    Ok(f)
}

fn refused(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EPERM | libc::EACCES | libc::ENOSPC | libc::EINVAL | libc::EUSERS)
    )
}

fn mdwe_available() -> bool {
    // SAFETY: PR_GET_MDWE only reads.
    unsafe { libc::prctl(66, 0, 0, 0, 0) >= 0 }
}

/// How many CPUs this thread may run on (1 when that cannot be read).
fn cpus_allowed() -> usize {
    // SAFETY: sched_getaffinity into a zeroed set of the size we pass.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, size_of::<libc::cpu_set_t>(), &raw mut set) < 0 {
            return 1;
        }
        usize::try_from(libc::CPU_COUNT(&set)).unwrap_or(1)
    }
}

/// Reads the setup pipe to EOF: `None` when the command was executed.
fn read_failure(fd: BorrowedFd<'_>) -> Result<Option<(u32, i32)>, SpawnError> {
    let mut buf = [0u8; 8];
    let mut got = 0;
    loop {
        let rest = buf.get_mut(got..).unwrap_or_default();
        // SAFETY: read into our buffer.
        let n = unsafe { libc::read(fd.as_raw_fd(), rest.as_mut_ptr().cast(), rest.len()) };
        if n < 0 {
            if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(os("read the setup pipe"));
        }
        if n == 0 {
            break;
        }
        got += n as usize;
        if got == buf.len() {
            break;
        }
    }
    if got < buf.len() {
        return Ok(None);
    }
    let (a, b) = buf.split_at(4);
    let st = u32::from_ne_bytes(a.try_into().unwrap_or_default());
    let errno = i32::from_ne_bytes(b.try_into().unwrap_or_default());
    Ok(Some((st, errno)))
}

impl SandboxChild {
    /// The host's end of the router, when the spec asked for one and the
    /// sandbox has its own network namespace (degraded mode has none).
    pub fn take_router(&mut self) -> Option<crate::net::RouterLink> {
        self.net.take()
    }

    /// The host pid of the sandbox's outermost process (pid 1 inside).
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// The layers this process runs under.
    pub fn report(&self) -> &SandboxReport {
        &self.report
    }

    /// Kills the sandbox: every process in it, when it has a pid namespace.
    pub fn kill(&mut self) -> io::Result<()> {
        self.signal(libc::SIGKILL)
    }

    /// Sends `sig` to the sandbox; pid 1 forwards TERM, INT, HUP, QUIT,
    /// USR1 and USR2 to the command.
    pub fn signal(&mut self, sig: i32) -> io::Result<()> {
        if self.exited.is_some() {
            return Ok(());
        }
        // SAFETY: pidfd_send_signal on our pidfd.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                self.pidfd.as_raw_fd(),
                sig,
                0usize,
                0u32,
            )
        };
        if rc < 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::ESRCH) {
                return Err(e);
            }
        }
        Ok(())
    }

    /// Waits until the command has ended and returns its status as soon as
    /// the sandbox's pid 1 reports it, without waiting for pid 1 to finish
    /// tearing the namespaces down (which takes an RCU grace period, often
    /// milliseconds). Whatever the command left behind is being killed as
    /// this returns. Pid 1 still has to be reaped: call [`Self::wait`] later,
    /// or exit (as `chock sandbox` does), and init reaps it.
    pub fn wait_command(&mut self) -> io::Result<ExitStatus> {
        if let Some(st) = self.command {
            return Ok(st);
        }
        let Some(fd) = self.status_r.as_ref() else {
            return self.wait();
        };
        let mut buf = [0u8; 4];
        let n = loop {
            // SAFETY: read into our buffer.
            let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n >= 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                break n;
            }
        };
        if n != 4 {
            // Pid 1 died without a report (killed): its own status it is.
            self.status_r = None;
            return self.wait();
        }
        let st = decode(i32::from_ne_bytes(buf));
        self.command = Some(st);
        self.status_r = None;
        Ok(st)
    }

    /// Waits for the command to end and the sandbox to be gone.
    pub fn wait(&mut self) -> io::Result<ExitStatus> {
        loop {
            if let Some(st) = self.wait_flags(0)? {
                return Ok(st);
            }
        }
    }

    /// The exit status if the command has ended, without blocking.
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        self.wait_flags(libc::WNOHANG)
    }

    fn wait_flags(&mut self, extra: c_int) -> io::Result<Option<ExitStatus>> {
        if let Some(st) = self.exited {
            return Ok(Some(st));
        }
        // SAFETY: waitid on our pidfd with a zeroed siginfo.
        let info = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let rc = libc::waitid(
                libc::P_PIDFD,
                self.pidfd.as_raw_fd() as libc::id_t,
                &raw mut info,
                libc::WEXITED | extra,
            );
            if rc < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    return Ok(None);
                }
                return Err(e);
            }
            info
        };
        // SAFETY: si_pid/si_status are valid for a SIGCHLD siginfo.
        let (pid, code, status) = unsafe { (info.si_pid(), info.si_code, info.si_status()) };
        if pid == 0 {
            return Ok(None);
        }
        let own = if code == libc::CLD_EXITED {
            ExitStatus::Code(status)
        } else {
            ExitStatus::Signal(status)
        };
        let st = match (self.command, self.status_r.take()) {
            (Some(st), _) => st,
            (None, Some(fd)) => read_status(&fd).unwrap_or(own),
            (None, None) => own,
        };
        self.exited = Some(st);
        Ok(Some(st))
    }
}

impl AsFd for SandboxChild {
    /// The pidfd: readable once the sandbox has exited. Await it (tokio's
    /// `AsyncFd`), then call [`SandboxChild::try_wait`].
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.pidfd.as_fd()
    }
}

impl AsRawFd for SandboxChild {
    fn as_raw_fd(&self) -> RawFd {
        self.pidfd.as_raw_fd()
    }
}

/// Pid 1's report of the command's wait status, if it wrote one.
fn read_status(fd: &OwnedFd) -> Option<ExitStatus> {
    let mut buf = [0u8; 4];
    // SAFETY: read into our buffer; pid 1 has exited so this cannot block
    // for long (the write end is closed).
    let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
    if n != 4 {
        return None;
    }
    Some(decode(i32::from_ne_bytes(buf)))
}

/// A raw wait status as pid 1 reported it.
fn decode(raw: i32) -> ExitStatus {
    if libc::WIFSIGNALED(raw) {
        ExitStatus::Signal(libc::WTERMSIG(raw))
    } else {
        ExitStatus::Code(libc::WEXITSTATUS(raw))
    }
}
