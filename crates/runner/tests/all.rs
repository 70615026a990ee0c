//! Integration tests of chock-runner against real sockets and files.

mod suite;
