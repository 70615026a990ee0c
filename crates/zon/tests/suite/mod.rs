//! Integration tests: the spec's ZON snippets, error reports as a person
//! sees them, the serde mapping, and write-then-read round trips.

mod errors;
mod perf;
mod roundtrip;
mod seed;
mod serde_map;
mod types;
