//! Integration tests of chock-policy.
