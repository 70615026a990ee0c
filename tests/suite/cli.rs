//! The binary's own surface: version and help.

use super::chock;

#[test]
fn version_prints_the_package_version() {
    let state = tempfile::tempdir().unwrap();
    let out = chock(state.path()).arg("--version").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.trim(), format!("chock {}", env!("CARGO_PKG_VERSION")));
}

#[test]
fn unknown_subcommand_is_a_usage_error() {
    let state = tempfile::tempdir().unwrap();
    let out = chock(state.path()).arg("frobnicate").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}
