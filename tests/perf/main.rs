//! Whole-process measurements of the built `chock` binary, ignored by
//! default (they measure, they do not check). Run with
//! `cargo build --release -p chock && cargo test --release -p chock-e2e --test perf -- --ignored --nocapture`
//! and copy the printed figures into docs/performance.md.

#[cfg(test)]
mod first_request;
