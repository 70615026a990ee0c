//! The `SandboxSpec`: everything a caller decides about one sandbox, as plain
//! data. It says *what* a command may see (workspace, read-only and writable
//! paths, the dev-shell closure, environment, network, jit) and nothing about
//! *how*; `Sandbox::new` turns it into a prepared plan once, so that each
//! spawn repeats as little work as possible.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// What the sandbox's network namespace is given.
///
/// `None`: the namespace has a loopback interface and no way out. `Router`:
/// the same namespace plus a listener on its `127.0.0.1:<port>` whose
/// connections the host-side proxy decides one by one (see `net/`), and a
/// helper that can open sockets there for published ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum NetworkMode {
    /// Loopback only, inside a fresh network namespace.
    #[default]
    None,
    /// Loopback plus the router's listener on `127.0.0.1:<port>`; the
    /// spawned child hands back a [`crate::net::RouterLink`].
    Router {
        /// The port the in-namespace listener binds.
        port: u16,
        /// The fake-address resolver as well: a UDP socket on the
        /// namespace's `127.0.0.53:53`, handed out beside the listener, and
        /// `/etc/resolv.conf` pointing at it (see `net/fake.rs`).
        resolver: bool,
    },
}

/// What the command's `/tmp` is.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum TmpMode {
    /// A fresh tmpfs that vanishes with the sandbox.
    #[default]
    Fresh,
    /// A host directory bound read-write at `/tmp`, so files outlive one
    /// command (a session's temp dir).
    Host(PathBuf),
}

/// Where one of the command's standard streams goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Stdio {
    /// The caller's own descriptor.
    #[default]
    Inherit,
    /// `/dev/null`.
    Null,
    /// A pipe whose other end [`crate::SandboxChild`] hands back.
    Piped,
}

/// Everything one sandbox is made of.
#[derive(Debug, Clone)]
pub struct SandboxSpec {
    /// The project directory, bound read-write at the same path unless
    /// `workspace_at` names another.
    pub workspace: PathBuf,
    /// Where the workspace appears inside (a neutral path such as
    /// `/workspace`, so that a command's paths and `/proc/self/mountinfo`
    /// name no host directory); `None` binds it at its host path. Without
    /// namespaces (degraded mode) the command sees the host path whatever
    /// this says.
    pub workspace_at: Option<PathBuf>,
    /// Host paths bound read-only at the same path (system directories, parts
    /// of `/etc`). Paths that do not exist on this host are skipped.
    pub read_only: Vec<PathBuf>,
    /// Extra host paths bound read-write at the same path.
    pub writable: Vec<PathBuf>,
    /// Host paths bound at another path inside: what a caller places at a
    /// path of its choosing (a session's private git directory, a file
    /// over the workspace's `.git`). A missing source is an error.
    pub binds: Vec<Bind>,
    /// Device nodes passed in (a USB device's `/dev/bus/usb/...`, a serial
    /// adapter's `/dev/ttyUSB0`), each bound into the sandbox's `/dev`
    /// beside the six every command gets, and nothing else of the host's
    /// `/dev`. A missing node is an error: the caller found it a moment ago.
    pub devices: Vec<DeviceNode>,
    /// The session's dev-shell closure (store paths), bound read-only. Unlike
    /// `read_only`, a missing path here is an error: the session asked for it.
    pub closure: Vec<PathBuf>,
    /// Names of variables passed through from the caller's environment.
    pub env_allow: Vec<String>,
    /// Variables set explicitly; they win over `env_allow`.
    pub env: Vec<(String, String)>,
    /// The network the command gets.
    pub network: NetworkMode,
    /// Whether a page may be writable and executable at once (`sandbox.jit`).
    pub jit: bool,
    /// Working directory inside the sandbox; the workspace when `None`.
    pub cwd: Option<PathBuf>,
    /// What `/tmp` is.
    pub tmp: TmpMode,
    /// A host CA bundle copied into the sandbox at
    /// [`crate::net::TRUST_STORE_PATH`] (set by `with_router`).
    pub trust_store: Option<PathBuf>,
    /// Standard input.
    pub stdin: Stdio,
    /// Standard output.
    pub stdout: Stdio,
    /// Standard error.
    pub stderr: Stdio,
}

/// One host path bound at a path of the caller's choosing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bind {
    /// The host path (a directory or a file), resolved through symlinks.
    pub src: PathBuf,
    /// Where it appears inside: absolute, taken as written.
    pub dst: PathBuf,
    /// Whether the command may write through it.
    pub writable: bool,
}

/// One host device node and where it appears inside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceNode {
    /// The node on the host (a character device).
    pub host: PathBuf,
    /// Its path inside, beneath `/dev` (`/dev/ttyUSB0`).
    pub at: PathBuf,
}

/// System directories every command needs, bound read-only when present.
pub const SYSTEM_PATHS: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/nix/store",
    "/run/current-system/sw",
    "/opt",
];

/// The parts of `/etc` programs need: users and groups for `id` and `ls -l`,
/// name resolution, the dynamic linker's cache, certificates, time zone, and
/// Debian's alternatives (which `/usr/bin` links through). Secrets such as
/// `shadow`, `sudoers` and ssh host keys are deliberately absent.
pub const ETC_PATHS: &[&str] = &[
    "/etc/passwd",
    "/etc/group",
    "/etc/hosts",
    "/etc/host.conf",
    "/etc/resolv.conf",
    "/etc/nsswitch.conf",
    "/etc/gai.conf",
    "/etc/protocols",
    "/etc/services",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/ca-certificates.conf",
    "/etc/pki",
    "/etc/alternatives",
    "/etc/os-release",
    "/etc/debian_version",
    "/etc/mime.types",
    "/etc/bash.bashrc",
    "/etc/profile",
    "/etc/profile.d",
    "/etc/inputrc",
    "/etc/terminfo",
    "/etc/gitconfig",
    "/etc/java-17-openjdk",
    "/etc/python3",
    "/etc/python3.11",
    "/etc/perl",
    "/etc/static",
];

/// Variables passed through by default: locale, terminal and time zone, which
/// change how output looks but carry no secrets.
pub const ENV_ALLOW: &[&str] = &[
    "PATH",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_COLLATE",
    "LC_MESSAGES",
    "LC_NUMERIC",
    "LC_TIME",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "TZ",
    "USER",
    "LOGNAME",
];

impl SandboxSpec {
    /// The spec `run_command` uses: the system paths and `/etc` parts above,
    /// the default environment allowlist with `HOME=/tmp`, no network, no jit,
    /// a fresh `/tmp`, inherited stdio.
    pub fn new(workspace: impl Into<PathBuf>) -> Self {
        Self {
            workspace: workspace.into(),
            workspace_at: None,
            read_only: SYSTEM_PATHS
                .iter()
                .chain(ETC_PATHS)
                .map(PathBuf::from)
                .collect(),
            writable: Vec::new(),
            binds: Vec::new(),
            devices: Vec::new(),
            closure: Vec::new(),
            env_allow: ENV_ALLOW.iter().map(|s| (*s).to_owned()).collect(),
            env: vec![("HOME".to_owned(), "/tmp".to_owned())],
            network: NetworkMode::None,
            jit: false,
            cwd: None,
            tmp: TmpMode::Fresh,
            trust_store: None,
            stdin: Stdio::Inherit,
            stdout: Stdio::Inherit,
            stderr: Stdio::Inherit,
        }
    }

    /// Adds a read-only path (builder style).
    #[must_use]
    pub fn read_only(mut self, path: impl AsRef<Path>) -> Self {
        self.read_only.push(path.as_ref().to_path_buf());
        self
    }

    /// Sets one environment variable (builder style).
    #[must_use]
    pub fn env(mut self, key: &str, value: &str) -> Self {
        self.env.retain(|(k, _)| k != key);
        self.env.push((key.to_owned(), value.to_owned()));
        self
    }

    /// The environment the command starts with, from `vars` (the caller's).
    pub(crate) fn environment(
        &self,
        vars: impl Iterator<Item = (OsString, OsString)>,
    ) -> Vec<(OsString, OsString)> {
        let mut out: Vec<(OsString, OsString)> = vars
            .filter(|(k, _)| {
                self.env_allow
                    .iter()
                    .any(|a| k.to_str() == Some(a.as_str()))
                    && !self.env.iter().any(|(e, _)| k.to_str() == Some(e.as_str()))
            })
            .collect();
        out.extend(self.env.iter().map(|(k, v)| (k.into(), v.into())));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_keeps_only_the_allowlist_and_explicit_values_win() {
        let spec = SandboxSpec::new("/w").env("TERM", "dumb");
        let host = vec![
            ("PATH".into(), "/usr/bin".into()),
            ("AWS_SECRET_ACCESS_KEY".into(), "x".into()),
            ("TERM".into(), "xterm".into()),
        ];
        let env = spec.environment(host.into_iter());
        let keys: Vec<_> = env
            .iter()
            .map(|(k, v)| format!("{}={}", k.display(), v.display()))
            .collect();
        assert_eq!(keys, vec!["PATH=/usr/bin", "HOME=/tmp", "TERM=dumb"]);
    }
}
