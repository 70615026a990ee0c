//! The `chock` front and the full program behind it: the front runs a
//! plain `chock sandbox` line itself and hands every other line to
//! `chock-full` unchanged, in the same process, finding it beside itself or
//! in `../libexec/chock`; without it, the front says what is missing.
#![expect(clippy::unwrap_used, reason = "test helpers fail loudly")]

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

/// An installation in a temporary directory: the front at `bin/chock`, the
/// full program at `full` (relative to the root) when given.
fn install(full: Option<&str>) -> (tempfile::TempDir, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let front = root.path().join("bin/chock");
    copy(Path::new(env!("CARGO_BIN_EXE_chock")), &front);
    if let Some(place) = full {
        copy(
            Path::new(env!("CARGO_BIN_EXE_chock-full")),
            &root.path().join(place),
        );
    }
    (root, front)
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(from, to).unwrap();
    std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Starts `command`. A freshly copied program may still be open for
/// writing in a forked child of another test for a moment; that one error
/// is retried.
fn spawn(command: &mut Command) -> Child {
    for _ in 0..50 {
        match command.spawn() {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => return other.unwrap(),
        }
    }
    panic!("{command:?} stayed busy");
}

fn run(front: &Path, args: &[&str]) -> Output {
    spawn(
        Command::new(front)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    )
    .wait_with_output()
    .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn the_front_runs_a_sandboxed_command_without_the_full_program() {
    let (root, front) = install(None);
    let ws = root.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let sandboxed = |command: &[&str]| {
        let mut args = vec!["sandbox", "--workspace", ws.to_str().unwrap(), "--"];
        args.extend_from_slice(command);
        run(&front, &args)
    };
    let out = sandboxed(&["sh", "-c", "echo inside > note; exit 7"]);
    assert_eq!(out.status.code(), Some(7), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(ws.join("note")).unwrap(),
        "inside\n"
    );
    // The front's own errors keep the full program's exit statuses.
    let out = sandboxed(&["no-such-program-here"]);
    assert_eq!(out.status.code(), Some(127), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("no-such-program-here"));
}

/// An agent client's pre-tool hook runs before every tool call: the front
/// answers it without starting the full program.
#[test]
fn the_front_answers_a_hook_without_the_full_program() {
    let (root, front) = install(None);
    let home = root.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let input = r#"{"session_id":"s","tool_name":"Bash","tool_input":{"command":"ls"},"cwd":"/tmp","hook_event_name":"PreToolUse"}"#;
    let hook = |client: &str| {
        let mut child = spawn(
            Command::new(&front)
                .args(["gate", "stop-check", "--client", client])
                .env("HOME", &home)
                .env("XDG_STATE_HOME", home.join("state"))
                .env("XDG_CONFIG_HOME", home.join("config"))
                .env_remove("CHOCK_LOG")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped()),
        );
        // A refusal may come before the input is read (a closed pipe).
        let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
        child.wait_with_output().unwrap()
    };
    // No stop in force: the call may run.
    let out = hook("claude-code");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // An unknown client is refused in the common form, by the front too.
    let out = hook("no-such-client");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("unknown client"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn without_the_full_program_every_other_command_says_what_is_missing() {
    let (_root, front) = install(None);
    for args in [&["--version"][..], &["sessions"], &["sandbox", "--help"]] {
        let out = run(&front, args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = text(&out.stderr);
        assert!(
            err.contains("chock-full")
                && err.contains("libexec/chock")
                && err.contains("reinstall"),
            "{args:?}: {err}"
        );
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn other_commands_reach_the_full_program_beside_the_front_or_in_libexec() {
    for place in ["bin/chock-full", "libexec/chock/chock-full"] {
        let (_root, front) = install(Some(place));
        let out = run(&front, &["--version"]);
        assert!(out.status.success(), "{place}: {}", text(&out.stderr));
        assert_eq!(
            text(&out.stdout).trim(),
            format!("chock {}", env!("CARGO_PKG_VERSION"))
        );
        // Help and usage errors are the full program's, naming `chock`.
        let out = run(&front, &["sandbox", "--help"]);
        assert!(out.status.success(), "{place}: {}", text(&out.stderr));
        assert!(text(&out.stdout).contains("Usage: chock sandbox"));
        let out = run(&front, &["sandbox", "--no-such-flag", "--", "true"]);
        assert_eq!(out.status.code(), Some(2), "{place}");
        assert!(text(&out.stderr).contains("--no-such-flag"));
    }
}

/// The hand-over is an `execve` in the same process: the pid a caller
/// started is the full program's, standard input and output pass through,
/// and the exit status comes back unchanged.
#[test]
fn the_hand_over_keeps_the_process_its_input_and_its_status() {
    let (_root, front) = install(Some("bin/chock-full"));
    let mut child = spawn(
        Command::new(&front)
            .args(["policy", "check", "/dev/stdin"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    );
    let pid = child.id();
    // While it waits for standard input, the process the caller started is
    // already the full program.
    let exe = loop {
        let exe = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap();
        if exe.ends_with("chock-full") {
            break exe;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    assert!(exe.ends_with("bin/chock-full"), "{}", exe.display());
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b".{ .policy = .{ .nope = 1 } }")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("/dev/stdin:1:17: unknown field .nope"),
        "{}",
        text(&out.stdout)
    );
}
