//! Shared fixtures: a temp tree with a workspace (holding a copy of the
//! probe), a directory outside it, a read-only bound directory and a fake
//! home with an ssh key; and `inside`/`outside`, which run the same probe in
//! a sandbox and as a plain child.

mod degraded;
mod devices;
mod escape;
mod net;
mod spawn;
mod users;

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use chock_sandbox::{Sandbox, SandboxSpec, Stdio};

/// What a probe run returned: `Ok(detail)` or `Err(errno)`.
pub(crate) type Res = Result<String, i32>;

pub(crate) fn is_root() -> bool {
    unsafe { libc::geteuid() == 0 }
}

/// The probe binary: `CHOCK_SANDBOX_PROBE` when the suite was copied for
/// another user, else the one cargo built.
pub(crate) fn probe_bin() -> PathBuf {
    std::env::var_os("CHOCK_SANDBOX_PROBE").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_chock-sandbox-probe")),
        PathBuf::from,
    )
}

pub(crate) struct Fx {
    _root: tempfile::TempDir,
    pub(crate) ws: PathBuf,
    pub(crate) outside: PathBuf,
    pub(crate) ro: PathBuf,
    pub(crate) home: PathBuf,
    pub(crate) probe: PathBuf,
}

impl Fx {
    pub(crate) fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).unwrap();
        let ws = root.join("ws");
        let outside = root.join("outside");
        let ro = root.join("ro");
        let home = root.join("home");
        for d in [&ws, &outside, &ro, &home.join(".ssh")] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(ws.join("file.txt"), "workspace").unwrap();
        std::fs::write(outside.join("secret.txt"), "secret").unwrap();
        std::fs::write(ro.join("file.txt"), "read-only").unwrap();
        std::fs::write(
            home.join(".ssh/id_ed25519"),
            "-----BEGIN OPENSSH PRIVATE KEY-----",
        )
        .unwrap();
        let probe = ws.join("chock-sandbox-probe");
        std::fs::copy(probe_bin(), &probe).unwrap();
        std::fs::set_permissions(&probe, std::fs::Permissions::from_mode(0o755)).unwrap();
        Self {
            _root: tmp,
            ws,
            outside,
            ro,
            home,
            probe,
        }
    }

    pub(crate) fn spec(&self) -> SandboxSpec {
        let mut spec = SandboxSpec::new(&self.ws).read_only(&self.ro);
        spec.stdout = Stdio::Piped;
        spec.stderr = Stdio::Null;
        spec.stdin = Stdio::Null;
        spec
    }

    pub(crate) fn sandbox(&self) -> Sandbox {
        Sandbox::new(self.spec()).unwrap()
    }

    /// Runs the probe inside a sandbox built from [`Fx::spec`].
    pub(crate) fn inside(&self, args: &[&str]) -> Res {
        self.inside_of(&self.sandbox(), args)
    }

    pub(crate) fn inside_of(&self, sandbox: &Sandbox, args: &[&str]) -> Res {
        let mut argv = vec![self.probe.to_str().unwrap()];
        argv.extend_from_slice(args);
        let mut child = retry_busy(|| match sandbox.spawn(&argv) {
            Err(chock_sandbox::SpawnError::NotExecutable { error: source, .. })
                if source.raw_os_error() == Some(libc::ETXTBSY) =>
            {
                None
            }
            other => Some(other.unwrap()),
        });
        let mut out = String::new();
        std::fs::File::from(child.stdout.take().unwrap())
            .read_to_string(&mut out)
            .unwrap();
        let status = child.wait().unwrap();
        parse(&out, &format!("inside {args:?} ({status})"))
    }

    /// Runs the same probe as a plain child: the positive control.
    pub(crate) fn outside(&self, args: &[&str]) -> Res {
        let out = retry_busy(|| match Command::new(&self.probe).args(args).output() {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) => None,
            other => Some(other.unwrap()),
        });
        parse(
            &String::from_utf8_lossy(&out.stdout),
            &format!("outside {args:?}"),
        )
    }

    pub(crate) fn p(&self, path: &Path) -> String {
        path.to_str().unwrap().to_owned()
    }
}

/// Retries `f` while it answers `None`: a test thread copying a probe while
/// another forks leaves a writable descriptor in that child for a moment,
/// and exec of the copy meets ETXTBSY until the child lets go.
pub(crate) fn retry_busy<T>(mut f: impl FnMut() -> Option<T>) -> T {
    let end = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < end, "the probe stayed busy (ETXTBSY)");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn parse(out: &str, what: &str) -> Res {
    let line = out.lines().last().unwrap_or_default();
    if line == "ok" {
        return Ok(String::new());
    }
    if let Some(d) = line.strip_prefix("ok ") {
        return Ok(d.to_owned());
    }
    if let Some(rest) = line.strip_prefix("err ") {
        return Err(rest.split(' ').next().unwrap().parse().unwrap());
    }
    panic!("{what}: unexpected probe output {out:?}");
}

/// Polls `f` until it is true or `deadline` passes.
pub(crate) fn wait_for(what: &str, deadline: Duration, mut f: impl FnMut() -> bool) {
    chock_testkit::wait_for(deadline, what, || f().then_some(()));
}

/// Host pids whose command line holds `marker`.
pub(crate) fn pids_with(marker: &str) -> Vec<i32> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        if cmd.split(|b| *b == 0).any(|a| a == marker.as_bytes()) {
            // A zombie keeps its cmdline empty; this one is alive.
            found.push(pid);
        }
    }
    found
}

pub(crate) fn marker(tag: &str) -> String {
    format!(
        "chock-marker-{tag}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    )
}
