//! chock-lsp: the language-server client a session uses to hear what a
//! project's servers say about the files it writes.
//!
//! A server is reached over a pair of pipes to a process the caller
//! started (the session starts it in its sandbox; this crate starts
//! nothing). The messages are LSP's own types (`lsp-types`), framed as the
//! base protocol frames them (`Content-Length` headers, `frame.rs`). The
//! client speaks the little a session needs: `initialize`, full-text
//! document sync (`didOpen`, `didChange`, `didSave`), the diagnostics the
//! server publishes, and `shutdown`; it answers the server's own requests
//! (configuration, registrations, progress) with empty results so that a
//! server waiting on one carries on.
//!
//! What this crate adds is what a session needs from a program it does not
//! trust: every wait bounded ([`Bounds`]), a frame that is not LSP or is
//! over [`MAX_FRAME`] taken as the server failing, a server that sends
//! more than [`FLOOD_MESSAGES`] messages or [`FLOOD_BYTES`] bytes between
//! two edits stopped as flooding, diagnostics kept to
//! [`MAX_DIAGNOSTICS`] a file and [`MAX_FILES`] files, and each message
//! cut to a line when it is said. A server that fails says why once
//! ([`Server::failed`]), and the caller carries on without it.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod client;
mod compact;
mod error;
mod frame;

pub use client::{
    Bounds, FLOOD_BYTES, FLOOD_MESSAGES, MAX_DIAGNOSTICS, MAX_FILES, Server, file_uri,
};
pub use compact::compact;
pub use error::LspError;
pub use frame::MAX_FRAME;
pub use lsp_types::{Diagnostic, DiagnosticSeverity, Uri};
