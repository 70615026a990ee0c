//! The one integration-test binary of chock-zon.
mod suite;
