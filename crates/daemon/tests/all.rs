//! Integration tests of the daemon: a real daemon booted in-process in a
//! temporary state directory, reached over its real socket, running real
//! child processes (a small stand-in for `chock run`, until that exists).

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers fail loudly, like the tests that call them"
)]
mod suite;
