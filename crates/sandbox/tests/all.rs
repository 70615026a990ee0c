//! The integration tests of chock-sandbox: the escape suite (each attempt
//! with its positive control), spawning and waiting, the degraded modes, and
//! the unprivileged rerun of the escape suite.
#![expect(clippy::unwrap_used, reason = "test helpers fail loudly")]

mod suite;
