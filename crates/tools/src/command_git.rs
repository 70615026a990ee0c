//! The session's git as its commands see it. A command in a session's
//! checkout works in a private git directory the host makes ready before
//! the command and reads back after it (the runner's workspace owns that:
//! `chock_runner::workspace::SandboxGit`); the tools only ask for it
//! through [`CommandGit`], so nothing here trusts a file a command could
//! have written.

use std::fmt::Debug;
use std::path::Path;
use std::process::Command;

use chock_sandbox::Bind;

/// What a command needs of the session's git, and what the host does with
/// it afterwards.
pub trait CommandGit: Debug {
    /// Makes the private git directory ready: the binds and the environment
    /// a command needs with the workspace `workspace` seen at `inside`, or
    /// the sentence saying why no command can run.
    fn prepare(&self, workspace: &Path, inside: &Path) -> Result<GitMounts, String>;

    /// Brings back the commits commands made; the sentences for a notice.
    fn bring_back(&self) -> Vec<String>;

    /// git on the host, against the git directories the host recorded (never
    /// the checkout's own `.git`, a file a command could have rewritten).
    fn host_command(&self, args: &[&str]) -> Command;

    /// The repository's common git directory, where a push's credentials are
    /// asked for.
    fn common_dir(&self) -> &Path;
}

/// The mounts and the environment for git inside one command's sandbox.
#[derive(Debug, Clone, Default)]
pub struct GitMounts {
    pub binds: Vec<Bind>,
    pub env: Vec<(String, String)>,
}
