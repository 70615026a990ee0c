//! One integration-test binary for chock-log: real files, real locks, real
//! processes.

#[cfg(test)]
mod suite;
