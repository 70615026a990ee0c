//! Plugins: tools a third party writes as a WebAssembly module with a
//! manifest (docs/plugins.md). This crate reads and checks the manifest,
//! compiles the module (keeping it compiled across sessions), links it with
//! the host functions of the capabilities the session allowed and nothing
//! else, and runs each call within its bounds. What is allowed, and what
//! the log says, is the runner's.

pub mod engine;
pub mod manifest;

pub use engine::{Bounds, CallError, Called, Engine, Files, Instance, LoadError};
pub use manifest::{Capability, MANIFEST, Manifest, ManifestError, ToolDecl, is_label};
