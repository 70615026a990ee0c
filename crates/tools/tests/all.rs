//! Integration tests of chock-tools against real files.

mod suite;
