//! chock-sandbox: one [`SandboxSpec`] in, one sandboxed child process out.
//!
//! Every program an agent runs goes through here: fresh user, mount, pid,
//! ipc, uts and network namespaces around a root assembled from binds;
//! landlock as a second wall; a seccomp filter; no_new_privs, no
//! capabilities, a new session, rlimits, and death with the parent. Where
//! user namespaces are refused it degrades to landlock and seccomp and says
//! so in the [`SandboxReport`]; where landlock is missing too it refuses.
//!
//! Set-up after the fork uses only raw system calls on data prepared before
//! it (see `child.rs` and docs/sandbox.md), so a single-threaded tokio
//! program and a multi-threaded test harness run the same code path.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod child;
mod error;
mod landlock;
pub mod net;
mod netns;
mod orphan;
mod plan;
mod report;
mod seccomp;
mod spawn;
mod spec;
mod status;

pub use error::{SpawnError, SpecError};
pub use orphan::dies_with_parent;
pub use report::{LandlockState, SandboxReport};
pub use seccomp::denied_names;
pub use spawn::{FORCE_ENV, Sandbox, SandboxChild};
pub use spec::{
    Bind, DeviceNode, ENV_ALLOW, ETC_PATHS, NetworkMode, SYSTEM_PATHS, SandboxSpec, Stdio, TmpMode,
};
pub use status::{ExitStatus, signal_name};
