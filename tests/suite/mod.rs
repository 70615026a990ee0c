//! Shared helpers for the end-to-end suite.

mod agentic;
mod approvals;
mod binds;
mod cli;
mod completions;
mod daemon;
mod daemon_control;
mod daemon_run;
mod daemon_workspace;
mod detach;
mod devices;
mod gateway;
mod git_dispatcher;
mod git_metadata;
mod git_push;
mod git_push_ssh;
mod git_shim;
mod guidance;
mod kit;
mod log;
mod lsp_session;
mod mcp_session;
mod mcp_session_faults;
mod network;
mod new_user;
mod nix_session;
mod nix_zon;
mod plan;
mod plugins;
mod policy;
mod probe_findings;
mod providers_live;
mod run;
mod run_command;
mod run_network;
mod run_network_session;
mod sandbox;
mod secrets;
mod serve;
mod serve_browser;
mod session_logs;
mod sessions;
mod skills;
mod soak;
mod stop_check;
mod stop_resume;
mod stop_session;
mod style_session;
mod subagents;
mod sync_cli;
mod terminal;
mod terminal_commands;
mod usage;
mod web_tools;
mod workspace;

use std::path::PathBuf;
use std::process::Command;

/// The `chock` binary cargo built for this test run.
pub(crate) fn chock_bin() -> PathBuf {
    // Cargo builds every binary of the workspace before running an
    // integration test of another package only when asked; nextest and
    // `cargo test --workspace` both do, and the binary sits beside the test.
    let mut dir = std::env::current_exe().expect("test binary path");
    dir.pop();
    if dir.ends_with("deps") {
        dir.pop();
    }
    dir.join("chock")
}

/// A `chock` command isolated from the person's own state and config.
pub(crate) fn chock(state: &std::path::Path) -> Command {
    let mut cmd = Command::new(chock_bin());
    cmd.env("CHOCK_STATE_DIR", state)
        .env("XDG_CONFIG_HOME", state.join("config"))
        .env_remove("CHOCK_DAEMON")
        .env_remove("CHOCK_LOG");
    for var in AGENT_VARS {
        cmd.env_remove(var);
    }
    cmd
}

/// Every variable that marks an agent's environment; removed so a test
/// decides who it is, whatever runs the suite.
pub(crate) const AGENT_VARS: [&str; 11] = [
    "CHOCK_SESSION",
    "CHOCK_AGENT",
    "CLAUDECODE",
    "CODEX_SANDBOX",
    "CODEX_SANDBOX_NETWORK_DISABLED",
    "CODEX_THREAD_ID",
    "CODEX_CI",
    "GEMINI_CLI",
    "CURSOR_AGENT",
    "GOOSE_TERMINAL",
    "OPENCODE",
];

/// A temporary machine: a home, a state dir, and room for repositories.
pub(crate) struct Machine {
    pub(crate) root: tempfile::TempDir,
}

impl Machine {
    pub(crate) fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("home")).unwrap();
        Machine { root }
    }

    pub(crate) fn home(&self) -> PathBuf {
        self.root.path().join("home")
    }

    pub(crate) fn state(&self) -> PathBuf {
        self.root.path().join("state")
    }

    /// `chock` as a person on this machine, in `dir`.
    pub(crate) fn chock(&self, dir: &std::path::Path) -> Command {
        let mut cmd = chock(&self.state());
        cmd.env("HOME", self.home()).current_dir(dir);
        cmd
    }

    /// A machine with one repository, `shop`, and that repository.
    pub(crate) fn with_shop() -> (Self, PathBuf) {
        let m = Machine::new();
        let repo = m.repo("shop");
        (m, repo)
    }

    /// `chock <args>` as a person in `dir`, run to its end.
    pub(crate) fn run(&self, dir: &std::path::Path, args: &[&str]) -> std::process::Output {
        self.chock(dir).args(args).output().unwrap()
    }

    /// Asserts that `chock <args>` as a person in `dir` succeeds.
    pub(crate) fn ok(&self, dir: &std::path::Path, args: &[&str]) {
        let status = self.chock(dir).args(args).status().unwrap();
        assert!(status.success(), "chock {args:?}: {status}");
    }

    /// The decision log's lines written by `source`.
    pub(crate) fn decisions_from(&self, source: &str) -> Vec<serde_json::Value> {
        self.decisions()
            .into_iter()
            .filter(|l| l["source"] == source)
            .collect()
    }

    /// A repository with one commit.
    pub(crate) fn repo(&self, name: &str) -> PathBuf {
        chock_testkit::git_repo(&self.root.path().join(name))
    }

    /// The decision log's lines, parsed.
    pub(crate) fn decisions(&self) -> Vec<serde_json::Value> {
        std::fs::read_to_string(self.state().join("decisions.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

/// Run git in `dir` with no global or system config.
pub(crate) fn git(dir: &std::path::Path, args: &[&str]) -> String {
    let out = git_cmd(dir).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

pub(crate) fn git_cmd(dir: &std::path::Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1");
    for var in AGENT_VARS {
        cmd.env_remove(var);
    }
    cmd
}

/// This package's directory (helper scripts live beside the suite).
pub(crate) fn here() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// PATH with the built `chock` first, for hooks that run `chock` by name.
pub(crate) fn path_with_chock() -> std::ffi::OsString {
    let dir = chock_bin().parent().unwrap().to_owned();
    let mut paths = vec![dir];
    paths.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(paths).unwrap()
}

/// The suite's tests that `filter` names run again as an unprivileged
/// user, with `chock` beside them and a home of their own: how many passed
/// and what they printed, or `None` (said why) where nothing can rerun.
pub(crate) fn rerun_unprivileged(filter: &[&str]) -> Option<(usize, String)> {
    let rerun = match chock_testkit::Rerun::prepare() {
        Ok(rerun) => rerun,
        Err(why) => {
            println!("{why}");
            return None;
        }
    };
    // The test binary finds chock beside itself.
    let bin = chock_bin();
    for name in ["chock", "chock-full"] {
        rerun.copy(&bin.with_file_name(name), name, 0o755);
    }
    let home = rerun.home();
    let (passed, shown) = rerun.run(&[("HOME", home.display().to_string())], filter);
    println!("{shown}");
    Some((passed, shown))
}

/// `command` run under a pseudo-terminal on which `answer` is typed once
/// `prompt` shows; the screen is the output's stdout.
pub(crate) fn on_a_terminal(command: &Command, prompt: &str, answer: &str) -> std::process::Output {
    let mut pty = Command::new("python3");
    pty.arg(here().join("pty/answer.py"))
        .args([prompt, answer, "--"])
        .arg(command.get_program())
        .args(command.get_args());
    for (name, value) in command.get_envs() {
        match value {
            Some(value) => pty.env(name, value),
            None => pty.env_remove(name),
        };
    }
    if let Some(dir) = command.get_current_dir() {
        pty.current_dir(dir);
    }
    pty.output().unwrap()
}

/// Asserts that `chock <verb> --port 7000` is refused for want of `--host`
/// and opens no `socket` in the state dir.
pub(crate) fn assert_port_without_host_refused(verb: &str, socket: &str) {
    let state = tempfile::tempdir().unwrap();
    let out = chock(state.path())
        .args([verb, "--port", "7000"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with("chock: --port was given without --host"),
        "{err}"
    );
    assert!(
        !state.path().join(socket).exists(),
        "no listener was opened"
    );
}

/// A listening socket and a readiness socket, as systemd hands them to a
/// socket-activated service.
pub(crate) struct Activation {
    _dir: tempfile::TempDir,
    /// Where the passed listening socket is bound.
    pub(crate) path: PathBuf,
    listener: std::os::unix::net::UnixListener,
    notify_path: PathBuf,
    notify: std::os::unix::net::UnixDatagram,
}

impl Activation {
    pub(crate) fn new() -> Activation {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("activated.sock");
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let notify_path = dir.path().join("notify.sock");
        let notify = std::os::unix::net::UnixDatagram::bind(&notify_path).unwrap();
        notify
            .set_read_timeout(Some(std::time::Duration::from_secs(20)))
            .unwrap();
        Activation {
            _dir: dir,
            path,
            listener,
            notify_path,
            notify,
        }
    }

    /// `chock <verb>` started as systemd starts it, the listening socket at
    /// descriptor 3; `env` is extra `NAME=value` words for the shell's export.
    pub(crate) fn start(&self, state: &std::path::Path, verb: &str, env: &str) -> kit::Running {
        use std::os::fd::AsRawFd as _;
        use std::os::unix::process::CommandExt as _;
        let fd = self.listener.as_raw_fd();
        let mut command = as_systemd_starts(state, verb, env);
        command.env("NOTIFY_SOCKET", &self.notify_path);
        // SAFETY: between fork and exec only dup2 or fcntl runs, both
        // async-signal-safe; it puts the listening socket at descriptor 3, as
        // systemd does, without the close-on-exec flag.
        unsafe {
            command.pre_exec(move || {
                // dup2 onto itself keeps close-on-exec, so clear it by hand.
                let failed = if fd == 3 {
                    libc::fcntl(3, libc::F_SETFD, 0) == -1
                } else {
                    libc::dup2(fd, 3) == -1
                };
                if failed {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        kit::Running::spawn(command)
    }

    /// Asserts that `running`, activated in `state`, made no `socket` of
    /// its own, stops cleanly on SIGTERM and leaves the passed socket to
    /// systemd.
    pub(crate) fn assert_stops_leaving_the_socket(
        &self,
        mut running: kit::Running,
        state: &std::path::Path,
        socket: &str,
    ) {
        assert!(
            !state.join(socket).exists(),
            "no socket of its own under activation"
        );
        assert!(running.terminate().success());
        assert!(
            self.path.exists(),
            "systemd's socket is systemd's to remove"
        );
    }

    /// Asserts that the service said `READY=1` on the readiness socket.
    pub(crate) fn assert_ready(&self) {
        let mut buf = [0u8; 256];
        let n = self.notify.recv(&mut buf).unwrap();
        assert_eq!(String::from_utf8_lossy(&buf[..n]).trim_end(), "READY=1");
    }
}

/// Asserts that `chock <verb>`, activated with descriptor 3 closed, says
/// `why` and to check the .socket unit, announces nothing, and falls back to
/// no `socket` of its own; `env` as for [`activated_with_fd_3_closed`].
pub(crate) fn assert_closed_fd_3_refused(verb: &str, env: &str, why: &str, socket: &str) {
    let state = tempfile::tempdir().unwrap();
    let out = activated_with_fd_3_closed(state.path(), verb, env);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(why), "{stderr}");
    assert!(stderr.contains("check the .socket unit"), "{stderr}");
    assert!(out.stdout.is_empty(), "nothing announced");
    assert!(
        !state.path().join(socket).exists(),
        "{verb} falls back to no socket of its own"
    );
}

/// `chock <verb>` started as systemd starts it, with `LISTEN_PID` naming it
/// and `LISTEN_FDS=1`, but with descriptor 3 closed; `env` is extra
/// `NAME=value` words for the shell's export.
pub(crate) fn activated_with_fd_3_closed(
    state: &std::path::Path,
    verb: &str,
    env: &str,
) -> std::process::Output {
    use std::os::unix::process::CommandExt as _;
    let mut command = as_systemd_starts(state, verb, env);
    command.env_remove("NOTIFY_SOCKET");
    // SAFETY: between fork and exec only close runs, which is
    // async-signal-safe; descriptor 3, which LISTEN_FDS promises, is closed.
    unsafe {
        command.pre_exec(|| {
            libc::close(3);
            Ok(())
        });
    }
    command.output().unwrap()
}

/// `chock <verb>` as systemd starts it, with `LISTEN_PID` naming it and
/// `LISTEN_FDS=1`; `env` is extra `NAME=value` words for the shell's export.
fn as_systemd_starts(state: &std::path::Path, verb: &str, env: &str) -> Command {
    // LISTEN_PID must be the server's own pid: the shell exports its pid
    // and then becomes the server with exec, keeping it.
    let mut command = Command::new("/bin/sh");
    command
        .arg("-c")
        .arg(format!(
            r#"export LISTEN_PID=$$ LISTEN_FDS=1 {env}; exec "$0" {verb}"#
        ))
        .arg(chock_bin())
        .env("CHOCK_STATE_DIR", state)
        .env_remove("CHOCK_DAEMON");
    command
}
