//! Every subcommand answers `--help`. Having an integration test here also
//! makes cargo build the `chock` binary itself, which `tests/` (chock-e2e)
//! runs.

use std::process::Command;

#[test]
fn top_level_help_lists_every_subcommand() {
    let out = Command::new(env!("CARGO_BIN_EXE_chock"))
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("Usage: chock"), "{text}");
}
