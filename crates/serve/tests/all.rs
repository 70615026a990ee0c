//! chock-serve's integration tests: HTTP against serve booted in-process,
//! in front of a real daemon booted in-process, over real sockets; and the
//! page in a real browser.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers fail loudly, like the tests that call them"
)]
mod suite;
