//! What run_command does differently for a permitted foreground `git push`:
//! it gets a sandbox of its own, built from the session's, with what that
//! one call needs bound in and pointed at:
//!
//! - to an http(s) remote, the per-call credential socket's directory and
//!   the running `chock` binary, with git's credential helper pointed at
//!   them (`crate::push_credential`);
//! - to an ssh remote, the per-call directory with the proxy of the
//!   person's ssh agent, the `chock` binary as ssh's `ProxyCommand` through
//!   the router, and the person's known_hosts, with `GIT_SSH_COMMAND` naming
//!   them (`crate::push_credential::ssh`);
//! - to anything else (a local path) it runs as any command does.
//!
//! A background push gets none of this: a job outlives the call that was
//! permitted, and the sockets are for that call only.

use std::path::{Path, PathBuf};

use chock_sandbox::Sandbox;

use crate::command_git::CommandGit;
use crate::git_shim::{self, Carry, GitClass};
use crate::push_credential::ssh::{self, SshTarget};
use crate::push_credential::{PushRemote, PushSocket, SshCall, push_remote, push_remote_with};

/// A push's own sandbox and the sockets it asks.
#[derive(Debug)]
pub(super) struct PushCall {
    pub sandbox: Sandbox,
    pub sockets: CallSockets,
}

/// What serves a push while it runs.
#[derive(Debug)]
pub(super) enum CallSockets {
    Http(PushSocket),
    Ssh(SshCall),
}

impl PushCall {
    /// Serves the call's sockets until dropped.
    pub(super) async fn serve(&self) -> std::convert::Infallible {
        match &self.sockets {
            CallSockets::Http(socket) => socket.serve().await,
            CallSockets::Ssh(call) => call.serve().await,
        }
    }

    /// `text` (a failed push's result) with what the call knows about the
    /// failure added.
    pub(super) fn explain(&self, text: &mut String) {
        if let CallSockets::Ssh(call) = &self.sockets {
            for sentence in call.explain(text) {
                text.push('\n');
                text.push_str(&sentence);
            }
        }
    }
}

/// Whether `argv` is a `git push` the shim carries.
pub(super) fn is_push(argv: &[String]) -> bool {
    matches!(
        git_shim::classify(argv),
        Some(GitClass::Decide {
            carry: Carry::Push,
            ..
        })
    )
}

/// The push's own sandbox and sockets, `Ok(None)` when it runs as any
/// command does, `Err(text)` when it is not run (the agent reads `text`).
pub(super) fn prepare(
    base: &Sandbox,
    argv: &[String],
    workspace: &Path,
    git: Option<&dyn CommandGit>,
    parent: &Path,
    name: &str,
) -> Result<Option<PushCall>, String> {
    // A session's checkout is asked through the git directories the host
    // recorded, and its credentials are asked in the person's repository:
    // the checkout's own `.git` is a file a command could have rewritten.
    let (remote, credential_dir) = match git {
        Some(git) => (
            push_remote_with(&|args: &[&str]| git.host_command(args), argv),
            git.common_dir(),
        ),
        None => (push_remote(workspace, argv), workspace),
    };
    if remote == PushRemote::Other {
        return Ok(None);
    }
    let exe = std::env::current_exe().map_err(|err| {
        format!("git push was not run: the running chock binary cannot be found ({err}); the push needs it inside its sandbox")
    })?;
    let mut spec = base.spec().clone();
    spec.read_only.push(exe.clone());
    let sockets = match remote {
        PushRemote::Http(remote) => {
            let socket = PushSocket::open(parent, name, remote, credential_dir).map_err(|err| {
                format!(
                    "git push was not run: the push's credential socket could not be made in {} ({err})",
                    parent.display()
                )
            })?;
            spec.read_only.push(socket.dir().to_owned());
            for (key, value) in socket.git_config(&exe) {
                add_git_config(&mut spec.env, key, &value);
            }
            CallSockets::Http(socket)
        }
        PushRemote::Ssh(url) => {
            let Some(parsed) = ssh::parse_ssh_url(&url) else {
                return Err(format!(
                    "git push to {url} was not run: Chock cannot read a host from that ssh remote; \
use ssh://[user@]host[:port]/path or [user@]host:path"
                ));
            };
            let home = std::env::var_os("HOME").map(PathBuf::from);
            let target = ssh::resolve(&parsed, home.as_deref());
            let (user_known, global_known) = ssh::known_hosts(home.as_deref());
            let upstream = std::env::var_os("SSH_AUTH_SOCK").map(PathBuf::from);
            let call = SshCall::open(parent, name, target.clone(), upstream.as_deref())
                .map_err(|err| {
                    format!(
                        "git push was not run: the push's ssh agent socket could not be made in {} ({err})",
                        parent.display()
                    )
                })?;
            ssh_env(&mut spec, &exe, &target, &call, &user_known, &global_known);
            CallSockets::Ssh(call)
        }
        PushRemote::Other => return Ok(None),
    };
    // Nobody can answer a prompt inside; git fails with its own sentence.
    for (key, value) in [("GIT_TERMINAL_PROMPT", "0"), ("GIT_ASKPASS", "")] {
        set_env(&mut spec.env, key, value);
    }
    let sandbox = Sandbox::new(spec)
        .map_err(|err| format!("git push was not run: its sandbox cannot be built: {err}"))?;
    Ok(Some(PushCall { sandbox, sockets }))
}

/// Points git's ssh at the route, the agent proxy and the known hosts.
fn ssh_env(
    spec: &mut chock_sandbox::SandboxSpec,
    exe: &Path,
    target: &SshTarget,
    call: &SshCall,
    user_known: &[PathBuf],
    global_known: &[PathBuf],
) {
    spec.read_only.push(call.dir().to_owned());
    spec.read_only.extend(user_known.iter().cloned());
    spec.read_only.extend(global_known.iter().cloned());
    // Nothing of the host's ssh setup is passed through by name; the
    // command below is the whole of it.
    const HOST_SSH: &[&str] = &[
        "GIT_SSH",
        "GIT_SSH_VARIANT",
        "GIT_SSH_COMMAND",
        "SSH_AUTH_SOCK",
        "SSH_ASKPASS",
    ];
    spec.env_allow
        .retain(|name| !HOST_SSH.contains(&name.as_str()));
    spec.env
        .retain(|(name, _)| !HOST_SSH.contains(&name.as_str()));
    let command = ssh::ssh_command(exe, target, user_known, global_known);
    set_env(&mut spec.env, "GIT_SSH_COMMAND", &command);
    if let Some(socket) = call.agent_socket() {
        set_env(&mut spec.env, "SSH_AUTH_SOCK", &socket.to_string_lossy());
    }
}

fn set_env(env: &mut Vec<(String, String)>, key: &str, value: &str) {
    env.retain(|(k, _)| k != key);
    env.push((key.to_owned(), value.to_owned()));
}

/// Appends one `GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n` pair after those
/// already in `env`.
fn add_git_config(env: &mut Vec<(String, String)>, key: &str, value: &str) {
    let count = env
        .iter()
        .find(|(k, _)| k == "GIT_CONFIG_COUNT")
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0);
    env.retain(|(k, _)| k != "GIT_CONFIG_COUNT");
    env.push(("GIT_CONFIG_COUNT".to_owned(), (count + 1).to_string()));
    env.push((format!("GIT_CONFIG_KEY_{count}"), key.to_owned()));
    env.push((format!("GIT_CONFIG_VALUE_{count}"), value.to_owned()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_config_pairs_are_numbered_after_the_existing_ones() {
        let mut env = vec![
            ("GIT_CONFIG_COUNT".to_owned(), "1".to_owned()),
            ("GIT_CONFIG_KEY_0".to_owned(), "gc.auto".to_owned()),
            ("GIT_CONFIG_VALUE_0".to_owned(), "0".to_owned()),
        ];
        add_git_config(&mut env, "credential.helper", "");
        add_git_config(&mut env, "credential.helper", "!x");
        let get = |key: &str| env.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
        assert_eq!(get("GIT_CONFIG_COUNT"), Some("3"));
        assert_eq!(get("GIT_CONFIG_KEY_1"), Some("credential.helper"));
        assert_eq!(get("GIT_CONFIG_VALUE_1"), Some(""));
        assert_eq!(get("GIT_CONFIG_VALUE_2"), Some("!x"));
        assert_eq!(
            env.iter().filter(|(k, _)| k == "GIT_CONFIG_COUNT").count(),
            1
        );
    }

    #[test]
    fn only_a_push_is_a_push() {
        let words = |line: &str| {
            line.split_whitespace()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        };
        assert!(is_push(&words("git push origin main")));
        assert!(!is_push(&words("git status")));
        assert!(!is_push(&words("git fetch")));
        assert!(!is_push(&words("sh -c git-push")));
    }
}
