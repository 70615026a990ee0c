//! What run_command does differently for a permitted foreground `git push`:
//! to an http(s) remote it gets a sandbox of its own, built from the
//! session's, with the per-call credential socket's directory and the
//! running `chock` binary bound read-only and git's credential helper
//! pointed at them (`crate::push_credential`); to an ssh remote it is not
//! run, and the agent is told why; to anything else (a local path) it runs
//! as any command does.
//!
//! A background push gets no credential: a job outlives the call that was
//! permitted, and the socket is for that call only.

use std::path::Path;

use chock_sandbox::Sandbox;

use crate::git_shim::{self, Carry, GitClass};
use crate::push_credential::{PushRemote, PushSocket, push_remote};

/// A push's own sandbox and the socket it asks.
#[derive(Debug)]
pub(super) struct PushCall {
    pub sandbox: Sandbox,
    pub socket: PushSocket,
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

/// The push's own sandbox and socket, `Ok(None)` when it runs as any
/// command does, `Err(text)` when it is not run (the agent reads `text`).
pub(super) fn prepare(
    base: &Sandbox,
    argv: &[String],
    workspace: &Path,
    parent: &Path,
    name: &str,
) -> Result<Option<PushCall>, String> {
    let remote = match push_remote(workspace, argv) {
        PushRemote::Http(remote) => remote,
        PushRemote::Ssh(url) => return Err(ssh_not_carried(&url)),
        PushRemote::Other => return Ok(None),
    };
    let exe = std::env::current_exe().map_err(|err| {
        format!("git push was not run: the credential helper (this chock binary) cannot be found ({err})")
    })?;
    let socket = PushSocket::open(parent, name, remote, workspace).map_err(|err| {
        format!(
            "git push was not run: the push's credential socket could not be made in {} ({err})",
            parent.display()
        )
    })?;
    let mut spec = base.spec().clone();
    spec.read_only.push(socket.dir().to_owned());
    spec.read_only.push(exe.clone());
    for (key, value) in socket.git_config(&exe) {
        add_git_config(&mut spec.env, key, &value);
    }
    // Nobody can answer a prompt inside; git fails with its own sentence.
    for (key, value) in [("GIT_TERMINAL_PROMPT", "0"), ("GIT_ASKPASS", "")] {
        spec.env.retain(|(k, _)| k != key);
        spec.env.push((key.to_owned(), value.to_owned()));
    }
    let sandbox = Sandbox::new(spec)
        .map_err(|err| format!("git push was not run: its sandbox cannot be built: {err}"))?;
    Ok(Some(PushCall { sandbox, socket }))
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

fn ssh_not_carried(url: &str) -> String {
    format!(
        "git push to {url} was not run: Chock carries a push only to an http(s) remote for now. \
An ssh remote would need a route for ssh out of the sandbox and the person's ssh agent, and a session has neither. \
Ask the person to push the session's branch from their own checkout (the workspace's branch is in the project's repository), \
or to give the remote an https URL with a credential their git credential helper holds."
    )
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
