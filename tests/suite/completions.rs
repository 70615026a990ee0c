//! `chock completions` and `chock man`: the scripts and pages generated
//! from the command line's own definition name every subcommand, and the
//! shells and man read them.

use std::path::Path;
use std::process::Command;

use super::chock;
use super::session_logs::{stderr, stdout};

/// The subcommands `chock --help` lists (without `help`).
fn subcommands(state: &Path) -> Vec<String> {
    let out = chock(state).arg("--help").output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let help = stdout(&out);
    let names: Vec<String> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        // A description wrapped onto the next line is indented further.
        .filter(|l| !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect();
    assert!(names.len() > 10, "too few subcommands in --help:\n{help}");
    for name in ["completions", "man", "workspace", "run"] {
        assert!(names.iter().any(|n| n == name), "{name} not in {names:?}");
    }
    names
}

fn script(state: &Path, shell: &str) -> String {
    let out = chock(state).args(["completions", shell]).output().unwrap();
    assert!(out.status.success(), "{shell}: {}", stderr(&out));
    let text = stdout(&out);
    assert!(!text.trim().is_empty(), "{shell}: the script is empty");
    text
}

/// Runs `program args... file` on `text` written to a file: `None` when
/// the program is not installed (a failure under CI, which installs it).
fn check_with(program: &str, args: &[&str], text: &str, ext: &str) -> Option<()> {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(format!("checked.{ext}"));
    std::fs::write(&file, text).unwrap();
    let out = match Command::new(program).args(args).arg(&file).output() {
        Ok(out) => out,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            assert!(
                std::env::var_os("CI").is_none(),
                "{program} is missing under CI: .ci/run installs it"
            );
            eprintln!("skipped: {program} is not installed (.ci/run installs it)");
            return None;
        }
        Err(e) => panic!("{program}: {e}"),
    };
    assert!(
        out.status.success(),
        "{program} refused the {ext} file:\n{}\n{}",
        stderr(&out),
        stdout(&out)
    );
    assert_eq!(stderr(&out), "", "{program} warned about the {ext} file");
    Some(())
}

#[test]
fn every_shell_script_names_every_subcommand() {
    let state = tempfile::tempdir().unwrap();
    let names = subcommands(state.path());
    for shell in ["bash", "zsh", "fish"] {
        let text = script(state.path(), shell);
        for name in &names {
            assert!(text.contains(name.as_str()), "{shell}: {name} is missing");
        }
    }
    // The nested verbs too.
    assert!(script(state.path(), "bash").contains("discard"));
}

#[test]
fn the_shells_read_their_scripts() {
    let state = tempfile::tempdir().unwrap();
    check_with("bash", &["-n"], &script(state.path(), "bash"), "bash");
    check_with("zsh", &["-n"], &script(state.path(), "zsh"), "zsh");
    check_with(
        "fish",
        &["--no-execute"],
        &script(state.path(), "fish"),
        "fish",
    );
}

#[test]
fn the_bash_script_completes_subcommands() {
    let state = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("chock.bash");
    std::fs::write(&file, script(state.path(), "bash")).unwrap();
    // What bash does on `chock wor<TAB>`.
    let probe = format!(
        "source {}; COMP_WORDS=(chock wor); COMP_CWORD=1; COMP_LINE='chock wor'; COMP_POINT=9; \
         _chock chock wor chock; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        file.display()
    );
    let out = Command::new("bash").args(["-c", &probe]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "workspace\n");
}

#[test]
fn an_unknown_shell_is_a_usage_error() {
    let state = tempfile::tempdir().unwrap();
    let out = chock(state.path())
        .args(["completions", "powershell"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("bash"), "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
    let out = chock(state.path()).arg("completions").output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

fn renders(page: &str, name: &str) {
    if check_with("groff", &["-man", "-Tutf8", "-ww", "-z"], page, "1").is_some() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(name);
        std::fs::write(&file, page).unwrap();
        let out = Command::new("groff")
            .args(["-man", "-Tutf8", "-P-cbou"])
            .arg(&file)
            .output()
            .unwrap();
        let text = stdout(&out);
        assert!(
            text.contains("NAME") && text.contains("SYNOPSIS"),
            "{name}: {text}"
        );
    }
}

#[test]
fn the_man_page_is_printed_and_renders() {
    let state = tempfile::tempdir().unwrap();
    let out = chock(state.path()).arg("man").output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let page = stdout(&out);
    assert!(page.starts_with(".ie"), "{page}");
    assert!(page.contains(".TH chock 1"), "{page}");
    for name in subcommands(state.path()) {
        assert!(page.contains(&name), "{name} is not in chock.1");
    }
    renders(&page, "chock.1");
}

#[test]
fn the_man_pages_are_written_one_per_subcommand() {
    let state = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let man1 = dir.path().join("share/man/man1");
    let out = chock(state.path())
        .args(["man", "--dir"])
        .arg(&man1)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
    let mut pages: Vec<String> = std::fs::read_dir(&man1)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    pages.sort();
    let mut want = vec!["chock.1".to_owned()];
    for name in subcommands(state.path()) {
        want.push(format!("chock-{name}.1"));
    }
    for page in &want {
        assert!(pages.contains(page), "{page} is not in {pages:?}");
    }
    assert!(pages.contains(&"chock-workspace-list.1".to_owned()));
    for hidden in [
        "chock-gate.1",
        "chock-git-credential.1",
        "chock-ssh-connect.1",
    ] {
        assert!(!pages.contains(&hidden.to_owned()), "{pages:?}");
    }
    for page in ["chock.1", "chock-workspace-list.1", "chock-completions.1"] {
        renders(&std::fs::read_to_string(man1.join(page)).unwrap(), page);
    }
}
