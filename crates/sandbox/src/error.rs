//! The errors a caller can meet: a spec that cannot be prepared
//! ([`SpecError`]) and a spawn that failed before the command ran
//! ([`SpawnError`]). Each carries the path, step or errno involved so the
//! message says what happened and what to do next.

use std::io;
use std::path::PathBuf;

/// A [`crate::SandboxSpec`] that cannot become a sandbox.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SpecError {
    /// The workspace directory does not exist or is not a directory.
    #[error(
        "workspace {path} does not exist or is not a directory: create it or pass another --workspace"
    )]
    WorkspaceMissing {
        /// The path as given.
        path: PathBuf,
    },
    /// A closure path or writable path the spec requires is missing.
    #[error("{what} {path} does not exist: build it first or drop it from the sandbox spec")]
    PathMissing {
        /// Which list the path came from.
        what: &'static str,
        /// The path as given.
        path: PathBuf,
    },
    /// A path holds a NUL byte or is not absolute.
    #[error("path {path} cannot be used in a sandbox: it must be absolute and hold no NUL byte")]
    BadPath {
        /// The path as given.
        path: PathBuf,
    },
    /// A device node placed anywhere but beneath `/dev` (and outside the
    /// sandbox's own `/dev/pts` and `/dev/shm`).
    #[error(
        "device node {path} cannot be placed there: a device is placed beneath /dev, outside /dev/pts and /dev/shm, such as /dev/ttyUSB0"
    )]
    DeviceAt {
        /// Where it was to appear.
        path: PathBuf,
    },
    /// The seccomp filter could not be compiled.
    #[error("the seccomp filter could not be built: {0}")]
    Seccomp(String),
}

/// A spawn that failed before the command started running.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SpawnError {
    /// The argument vector was empty.
    #[error("no command given: pass the program to run after '--'")]
    EmptyCommand,
    /// An argument or variable holds a NUL byte.
    #[error(
        "argument or environment value {0:?} holds a NUL byte and cannot be passed to a program"
    )]
    Nul(String),
    /// The program was not found in the sandbox's PATH (or at its path).
    #[error(
        "command not found in the sandbox: {program} (exit status 127): check the name, or that its directory is bound into the sandbox"
    )]
    NotFound {
        /// The program as given.
        program: String,
    },
    /// The program exists but could not be executed.
    #[error("cannot execute {program} in the sandbox (exit status 126): {error}")]
    NotExecutable {
        /// The program as given.
        program: String,
        /// Why execve refused.
        error: io::Error,
    },
    /// Neither user namespaces nor landlock are available: running would be
    /// unsandboxed, which only a person's policy may allow.
    #[error(
        "refusing to run {program}: no isolation available ({missing}); enable unprivileged user namespaces or landlock"
    )]
    NoIsolation {
        /// The program as given.
        program: String,
        /// What is missing, by name.
        missing: String,
    },
    /// A step of building the sandbox failed in the child.
    #[error("building the sandbox failed at '{step}': {error}")]
    Setup {
        /// The step, in words (e.g. `bind /usr read-only`).
        step: String,
        /// The errno the kernel gave.
        error: io::Error,
    },
    /// A system call in the caller failed (pipe, clone, read).
    #[error("cannot start a sandboxed process ({what}): {error}")]
    Os {
        /// The call that failed.
        what: &'static str,
        /// The error.
        error: io::Error,
    },
}
