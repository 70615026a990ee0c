//! One integration-test binary for chock-policy; the tests are in `suite/`.

#![expect(
    clippy::unwrap_used,
    reason = "helpers outside #[test] fns fail a test loudly, which is the point"
)]

mod suite;
