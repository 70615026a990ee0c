//! One integration-test binary for chock-gate: real files, real git repositories.

#[cfg(test)]
mod suite;
