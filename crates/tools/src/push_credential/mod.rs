//! The credential of an approved `git push`, handed to that one call.
//!
//! The person's credential stays on the host. For a permitted foreground
//! `git push` to an http(s) remote, [`PushSocket::open`] makes a directory
//! of its own (0700) beside the session's log with a unix socket in it
//! (0600); run_command binds that directory and the running `chock` binary
//! read-only into that call's sandbox and points git's `credential.helper`
//! at `chock git-credential` (the [`helper`] side), after resetting every
//! helper the repository's config names. When git needs a password it asks
//! the helper, the helper asks the socket, and [`PushSocket::serve`] answers
//! by running the person's own `git credential fill` on the host, in the
//! workspace, with prompts off, for exactly the protocol, host and path of
//! the remote the push names. A request for any other protocol or host gets
//! nothing. `store` and `erase` go back as `git credential approve` and
//! `reject`, the same as a push in the person's own terminal would do.
//!
//! Each run_command is its own sandbox, so the directory exists only inside
//! the one call's mount namespace; when the call ends the socket is dropped
//! and the directory removed. The credential itself travels only over the
//! socket to git's helper and from there into git: it is in no variable, no
//! file of the sandbox, no log event. The protocol on the socket is one
//! request per connection: the operation on a line, then the key=value lines
//! git gave the helper; the answer is the key=value lines to hand back.
//!
//! A push to an ssh remote has no credential to hand over: the key stays in
//! the person's ssh agent. It gets instead a route out (`connect`, ssh's
//! `ProxyCommand` through the router), a proxy of the agent that lists and
//! signs only (`agent`), and ssh's options read on the host (`ssh`), held
//! for the call by [`SshCall`].

pub mod agent;
pub mod connect;
pub mod helper;
pub mod ssh;
pub mod ssh_call;
pub mod target;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{UnixListener, UnixStream};

pub use ssh_call::SshCall;
pub use target::{HttpRemote, PushRemote, push_remote, push_remote_with};

/// The hidden `chock` subcommand git runs as its credential helper.
pub const HELPER_SUBCOMMAND: &str = "git-credential";
/// The socket's file name inside the per-call directory.
const SOCKET_NAME: &str = "s";
/// Largest request or answer accepted on the socket.
pub const MAX_MESSAGE: u64 = 64 * 1024;
/// How long the host's `git credential` may take (a helper that prompts
/// somewhere nobody looks must not hold the push forever).
const HOST_GIT_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one helper connection may take to send its request.
const READ_TIMEOUT: Duration = Duration::from_secs(10);
/// The keys of `git credential fill`'s answer passed back to git.
const ANSWER_KEYS: &[&str] = &[
    "username",
    "password",
    "password_expiry_utc",
    "oauth_refresh_token",
];

/// One push's credential socket: its directory, its listener, and the
/// remote it answers for. Dropping it closes the socket and removes the
/// directory.
#[derive(Debug)]
pub struct PushSocket {
    dir: PathBuf,
    listener: UnixListener,
    remote: HttpRemote,
    workspace: PathBuf,
}

impl PushSocket {
    /// Makes `parent/<name>/` (0700) with the socket in it, answering for
    /// `remote` by asking git in `workspace`.
    pub fn open(
        parent: &Path,
        name: &str,
        remote: HttpRemote,
        workspace: &Path,
    ) -> std::io::Result<Self> {
        let dir = make_call_dir(parent, name)?;
        let listener = match chock_control::owned_socket::bind(&dir.join(SOCKET_NAME)) {
            Ok(listener) => listener,
            Err(err) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(err);
            }
        };
        Ok(Self {
            dir,
            listener,
            remote,
            workspace: workspace.to_owned(),
        })
    }

    /// The per-call directory (bound read-only into the call's sandbox).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The socket's path.
    pub fn socket(&self) -> PathBuf {
        self.dir.join(SOCKET_NAME)
    }

    /// The `GIT_CONFIG_*` entries that point git at the helper: the
    /// repository's own helpers reset, then `exe git-credential --socket`.
    pub fn git_config(&self, exe: &Path) -> Vec<(&'static str, String)> {
        let helper = format!(
            "!{} {HELPER_SUBCOMMAND} --socket {}",
            shell_quote(&exe.to_string_lossy()),
            shell_quote(&self.socket().to_string_lossy())
        );
        vec![
            ("credential.helper", String::new()),
            ("credential.helper", helper),
        ]
    }

    /// Answers helper connections until dropped (the caller races this
    /// against the command's end). A connection from another uid, or one
    /// that sends nothing readable, is closed unanswered.
    pub async fn serve(&self) -> std::convert::Infallible {
        let own = chock_control::own_uid();
        loop {
            let mut stream = match self.listener.accept().await {
                Ok((stream, _)) => stream,
                Err(err) => {
                    tracing::warn!(%err, "push credential socket: accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            if let Err(err) = chock_control::check_peer(&stream, own) {
                tracing::warn!(%err, "push credential socket: peer refused");
                continue;
            }
            let Ok(Ok(request)) =
                tokio::time::timeout(READ_TIMEOUT, read_message(&mut stream)).await
            else {
                continue;
            };
            let answer = self.answer(&request).await;
            let _ = stream.write_all(answer.as_bytes()).await;
            let _ = stream.shutdown().await;
        }
    }

    /// The answer to one request (`op` line, then key=value lines).
    pub async fn answer(&self, request: &str) -> String {
        let (op, body) = request.split_once('\n').unwrap_or((request, ""));
        let attrs = parse_attrs(body);
        if !self.matches(&attrs) {
            return String::new();
        }
        match op.trim() {
            "get" => {
                let input = self.fill_input(
                    attrs
                        .iter()
                        .find(|(k, _)| k == "username")
                        .map(|(_, v)| v.as_str()),
                );
                match host_git(&self.workspace, "fill", &input).await {
                    Some(out) => parse_attrs(&out)
                        .into_iter()
                        .filter(|(key, _)| ANSWER_KEYS.contains(&key.as_str()))
                        .map(|(key, value)| format!("{key}={value}\n"))
                        .collect(),
                    None => String::new(),
                }
            }
            op @ ("store" | "erase") => {
                let mut input = self.fill_input(None);
                for (key, value) in &attrs {
                    if ANSWER_KEYS.contains(&key.as_str()) {
                        input.push_str(&format!("{key}={value}\n"));
                    }
                }
                let verb = if op == "store" { "approve" } else { "reject" };
                let _ = host_git(&self.workspace, verb, &input).await;
                String::new()
            }
            _ => String::new(),
        }
    }

    /// Whether git's request names the remote this socket answers for.
    fn matches(&self, attrs: &[(String, String)]) -> bool {
        let get = |key: &str| {
            attrs
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
        };
        get("protocol") == Some(self.remote.protocol.as_str())
            && get("host").map(str::to_ascii_lowercase).as_deref()
                == Some(self.remote.host.as_str())
            && get("path").is_none_or(|path| path.trim_end_matches('/') == self.remote.path)
    }

    /// What the host's `git credential` is given: the remote's own parts,
    /// never the request's (a username git adds is kept).
    fn fill_input(&self, username: Option<&str>) -> String {
        let remote = &self.remote;
        let mut input = format!("protocol={}\nhost={}\n", remote.protocol, remote.host);
        if !remote.path.is_empty() {
            input.push_str(&format!("path={}\n", remote.path));
        }
        if let Some(user) = remote.username.as_deref().or(username) {
            input.push_str(&format!("username={user}\n"));
        }
        input
    }
}

impl Drop for PushSocket {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Makes the per-call directory `parent/<name>/` (0700), replacing one a
/// crashed session left.
pub(crate) fn make_call_dir(parent: &Path, name: &str) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt as _;
    let dir = parent.join(name);
    if let Err(err) = std::fs::remove_dir_all(&dir)
        && err.kind() != std::io::ErrorKind::NotFound
    {
        return Err(err);
    }
    std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
    Ok(dir)
}

/// Runs `git credential <verb>` on the host in `dir` with `input`, prompts
/// off (`GIT_TERMINAL_PROMPT=0`, an empty `GIT_ASKPASS` so no askpass
/// program is started either); its stdout when it succeeds.
async fn host_git(dir: &Path, verb: &str, input: &str) -> Option<String> {
    let mut child = tokio::process::Command::new("git")
        .args(["credential", verb])
        .current_dir(dir)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_ASKPASS", "")
        .env_remove("SSH_ASKPASS")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .ok()?;
    let mut stdin = child.stdin.take()?;
    let input = input.to_owned();
    let run = async move {
        stdin.write_all(input.as_bytes()).await.ok()?;
        stdin.write_all(b"\n").await.ok()?;
        drop(stdin);
        child.wait_with_output().await.ok()
    };
    let out = tokio::time::timeout(HOST_GIT_TIMEOUT, run).await.ok()??;
    if !out.status.success() {
        return None;
    }
    String::from_utf8(out.stdout).ok()
}

async fn read_message(stream: &mut UnixStream) -> std::io::Result<String> {
    let mut bytes = Vec::new();
    (&mut *stream)
        .take(MAX_MESSAGE)
        .read_to_end(&mut bytes)
        .await?;
    String::from_utf8(bytes)
        .map_err(|err| std::io::Error::new(std::io::ErrorKind::InvalidData, err))
}

/// `key=value` lines, up to a blank line; anything else is skipped.
pub fn parse_attrs(text: &str) -> Vec<(String, String)> {
    text.lines()
        .take_while(|line| !line.is_empty())
        .filter_map(|line| line.split_once('='))
        .map(|(key, value)| (key.to_owned(), value.to_owned()))
        .collect()
}

/// `text` as one word for `sh`.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests;
