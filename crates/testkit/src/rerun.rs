//! A suite run again as [`OTHER_USER`]: run as root, a test copies its own
//! test binary (and whatever else it needs) into a directory that user can
//! read and reruns part of itself there with `runuser`, so the same
//! assertions hold for an unprivileged person. Run unprivileged, the suite
//! already is that half.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::other_user::OTHER_USER;

/// Why a rerun does not happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoRerun {
    /// This run is not root: it already is the unprivileged half.
    Unprivileged,
    /// The user does not exist (outside CI, which always creates it).
    NoUser,
}

impl std::fmt::Display for NoRerun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoRerun::Unprivileged => {
                write!(
                    f,
                    "running unprivileged already: this run is the unprivileged half"
                )
            }
            NoRerun::NoUser => write!(
                f,
                "skipped: user {OTHER_USER} does not exist (useradd --system {OTHER_USER}); .ci/run creates it"
            ),
        }
    }
}

/// A directory [`OTHER_USER`] can read, holding a copy of the running test
/// binary (`suite`) and what [`Rerun::copy`] adds.
#[derive(Debug)]
pub struct Rerun {
    dir: tempfile::TempDir,
}

impl Rerun {
    /// The directory with the test binary in it, or why there is no rerun.
    /// Panics in CI (`CI` set) when the user is missing.
    pub fn prepare() -> Result<Rerun, NoRerun> {
        let uid = Command::new("id").arg("-u").output().ok();
        let root = uid.is_some_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0");
        if !root {
            return Err(NoRerun::Unprivileged);
        }
        let exists = Command::new("id")
            .args(["-u", OTHER_USER])
            .output()
            .is_ok_and(|out| out.status.success());
        if !exists {
            assert!(
                std::env::var_os("CI").is_none(),
                "user {OTHER_USER} is missing: .ci/run creates it"
            );
            return Err(NoRerun::NoUser);
        }
        let dir = tempfile::tempdir().unwrap_or_else(|err| panic!("cannot make a temp dir: {err}"));
        set_mode(dir.path(), 0o755);
        let rerun = Rerun { dir };
        let exe = std::env::current_exe().unwrap_or_else(|err| panic!("no test binary: {err}"));
        rerun.copy(&exe, "suite", 0o755);
        Ok(rerun)
    }

    /// Copies `from` into the directory as `name` with `mode`; its path.
    pub fn copy(&self, from: &Path, name: &str, mode: u32) -> PathBuf {
        let to = self.dir.path().join(name);
        std::fs::copy(from, &to).unwrap_or_else(|err| {
            panic!("cannot copy {} to {}: {err}", from.display(), to.display())
        });
        set_mode(&to, mode);
        to
    }

    /// A home directory of the user's own inside the directory.
    pub fn home(&self) -> PathBuf {
        let home = self.dir.path().join("home");
        std::fs::create_dir_all(&home)
            .unwrap_or_else(|err| panic!("cannot make {}: {err}", home.display()));
        crate::stdout_of(
            Command::new("chown").arg(OTHER_USER).arg(&home),
            "chown of the rerun's home",
        );
        home
    }

    /// Reruns the tests `args` select (a filter and harness options) as the
    /// user, from `/tmp`, with `env` set; panics with the output when they
    /// fail, and returns how many passed (and the output, to print).
    pub fn run(&self, env: &[(&str, String)], args: &[&str]) -> (usize, String) {
        let mut cmd = Command::new("runuser");
        cmd.args(["-u", OTHER_USER, "--", "env", "TMPDIR=/tmp"]);
        for (key, value) in env {
            cmd.arg(format!("{key}={value}"));
        }
        let out = cmd
            .arg(self.dir.path().join("suite"))
            .args(args)
            .current_dir("/tmp")
            .output()
            .unwrap_or_else(|err| panic!("cannot run runuser: {err}"));
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let shown = format!("{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
        assert!(
            out.status.success(),
            "the rerun as {OTHER_USER} failed:\n{shown}"
        );
        let passed = stdout
            .lines()
            .find_map(|l| {
                l.strip_prefix("test result: ok. ")
                    .and_then(|r| r.split(' ').next())
                    .and_then(|n| n.parse().ok())
            })
            .unwrap_or(0);
        (passed, shown)
    }
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .unwrap_or_else(|err| panic!("cannot chmod {}: {err}", path.display()));
}
