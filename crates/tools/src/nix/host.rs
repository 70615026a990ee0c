//! Nix on the person's machine: `nix` and `nix-store` run outside the
//! sandbox, as the person, found on chock's own PATH (the package puts its
//! Nix there), each bounded in time and in what it prints.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt as _};

/// What a Nix command may print on stdout before it is cut off.
const STDOUT_BOUND: usize = 16 * 1024 * 1024;
/// How much of stderr (the build log) is kept: its tail.
const STDERR_TAIL: usize = 8 * 1024;

/// The features every `nix` call turns on: the command line itself, and
/// flakes (a project's `flake.nix`).
const FEATURES: &str = "nix-command flakes";

/// One Nix command, built up and then run.
#[derive(Debug)]
pub struct NixCommand {
    program: &'static str,
    args: Vec<String>,
    cwd: Option<PathBuf>,
    timeout: Duration,
}

/// Why a Nix command gave nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostError {
    #[error(
        "{program} was not found on chock's PATH: install Nix (on Debian: apt-get install nix-bin; on NixOS it is there) and start again"
    )]
    NotFound { program: &'static str },
    #[error("{program} could not be started: {detail}")]
    Start {
        program: &'static str,
        detail: String,
    },
    #[error("{program} ran past its bound of {}s and was stopped", timeout.as_secs())]
    Timeout {
        program: &'static str,
        timeout: Duration,
    },
}

/// A finished command: its status, stdout, and the tail of stderr.
#[derive(Debug)]
pub struct Ran {
    pub status: std::process::ExitStatus,
    pub stdout: String,
    pub stdout_cut: bool,
    pub stderr_tail: String,
}

impl Ran {
    /// Stdout where the command succeeded; otherwise the tail of what it
    /// said, for the person or the model.
    pub fn success(self) -> Result<String, String> {
        if self.status.success() && !self.stdout_cut {
            return Ok(self.stdout);
        }
        let why = if self.stdout_cut {
            format!("it printed more than {STDOUT_BOUND} bytes")
        } else {
            match self.status.code() {
                Some(code) => format!("it exited {code}"),
                None => "a signal ended it".to_owned(),
            }
        };
        let tail = self.stderr_tail.trim();
        Err(if tail.is_empty() {
            why
        } else {
            format!("{why}; the end of its log:\n{tail}")
        })
    }
}

impl NixCommand {
    /// `nix <args>`, with the features it needs.
    pub fn nix(args: &[String]) -> NixCommand {
        let mut all = vec![
            "--extra-experimental-features".to_owned(),
            FEATURES.to_owned(),
        ];
        all.extend(args.iter().cloned());
        NixCommand {
            program: "nix",
            args: all,
            cwd: None,
            timeout: Duration::from_secs(60),
        }
    }

    /// `nix-store <args>`.
    pub fn store(args: &[String]) -> NixCommand {
        NixCommand {
            program: "nix-store",
            args: args.to_vec(),
            cwd: None,
            timeout: Duration::from_secs(60),
        }
    }

    #[must_use]
    pub fn current_dir(mut self, dir: &Path) -> Self {
        self.cwd = Some(dir.to_owned());
        self
    }

    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Runs it to its end, or stops it at its bound.
    pub async fn run(self) -> Result<Ran, HostError> {
        let mut command = tokio::process::Command::new(self.program);
        command
            .args(&self.args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some(cwd) = &self.cwd {
            command.current_dir(cwd);
        }
        let program = self.program;
        let mut child = command.spawn().map_err(|err| match err.kind() {
            std::io::ErrorKind::NotFound => HostError::NotFound { program },
            _ => HostError::Start {
                program,
                detail: err.to_string(),
            },
        })?;
        let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
            return Err(HostError::Start {
                program,
                detail: "its output could not be read".to_owned(),
            });
        };
        let finished = async {
            let (out, err) = tokio::join!(
                read_head(stdout, STDOUT_BOUND),
                read_tail(stderr, STDERR_TAIL)
            );
            let status = child.wait().await;
            (out, err, status)
        };
        match tokio::time::timeout(self.timeout, finished).await {
            Ok(((stdout, stdout_cut), stderr_tail, Ok(status))) => Ok(Ran {
                status,
                stdout,
                stdout_cut,
                stderr_tail,
            }),
            Ok((_, _, Err(err))) => Err(HostError::Start {
                program,
                detail: err.to_string(),
            }),
            Err(_) => Err(HostError::Timeout {
                program,
                timeout: self.timeout,
            }),
        }
    }
}

/// The first `bound` bytes, and whether there were more (the rest is read
/// and dropped, so the command is never stuck on a full pipe).
async fn read_head(mut from: impl AsyncRead + Unpin, bound: usize) -> (String, bool) {
    let mut kept = Vec::new();
    let mut cut = false;
    let mut buf = [0u8; 8192];
    while let Ok(n) = from.read(&mut buf).await {
        if n == 0 {
            break;
        }
        let room = bound.saturating_sub(kept.len());
        kept.extend_from_slice(&buf[..n.min(room)]);
        cut |= n > room;
    }
    (String::from_utf8_lossy(&kept).into_owned(), cut)
}

/// The last `bound` bytes.
async fn read_tail(mut from: impl AsyncRead + Unpin, bound: usize) -> String {
    let mut kept: Vec<u8> = Vec::new();
    let mut buf = [0u8; 8192];
    while let Ok(n) = from.read(&mut buf).await {
        if n == 0 {
            break;
        }
        kept.extend_from_slice(&buf[..n]);
        if kept.len() > 2 * bound {
            kept.drain(..kept.len() - bound);
        }
    }
    if kept.len() > bound {
        kept.drain(..kept.len() - bound);
    }
    String::from_utf8_lossy(&kept).into_owned()
}
