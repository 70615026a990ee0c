//! `chock run`: the model providers, the tool set and (as it lands) the
//! agent loop. Everything here is built to run on one thread: the tool path
//! forks, and fork carries only the calling thread (DESIGN.md, Processes).

#![deny(clippy::print_stdout, clippy::print_stderr)]
#![forbid(unsafe_code)]

mod agentic;
pub mod approval;
pub mod compact;
pub mod config;
pub mod git_shim;
pub mod guard;
pub mod handover;
pub mod history;
mod judge;
pub mod net;
mod owned_socket;
/// The model wire formats, a crate of their own (`chock-providers`).
pub use chock_providers as provider;
pub mod push_credential;
pub mod review;
pub mod run;
pub mod session;
pub mod tools;
pub mod turn;
pub mod workspace;
