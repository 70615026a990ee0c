//! The `chock` front: the program a person, a script, a hook or a unit
//! names. It runs two kinds of command line itself, the ones started so
//! often that starting the full program would be most of their cost:
//! `chock sandbox` without `--net` or `--dev-shell` (a sandboxed command from a shell) and
//! `chock gate` (an agent client's pre-tool hook, before every tool call,
//! and the git dispatcher's check, before every commit and push). Every
//! other command line goes to the full program (`chock-full`) unchanged,
//! by `execve` in the same process: same pid (so systemd's `LISTEN_PID`
//! still names it), same descriptors (so socket activation's and a
//! terminal's pass through), same environment and `argv[0]`.
//!
//! Only what `main` here reaches is linked into the front: the sandbox and
//! gate crates and clap's definition of their arguments, none of the
//! daemon, serve, gateway, runner, policy or async runtime. Anything the
//! front does not take in full (`--help`, a malformed line, `--net`, `-v`
//! before the subcommand, `CHOCK_LOG` set, since the front installs no
//! diagnostics) goes to the full program, which answers it as it always
//! has, so both programs read a command line the same way.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;

use crate::cmd::{gate, sandbox};
use crate::exit;

/// The full program's file name.
const FULL: &str = "chock-full";

/// Where the full program is looked for, relative to the directory of the
/// running front, in order: beside it (a cargo build, `cargo install`),
/// then `../libexec/chock` (the Nix package, which keeps it off `PATH`).
const PLACES: [&str; 2] = [".", "../libexec/chock"];

/// The part of the command line the front runs itself.
#[derive(Debug, Parser)]
#[command(name = "chock")]
struct Front {
    #[command(subcommand)]
    command: FrontCommand,
}

#[derive(Debug, clap::Subcommand)]
enum FrontCommand {
    Sandbox(sandbox::Args),
    Gate(gate::GateArgs),
}

/// The front's `main`: `chock sandbox` and `chock gate` here, everything
/// else handed over.
#[must_use]
pub fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    match own(&args) {
        Some(FrontCommand::Sandbox(args)) => crate::finish(sandbox::run_without_network(&args)),
        Some(FrontCommand::Gate(args)) => crate::finish(gate::run(args)),
        None => hand_over(&args),
    }
}

/// The command the front runs itself for this command line: `sandbox`
/// (asking no network) or `gate` first, parsed without error, and no
/// diagnostics asked for.
fn own(args: &[OsString]) -> Option<FrontCommand> {
    if !args.get(1).is_some_and(|a| a == "sandbox" || a == "gate")
        || std::env::var_os("CHOCK_LOG").is_some()
    {
        return None;
    }
    if args.get(1).is_some_and(|a| a == "sandbox")
        && let Some(plain) = sandbox::Args::read_plain(args.get(2..).unwrap_or_default())
    {
        return Some(FrontCommand::Sandbox(plain));
    }
    match Front::try_parse_from(args).ok()?.command {
        FrontCommand::Sandbox(args) if args.wants_network() || args.wants_dev_shell() => None,
        command => Some(command),
    }
}

/// Replaces this process with the full program, given the same command
/// line; returns only when that cannot be done, having said why. The full
/// program starts with an empty signal mask and SIGPIPE at its default
/// (what `exec` through std sets up), as one started from a shell does.
fn hand_over(args: &[OsString]) -> ExitCode {
    let exe = std::env::current_exe();
    let why = match exe.as_deref().map(full_program) {
        Ok(Some(full)) => {
            let mut command = std::process::Command::new(&full);
            if let Some(arg0) = args.first() {
                command.arg0(arg0);
            }
            let err = command.args(args.iter().skip(1)).exec();
            format!("cannot start {}: {err}", full.display())
        }
        Ok(None) => format!(
            "{FULL}, which runs every command but `chock sandbox` and `chock gate`, is neither beside {} nor in ../libexec/chock",
            exe.as_deref().unwrap_or(Path::new("chock")).display()
        ),
        Err(err) => format!("cannot find where this chock program is ({err})"),
    };
    eprintln!("chock: {why}; reinstall chock so that {FULL} is installed with it");
    ExitCode::from(exit::FAILURE)
}

/// The full program belonging to the front at `exe`, if installed.
fn full_program(exe: &Path) -> Option<PathBuf> {
    let dir = exe.parent()?;
    PLACES
        .iter()
        .map(|place| dir.join(place).join(FULL))
        .find(|path| path.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(words: &[&str]) -> Vec<OsString> {
        words.iter().map(OsString::from).collect()
    }

    #[test]
    fn the_front_takes_only_a_plain_sandbox_or_gate_line() {
        for taken in [
            &["chock", "sandbox", "--", "true"][..],
            &["chock", "gate", "stop-check", "--client", "claude-code"],
            &["chock", "gate", "git-check", "pre-push"],
            &[
                "chock",
                "sandbox",
                "--workspace",
                "/tmp",
                "--allow-jit",
                "--report",
                "--",
                "sh",
                "-c",
                "exit 3",
            ],
        ] {
            assert!(own(&line(taken)).is_some(), "{taken:?} was handed on");
        }
        for handed in [
            &["chock"][..],
            &["chock", "--version"],
            &["chock", "run", "hello"],
            &["chock", "-v", "sandbox", "--", "true"],
            &["chock", "sandbox", "--help"],
            &["chock", "sandbox"],
            &["chock", "sandbox", "--no-such-flag", "--", "true"],
            &["chock", "sandbox", "--net", "--", "true"],
            &["chock", "sandboxes"],
            &["chock", "gate"],
            &["chock", "gate", "--help"],
            &["chock", "gate", "stop-check"],
        ] {
            assert!(own(&line(handed)).is_none(), "{handed:?} was not handed on");
        }
    }

    /// Every line the front's own reader takes, clap reads the same way:
    /// each sequence of up to four words from a set of awkward ones after
    /// `chock sandbox`.
    #[test]
    fn the_plain_reader_agrees_with_clap() {
        use std::os::unix::ffi::OsStringExt;
        let words: Vec<OsString> = [
            &b"--workspace"[..],
            b"/w",
            b"--workspace=/v=x",
            b"--allow-jit",
            b"--report",
            b"--",
            b"true",
            b"-x",
            b"--net",
            b"",
            b"--workspace=",
            b"\xff\xfe",
        ]
        .iter()
        .map(|w| OsString::from_vec(w.to_vec()))
        .collect();
        let mut taken = 0;
        let mut lines: Vec<Vec<OsString>> = vec![vec![]];
        for _ in 0..4 {
            let longer: Vec<Vec<OsString>> = lines
                .iter()
                .filter(|l| l.len() == lines.last().map_or(0, Vec::len))
                .flat_map(|l| {
                    words.iter().map(move |w| {
                        let mut l = l.clone();
                        l.push(w.clone());
                        l
                    })
                })
                .collect();
            lines.extend(longer);
        }
        for rest in &lines {
            let Some(plain) = sandbox::Args::read_plain(rest) else {
                continue;
            };
            taken += 1;
            let mut full = line(&["chock", "sandbox"]);
            full.extend(rest.iter().cloned());
            match Front::try_parse_from(&full).map(|f| f.command) {
                Ok(FrontCommand::Sandbox(by_clap)) => {
                    assert_eq!(plain, by_clap, "{rest:?}");
                }
                other => panic!("{rest:?}: the front read {plain:?}, clap {other:?}"),
            }
        }
        assert!(taken > 100, "only {taken} lines were plain");
    }

    #[test]
    fn the_plain_reader_leaves_clap_every_other_line() {
        for rest in [
            &[][..],
            &["--"],
            &["true"],
            &["--workspace"],
            &["--workspace", "--", "true"],
            &["--workspace", "-w", "--", "true"],
            &["--workspace=", "--", "true"],
            &["--workspace", "a", "--workspace", "b", "--", "true"],
            &["--allow-jit", "--allow-jit", "--", "true"],
            &["--report", "--report", "--", "true"],
            &["--report=yes", "--", "true"],
            &["--work", "/tmp", "--", "true"],
            &["--net", "--", "true"],
            &["--help"],
            &["-h", "--", "true"],
        ] {
            assert_eq!(sandbox::Args::read_plain(&line(rest)), None, "{rest:?}");
        }
    }

    /// build.rs links the static unwinder in place of libgcc_s: panics
    /// still unwind (tokio's tasks and the runner rely on it), and the
    /// program loads no libgcc_s.
    #[test]
    fn panics_unwind_with_the_static_unwinder() {
        let caught = std::panic::catch_unwind(|| panic!("on purpose"));
        assert!(caught.is_err());
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        assert!(!maps.contains("libgcc_s"), "libgcc_s is loaded");
    }

    #[test]
    fn the_full_program_is_found_beside_the_front_or_in_libexec() {
        let root = tempfile::tempdir().unwrap();
        let bin = root.path().join("bin");
        let libexec = root.path().join("libexec/chock");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(&libexec).unwrap();
        let front = bin.join("chock");
        assert_eq!(full_program(&front), None);
        std::fs::write(libexec.join(FULL), "").unwrap();
        assert_eq!(
            full_program(&front),
            Some(bin.join("../libexec/chock").join(FULL))
        );
        std::fs::write(bin.join(FULL), "").unwrap();
        assert_eq!(full_program(&front), Some(bin.join(".").join(FULL)));
    }
}
