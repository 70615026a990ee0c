//! Integration tests of the control protocol: golden vectors for every
//! request and reply line, and the client against a scripted peer.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail loudly, like the tests that call them"
)]
mod suite;
