//! One test binary for the whole end-to-end suite: every module under
//! `suite/` runs the real `chock` binary in a temporary state directory.

#![expect(
    clippy::expect_used,
    clippy::unwrap_used,
    reason = "test helpers fail loudly, like the tests that call them"
)]

mod suite;
