//! End-to-end tests live in `all.rs` and its `suite/` modules; this library is
//! empty so the package builds on its own.
