//! `chock run` and what a person does with a session from outside it: the
//! agent loop, the tools, the judge, workspaces, handover and approvals.
//! Everything here is built to run on one thread: the tool path forks, and
//! fork carries only the calling thread (DESIGN.md, Processes).
//!
//! The binary reaches the names re-exported at the bottom of this file, a
//! verb each, and nothing deeper; the modules stay public for this crate's
//! own tests and benches.

#![deny(clippy::print_stdout, clippy::print_stderr)]
#![forbid(unsafe_code)]

mod agentic;
mod answer;
mod approval;
mod beside;
mod compact;
pub mod config;
pub mod context;
pub mod devices;
mod guard;
mod handover;
mod history;
mod judge;
mod lsp;
mod mcp;
pub mod models;
mod net;
pub mod person;
mod plugins;
/// The model wire formats, a crate of their own (`chock-providers`).
pub use chock_providers as provider;
/// The tools, a crate of their own (`chock-tools`).
pub use chock_tools as tools;
mod review;
mod run;
mod secret_use;
pub mod secrets;
pub mod session;
mod stop;
pub mod style;
pub mod subagent;
pub mod turn;
pub mod workspace;

/// `chock run`.
pub use run::{CarryOn, RunError, RunOptions, default_config_path, run};

/// `chock detach`.
pub mod detach {
    pub use crate::handover::detach::{DetachError, DetachOptions, detach};
    pub use crate::handover::progress::Progress;
    pub use crate::handover::socket::HandoverSocketError;
}

/// `chock approve`.
pub mod approve {
    pub use crate::approval::Answer;
    pub use crate::approval::client::{ClientError, deliver, deliver_text, pending};
    pub use crate::approval::socket::SocketError;
}

/// The hidden helpers a push runs inside its sandbox: `chock git-credential`
/// and `chock ssh-connect`.
pub mod push {
    pub use chock_tools::push_credential::connect::run as ssh_connect;
    pub use chock_tools::push_credential::helper::run as git_credential;
}
