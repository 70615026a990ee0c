//! The tools run in place against a real project directory.

#![expect(
    clippy::unwrap_used,
    reason = "helpers outside #[test] functions fail the test by panicking"
)]

mod paths;
mod specs;
mod tools;
