//! Every subcommand answers `--help`. Having an integration test here also
//! makes cargo build the `chock` binary itself, which `tests/` (chock-e2e)
//! runs.

#![expect(clippy::unwrap_used, reason = "test helpers fail loudly")]

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

/// `chock <words> --help`, at a fixed width, as text.
fn help(words: &[String]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_chock"))
        .args(words)
        .arg("--help")
        .env("COLUMNS", "100")
        .env_remove("CHOCK_LOG")
        .output()
        .unwrap();
    assert!(out.status.success(), "{words:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// The subcommands a help text lists under `Commands:`, `help` left out.
fn subcommands(text: &str) -> Vec<String> {
    text.lines()
        .skip_while(|line| *line != "Commands:")
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .filter(|line| !line.starts_with("   "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

/// Every subcommand's `--help`, each a snapshot named by its words, so a
/// change of any help text is seen in review.
#[test]
fn every_subcommand_help() {
    let mut queue = vec![Vec::<String>::new()];
    let mut seen = 0;
    while let Some(words) = queue.pop() {
        let text = help(&words);
        for sub in subcommands(&text) {
            let mut next = words.clone();
            next.push(sub);
            queue.push(next);
        }
        let name = if words.is_empty() {
            "help".to_owned()
        } else {
            format!("help_{}", words.join("_"))
        };
        insta::assert_snapshot!(name, text);
        seen += 1;
    }
    assert!(seen > 10, "only {seen} help texts");
}

/// `--wait` says its bound in words, not as the range of a u64.
#[test]
fn wait_says_its_bound() {
    let out = Command::new(env!("CARGO_BIN_EXE_chock"))
        .args(["detach", "--wait", "0"])
        .output()
        .unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("'--wait <SECONDS>': 0 seconds leaves no time to answer: give 1 or more"),
        "{stderr}"
    );
    let help = help(&["detach".to_owned()]);
    assert!(help.contains("1 or more"), "{help}");
    for text in [&stderr, &help] {
        assert!(!text.contains("18446744073709551615"), "{text}");
    }
}
