//! A long-lived server the session runs in its sandbox (an MCP server, a
//! language server): the same workspace, git directory and network rules
//! a command gets, its stdin and stdout as the pipes the client speaks
//! over, and the end of its stderr kept for the notice when it fails.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use chock_sandbox::{Sandbox, SandboxChild, SpawnError, Stdio};
use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;

use crate::net::RouterTask;
use crate::run_command::Commands;
use crate::workspace::SANDBOX_ROOT;

/// How much of a server's stderr is kept, for the notice when it fails.
const STDERR_TAIL: usize = 2048;

/// A server's process in the sandbox; dropping it kills the process.
#[derive(Debug)]
pub(crate) struct Process {
    child: SandboxChild,
    _router: Option<RouterTask>,
    stderr: Arc<Mutex<Vec<u8>>>,
    drain: tokio::task::JoinHandle<()>,
}

impl Drop for Process {
    fn drop(&mut self) {
        self.drain.abort();
        // Killing pid 1 takes the server's whole pid namespace with it.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Process {
    /// Starts `argv` in the session's sandbox with `env` beyond the
    /// sandbox's own, in `cwd` (relative to the workspace) when given, and
    /// with a router when `routed`: the process, and the pipes from its
    /// stdout and to its stdin.
    pub(crate) fn spawn(
        commands: &Commands,
        argv: &[String],
        env: Vec<(String, String)>,
        cwd: Option<&str>,
        routed: bool,
    ) -> Result<(Process, pipe::Receiver, pipe::Sender), String> {
        let mut spec = commands.spec(routed)?;
        spec.stdin = Stdio::Piped;
        spec.env.extend(env);
        if let Some(cwd) = cwd {
            spec.cwd = Some(PathBuf::from(SANDBOX_ROOT).join(cwd));
        }
        let sandbox =
            Sandbox::new(spec).map_err(|err| format!("the sandbox cannot be built: {err}"))?;
        let mut child = sandbox.spawn(argv).map_err(|err| match err {
            SpawnError::NotFound { .. } => err.to_string(),
            other => format!("the command did not start: {other}"),
        })?;
        let router = match (commands.net(), child.take_router()) {
            (Some(net), Some(link)) => Some(
                net.start(&Arc::new(link), false)
                    .map_err(|err| format!("its network could not be started: {err}"))?,
            ),
            _ => None,
        };
        let pipes = (child.stdout.take(), child.stdin.take(), child.stderr.take());
        let (Some(stdout), Some(stdin), stderr) = pipes else {
            return Err("its pipes were not made".to_owned());
        };
        let io = |err: std::io::Error| format!("its pipes cannot be used: {err}");
        let from = pipe::Receiver::from_owned_fd(stdout).map_err(io)?;
        let to = pipe::Sender::from_owned_fd(stdin).map_err(io)?;
        let tail = Arc::new(Mutex::new(Vec::new()));
        let drain = tokio::spawn(drain_stderr(
            stderr.and_then(|fd| pipe::Receiver::from_owned_fd(fd).ok()),
            Arc::clone(&tail),
        ));
        let process = Process {
            child,
            _router: router,
            stderr: tail,
            drain,
        };
        Ok((process, from, to))
    }

    /// How the process ended, when it has, and the end of its stderr.
    pub(crate) fn said(&mut self) -> String {
        let status = match self.child.try_wait() {
            Ok(Some(status)) => format!("; its process ended ({status})"),
            _ => String::new(),
        };
        let tail = self
            .stderr
            .lock()
            .map(|held| String::from_utf8_lossy(&held).trim().to_owned())
            .unwrap_or_default();
        if tail.is_empty() {
            status
        } else {
            format!("{status}; its stderr ended with: {tail}")
        }
    }
}

/// Keeps the last [`STDERR_TAIL`] bytes a server writes on stderr.
async fn drain_stderr(stream: Option<pipe::Receiver>, tail: Arc<Mutex<Vec<u8>>>) {
    let Some(mut stream) = stream else { return };
    let mut buf = vec![0u8; 16 * 1024];
    while let Ok(n) = stream.read(&mut buf).await {
        if n == 0 {
            break;
        }
        if let Ok(mut held) = tail.lock() {
            held.extend_from_slice(&buf[..n]);
            let over = held.len().saturating_sub(STDERR_TAIL);
            held.drain(..over);
        }
    }
}
