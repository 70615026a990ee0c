//! One test binary for the whole end-to-end suite: every module under
//! `suite/` runs the real `chock` binary in a temporary state directory.

#[cfg(test)]
mod suite;
