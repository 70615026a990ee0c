//! chock-serve's integration tests: HTTP against serve booted in-process,
//! in front of a real daemon booted in-process, over real sockets.

mod suite;
