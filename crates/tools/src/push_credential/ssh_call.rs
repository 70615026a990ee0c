//! One approved push to an ssh remote: its per-call directory, the proxy
//! of the person's ssh agent in it, and the sentences added to the result
//! when ssh fails for a reason the agent cannot see from inside (no agent
//! on the host, a host key the person has not accepted).
//!
//! Like the http credential socket, everything here lives only as long as
//! the call: dropping it closes the agent socket and removes the directory.

use std::path::{Path, PathBuf};

use super::agent::AgentProxy;
use super::make_call_dir;
use super::ssh::SshTarget;

/// The agent socket's file name inside the per-call directory.
const AGENT_NAME: &str = "agent";

/// A push's directory and, when the person has an agent, its proxy.
#[derive(Debug)]
pub struct SshCall {
    dir: PathBuf,
    target: SshTarget,
    agent: Result<AgentProxy, String>,
}

impl SshCall {
    /// Makes `parent/<name>/` (0700) and, when `upstream` (the host's
    /// `SSH_AUTH_SOCK`) names a socket, the agent proxy in it.
    pub fn open(
        parent: &Path,
        name: &str,
        target: SshTarget,
        upstream: Option<&Path>,
    ) -> std::io::Result<Self> {
        let dir = make_call_dir(parent, name)?;
        let agent = match upstream {
            None => Err("the session was started without SSH_AUTH_SOCK".to_owned()),
            Some(path) if !is_socket(path) => Err(format!(
                "SSH_AUTH_SOCK names {}, which is not a socket",
                path.display()
            )),
            Some(path) => match AgentProxy::bind(&dir.join(AGENT_NAME), path) {
                Ok(proxy) => Ok(proxy),
                Err(err) => {
                    let _ = std::fs::remove_dir_all(&dir);
                    return Err(err);
                }
            },
        };
        Ok(Self { dir, target, agent })
    }

    /// The per-call directory (bound read-only into the call's sandbox).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The agent socket the call's `SSH_AUTH_SOCK` names, when there is one.
    pub fn agent_socket(&self) -> Option<PathBuf> {
        self.agent.is_ok().then(|| self.dir.join(AGENT_NAME))
    }

    /// Serves the agent proxy until dropped (forever pending with none).
    pub async fn serve(&self) -> std::convert::Infallible {
        match &self.agent {
            Ok(proxy) => proxy.serve().await,
            Err(_) => std::future::pending().await,
        }
    }

    /// The sentences added to a failed push's result: what ssh's own error
    /// (in `text`) means from outside, and what the person can do.
    pub fn explain(&self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        let target = super::ssh::authority(&self.target.host, self.target.port);
        if text.contains("Host key verification failed") {
            let connect = if self.target.port == 22 {
                format!("ssh {}", self.target.host)
            } else {
                format!("ssh -p {} {}", self.target.port, self.target.host)
            };
            out.push(format!(
                "Chock: the host key of {target} is not in the person's known_hosts (~/.ssh/known_hosts, \
/etc/ssh/ssh_known_hosts), and a push from a session never accepts a new host key. \
Ask the person to connect to it once themselves (for example `{connect}`), check the fingerprint they are shown, \
and then retry the push."
            ));
        }
        if let Err(why) = &self.agent
            && text.contains("Permission denied")
        {
            out.push(format!(
                "Chock: no ssh agent was handed to this push ({why}), so ssh had no key to offer {target}; \
the key is used only through the person's ssh agent. Ask the person to start the session with their agent \
running and the key added (`ssh-add -l` lists it)."
            ));
        }
        out
    }
}

impl Drop for SshCall {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn is_socket(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt as _;
    std::fs::metadata(path).is_ok_and(|meta| meta.file_type().is_socket())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target() -> SshTarget {
        SshTarget {
            host: "allowed.test".into(),
            port: 2222,
            user: None,
            host_key_alias: None,
        }
    }

    #[test]
    fn the_agent_socket_lives_in_the_call_directory_and_goes_with_it() {
        let tmp = tempfile::tempdir().unwrap();
        let upstream = tmp.path().join("person-agent");
        let _person = std::os::unix::net::UnixListener::bind(&upstream).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let _guard = runtime.enter();
        let call = SshCall::open(tmp.path(), "push-1", target(), Some(&upstream)).unwrap();
        let socket = call.agent_socket().expect("an agent socket");
        assert_eq!(socket, tmp.path().join("push-1/agent"));
        assert!(is_socket(&socket));
        drop(call);
        assert!(!tmp.path().join("push-1").exists());
    }

    #[test]
    fn without_an_agent_a_denied_login_is_explained() {
        let tmp = tempfile::tempdir().unwrap();
        let not_socket = tmp.path().join("file");
        std::fs::write(&not_socket, "").unwrap();
        for upstream in [None, Some(not_socket.as_path())] {
            let call = SshCall::open(tmp.path(), "push-1", target(), upstream).unwrap();
            assert_eq!(call.agent_socket(), None);
            let said = call.explain("git@allowed.test: Permission denied (publickey).");
            assert_eq!(said.len(), 1, "{said:?}");
            assert!(
                said[0].contains("no ssh agent was handed to this push"),
                "{said:?}"
            );
            // A failure that is not about the key says nothing of the agent.
            assert!(
                call.explain("the router refused allowed.test:2222")
                    .is_empty()
            );
        }
    }

    #[test]
    fn an_unknown_host_key_is_explained_with_what_the_person_can_do() {
        let tmp = tempfile::tempdir().unwrap();
        let call = SshCall::open(tmp.path(), "push-1", target(), None).unwrap();
        let said = call.explain("Host key verification failed.");
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].contains("`ssh -p 2222 allowed.test`"), "{said:?}");
        assert!(said[0].contains("never accepts a new host key"), "{said:?}");
    }
}
