//! Turning a [`SandboxSpec`] into the plan the child executes.
//!
//! Everything that allocates happens here, in the caller, before the fork:
//! paths become `CString`s, the new root becomes an ordered list of [`Op`]s,
//! each op carries the words a person reads if it fails. The child
//! (`child.rs`) then only walks the list with raw system calls.
//!
//! The new root is built the way bubblewrap builds it: a tmpfs is mounted on
//! `/tmp` of the private mount namespace and pivoted to `/`, the host's root
//! stays reachable at `/oldroot` while the binds are made (so a workspace
//! under the host's `/tmp` is still reachable), then `/oldroot` is detached
//! and `/` made read-only.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::ffi::{CString, OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use crate::SpecError;
use crate::landlock::{ChildRule, HostPath, HostRules, Masks};
use crate::spec::{SYSTEM_PATHS, SandboxSpec, TmpMode};

/// Where the host's root is reachable while the new root is built.
pub(crate) const OLD_ROOT: &str = "/oldroot";

/// `mount_setattr` attribute bits (linux/mount.h).
pub(crate) const ATTR_RDONLY: u64 = 0x1;
pub(crate) const ATTR_NOSUID: u64 = 0x2;
pub(crate) const ATTR_NODEV: u64 = 0x4;
pub(crate) const ATTR_NOEXEC: u64 = 0x8;

/// One step of building the new root.
#[derive(Debug, Clone)]
pub(crate) enum Op {
    /// `mkdir`, tolerating an existing directory.
    Mkdir {
        path: CString,
        mode: u32,
    },
    /// A file written into the root's tmpfs: the trust store, the fake
    /// resolver's `resolv.conf`.
    Copy {
        path: CString,
        contents: Vec<u8>,
        mode: u32,
    },
    /// An empty file to bind a file onto.
    Touch {
        path: CString,
    },
    Symlink {
        target: CString,
        link: CString,
    },
    /// A recursive bind with attributes set recursively afterwards.
    Bind {
        src: CString,
        dst: CString,
        attrs: u64,
    },
    Tmpfs {
        dst: CString,
        data: CString,
    },
    Proc {
        dst: CString,
    },
    Devpts {
        dst: CString,
    },
    /// Bind a path onto itself read-only, when it exists.
    RemountRo {
        dst: CString,
    },
}

/// One op and the words for it: a template whose `{path}` is the op's
/// path and `{target}` a link's target. Filled in only when a person reads
/// it (a failed step): formatting every step's words up front was most of
/// the plan's instructions.
#[derive(Debug, Clone)]
pub(crate) struct Step {
    pub(crate) op: Op,
    pub(crate) what: &'static str,
}

impl Op {
    /// The path the op acts on (the link, for a symlink).
    fn path(&self) -> &CString {
        match self {
            Op::Mkdir { path, .. } | Op::Copy { path, .. } | Op::Touch { path } => path,
            Op::Symlink { link, .. } => link,
            Op::Bind { dst, .. }
            | Op::Tmpfs { dst, .. }
            | Op::Proc { dst }
            | Op::Devpts { dst }
            | Op::RemountRo { dst } => dst,
        }
    }
}

impl Step {
    /// The words a person reads when this step fails.
    pub(crate) fn describe(&self) -> String {
        let mut out = self
            .what
            .replace("{path}", &self.op.path().to_string_lossy());
        if let Op::Symlink { target, .. } = &self.op {
            out = out.replace("{target}", &target.to_string_lossy());
        }
        out
    }
}

/// What `Sandbox::new` prepares once.
#[derive(Debug)]
pub(crate) struct Layout {
    pub(crate) steps: Vec<Step>,
    /// Host paths landlock covers (bind sources), for either mode.
    pub(crate) host_rules: HostRules,
    /// Rules the child adds after mounting (namespace mode only).
    pub(crate) child_rules: Vec<ChildRule>,
    pub(crate) workspace: PathBuf,
    /// The working directory inside (namespace mode).
    pub(crate) cwd: CString,
    /// The working directory on the host's paths (degraded mode).
    pub(crate) cwd_degraded: CString,
}

pub(crate) fn cstring(path: &Path) -> Result<CString, SpecError> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| SpecError::BadPath {
        path: path.to_path_buf(),
    })
}

fn c(s: &str) -> CString {
    // Only called with literals and paths already checked for NUL.
    CString::new(s.replace('\0', "")).unwrap_or_default()
}

fn old(path: &Path) -> Result<CString, SpecError> {
    let bytes = path.as_os_str().as_bytes();
    let rel = bytes.strip_prefix(b"/").unwrap_or(bytes);
    let mut full = Vec::with_capacity(OLD_ROOT.len() + rel.len() + 2);
    full.extend_from_slice(OLD_ROOT.as_bytes());
    full.push(b'/');
    full.extend_from_slice(rel);
    CString::new(full).map_err(|_| SpecError::BadPath {
        path: path.to_path_buf(),
    })
}

/// Whether `bytes` is an absolute path spelt the one way `components`
/// would rebuild it: no empty, `.` or `..` name and no trailing slash.
/// Most paths are, and their parents are then found by looking for `/`
/// rather than by `Path::components`, which with the allocator was most of
/// the plan's time.
fn is_normal(bytes: &[u8]) -> bool {
    bytes.len() > 1
        && bytes.first() == Some(&b'/')
        && bytes
            .get(1..)
            .unwrap_or_default()
            .split(|b| *b == b'/')
            .all(|name| !name.is_empty() && name != b"." && name != b"..")
}

/// `path` spelt the normal way ([`is_normal`]), borrowed when it already is.
fn normal(path: &Path) -> Cow<'_, Path> {
    if is_normal(path.as_os_str().as_bytes()) {
        Cow::Borrowed(path)
    } else {
        Cow::Owned(path.components().collect())
    }
}

/// The parent directories of a normal path, shortest first (`/a`, `/a/b`
/// for `/a/b/c`); none for `/` or `/a`.
fn parents(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    bytes
        .iter()
        .enumerate()
        .skip(1)
        .filter(|(_, b)| **b == b'/')
        .filter_map(move |(i, _)| bytes.get(..i))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    ReadOnly,
    Writable,
}

/// Where programs look for CA certificates when `SSL_CERT_FILE` is unset.
pub(crate) const CONVENTIONAL_BUNDLE: &str = "/etc/ssl/certs/ca-certificates.crt";

pub(crate) struct Builder {
    steps: Vec<Step>,
    /// Directories already planned, as bytes: `PathBuf`'s ordering walks
    /// components on every comparison.
    made: BTreeSet<OsString>,
}

impl Builder {
    pub(crate) fn push(&mut self, op: Op, what: &'static str) {
        self.steps.push(Step { op, what });
    }

    /// `mkdir -p` of every ancestor of `path`, then `path` itself if `dir`.
    pub(crate) fn mkdirs(&mut self, path: &Path, include_self: bool) -> Result<(), SpecError> {
        let path = normal(path);
        let bytes = path.as_os_str().as_bytes();
        let itself = include_self.then_some(bytes);
        for dir in parents(bytes).chain(itself) {
            let dir = OsStr::from_bytes(dir);
            if dir.as_bytes() == b"/" || self.made.contains(dir) {
                continue;
            }
            self.made.insert(dir.to_owned());
            self.push(
                Op::Mkdir {
                    path: cstring(Path::new(dir))?,
                    mode: 0o755,
                },
                "create mount point {path}",
            );
        }
        Ok(())
    }

    /// Binds `src` (a directory when `is_dir`) at `dst`. Small `/etc` files
    /// are bound like the rest: copying them into the new root's tmpfs was
    /// cheaper only while every bind also took a landlock rule of its own
    /// (docs/performance.md, "Sandbox").
    fn bind(&mut self, src: &Path, is_dir: bool, dst: &Path, mode: Mode) -> Result<(), SpecError> {
        if is_dir {
            self.mkdirs(dst, true)?;
        } else {
            self.mkdirs(dst, false)?;
            self.push(
                Op::Touch {
                    path: cstring(dst)?,
                },
                "create mount point {path}",
            );
        }
        let (attrs, what) = match mode {
            Mode::ReadOnly => (
                ATTR_RDONLY | ATTR_NOSUID | ATTR_NODEV,
                "bind {path} read-only",
            ),
            Mode::Writable => (ATTR_NOSUID | ATTR_NODEV, "bind {path} read-write"),
        };
        self.push(
            Op::Bind {
                src: old(src)?,
                dst: cstring(dst)?,
                attrs,
            },
            what,
        );
        Ok(())
    }
}

/// What a directory entry is, without following it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Dir,
    Link,
    /// A regular file, a device, a socket...
    Other,
}

impl Kind {
    fn of(file_type: std::fs::FileType) -> Self {
        if file_type.is_symlink() {
            Kind::Link
        } else if file_type.is_dir() {
            Kind::Dir
        } else {
            Kind::Other
        }
    }

    /// The kind `lstat` finds at `path`.
    fn lstat(path: &Path) -> std::io::Result<Self> {
        std::fs::symlink_metadata(path).map(|m| Self::of(m.file_type()))
    }
}

/// How many symlinks one path may pass through, as the kernel allows.
const MAX_LINKS: usize = 40;

/// Resolves host paths to their real form (what `std::fs::canonicalize`
/// gives) with as few system calls as the answer needs. `canonicalize`
/// reads every component of every path anew (one `lstat` or `readlink`
/// each, and a `stat` of the whole), and the plan resolves about forty
/// paths that share a handful of parents. Here a directory once found not
/// to be a symlink is remembered, so a path costs one `lstat` for itself
/// and one per parent not seen before; a symlink costs a `readlink`, and
/// `..` after a real directory is its parent.
#[derive(Default)]
struct Resolver {
    /// Directories already known to be real (not symlinks), as bytes.
    plain: BTreeSet<OsString>,
}

impl Resolver {
    /// The real path of `path`, whose own kind (`lstat`) is `kind`, and
    /// whether it is a directory.
    fn real_from(&mut self, path: &Path, kind: Kind) -> std::io::Result<(PathBuf, bool)> {
        let mut path = Cow::Borrowed(path);
        let mut kind = kind;
        for _ in 0..=MAX_LINKS {
            let clean = self.plain_path(&path)?;
            match kind {
                Kind::Dir => {
                    self.plain.insert(clean.as_os_str().to_owned());
                    return Ok((clean, true));
                }
                Kind::Other => return Ok((clean, false)),
                Kind::Link => {
                    let target = std::fs::read_link(&clean)?;
                    let next = match clean.parent() {
                        Some(parent) => parent.join(target),
                        None => target,
                    };
                    kind = Kind::lstat(&next)?;
                    path = Cow::Owned(next);
                }
            }
        }
        Err(std::io::Error::from_raw_os_error(libc::ELOOP))
    }

    /// The real path of `path`, and whether it is a directory.
    fn real(&mut self, path: &Path) -> std::io::Result<(PathBuf, bool)> {
        self.real_from(path, Kind::lstat(path)?)
    }

    /// `path` with its spelling normalised, every parent directory checked
    /// to be real and `..` taken lexically after one; where a parent is a
    /// symlink, `canonicalize` resolves the parents (the last component is
    /// left for the caller, which knows its kind).
    fn plain_path(&mut self, path: &Path) -> std::io::Result<PathBuf> {
        let bytes = path.as_os_str().as_bytes();
        if is_normal(bytes) {
            let mut all_real = true;
            for parent in parents(bytes) {
                if !self.is_real_dir(OsStr::from_bytes(parent))? {
                    all_real = false;
                    break;
                }
            }
            if all_real {
                return Ok(path.to_path_buf());
            }
        }
        let mut comps = path.components();
        if comps.next() != Some(Component::RootDir) {
            return Err(std::io::Error::from_raw_os_error(libc::ENOENT));
        }
        let mut cur = PathBuf::from("/");
        let mut names = comps.peekable();
        while let Some(comp) = names.next() {
            match comp {
                Component::Normal(name) => cur.push(name),
                // Every directory in `cur` is real: its parent is `..`.
                Component::ParentDir => {
                    cur.pop();
                    continue;
                }
                Component::CurDir | Component::RootDir | Component::Prefix(_) => continue,
            }
            if names.peek().is_none() {
                break;
            }
            if !self.is_real_dir(cur.as_os_str())? {
                // A symlinked parent: the C library resolves it, and the
                // rest is checked beneath the real directory.
                let rest: PathBuf = names.collect();
                let real_parent = std::fs::canonicalize(&cur)?;
                return self.plain_path(&real_parent.join(rest));
            }
        }
        Ok(cur)
    }

    /// Whether `dir` is a directory and not a symlink, remembered once
    /// found; an error when it cannot be read.
    fn is_real_dir(&mut self, dir: &OsStr) -> std::io::Result<bool> {
        if self.plain.contains(dir) {
            return Ok(true);
        }
        let real = Kind::lstat(Path::new(dir))? == Kind::Dir;
        if real {
            self.plain.insert(dir.to_owned());
        }
        Ok(real)
    }
}

/// True when `path` lies strictly beneath `root` (both absolute, as bytes).
fn is_under(path: &[u8], root: &[u8]) -> bool {
    path.len() > root.len()
        && path.starts_with(root)
        && (root.ends_with(b"/") || path.get(root.len()) == Some(&b'/'))
}

/// How deep a normal path lies, counted as `components` counts: `/` is
/// 1, `/usr` 2.
fn depth(p: &Path) -> usize {
    1 + p
        .as_os_str()
        .as_bytes()
        .split(|b| *b == b'/')
        .filter(|name| !name.is_empty())
        .count()
}

/// Builds the layout for `spec`. Fails on a missing workspace, a missing
/// closure or writable path, or a path that cannot be a C string.
pub(crate) fn layout(spec: &SandboxSpec, masks: Masks) -> Result<Layout, SpecError> {
    let mut res = Resolver::default();
    let (workspace, ws_dir) = res
        .real(&spec.workspace)
        .ok()
        .filter(|(_, is_dir)| *is_dir)
        .ok_or_else(|| SpecError::WorkspaceMissing {
            path: spec.workspace.clone(),
        })?;

    // (destination, source, mode, whether the source is a directory)
    let mut entries: Vec<(PathBuf, PathBuf, Mode, bool)> = Vec::new();
    let mut symlinks: Vec<(PathBuf, PathBuf)> = Vec::new();
    let mut host_rules = HostRules::default();

    let fake_dns = matches!(
        spec.network,
        crate::NetworkMode::Router { resolver: true, .. }
    );
    for p in &spec.read_only {
        if !p.is_absolute() {
            return Err(SpecError::BadPath { path: p.clone() });
        }
        if fake_dns && p == Path::new(crate::net::RESOLV_CONF) {
            continue;
        }
        let Ok(kind) = Kind::lstat(p) else {
            continue;
        };
        let bytes = p.as_os_str().as_bytes();
        if kind == Kind::Link && SYSTEM_PATHS.iter().any(|s| s.as_bytes() == bytes) {
            if let Ok(target) = std::fs::read_link(p) {
                symlinks.push((p.clone(), target));
            }
            continue;
        }
        let Ok((real, is_dir)) = res.real_from(p, kind) else {
            continue;
        };
        entries.push((normal(p).into_owned(), real, Mode::ReadOnly, is_dir));
    }
    for p in &spec.closure {
        let (real, is_dir) = res.real(p).map_err(|_| SpecError::PathMissing {
            what: "dev-shell closure path",
            path: p.clone(),
        })?;
        entries.push((normal(p).into_owned(), real, Mode::ReadOnly, is_dir));
    }
    for p in &spec.writable {
        let (real, is_dir) = res.real(p).map_err(|_| SpecError::PathMissing {
            what: "writable path",
            path: p.clone(),
        })?;
        entries.push((real.clone(), real, Mode::Writable, is_dir));
    }
    let inside = match &spec.workspace_at {
        Some(at) if at.is_absolute() => normal(at).into_owned(),
        Some(at) => return Err(SpecError::BadPath { path: at.clone() }),
        None => workspace.clone(),
    };
    entries.push((inside.clone(), workspace.clone(), Mode::Writable, ws_dir));
    for bind in &spec.binds {
        if !bind.dst.is_absolute() {
            return Err(SpecError::BadPath {
                path: bind.dst.clone(),
            });
        }
        let (real, is_dir) = res.real(&bind.src).map_err(|_| SpecError::PathMissing {
            what: "bound path",
            path: bind.src.clone(),
        })?;
        let mode = if bind.writable {
            Mode::Writable
        } else {
            Mode::ReadOnly
        };
        entries.push((normal(&bind.dst).into_owned(), real, mode, is_dir));
    }
    if let TmpMode::Host(dir) = &spec.tmp {
        let (real, is_dir) = res.real(dir).map_err(|_| SpecError::PathMissing {
            what: "temp dir",
            path: dir.clone(),
        })?;
        entries.push((PathBuf::from("/tmp"), real, Mode::Writable, is_dir));
    }

    // A read-only bind under a read-only ancestor adds nothing. Every
    // destination is normal: compared as bytes.
    let keep: Vec<bool> = entries
        .iter()
        .map(|(dst, _, mode, _)| {
            let d = dst.as_os_str().as_bytes();
            *mode == Mode::Writable
                || !entries.iter().any(|(r, _, m, _)| {
                    *m == Mode::ReadOnly && is_under(d, r.as_os_str().as_bytes())
                })
        })
        .collect();
    let mut keep = keep.into_iter();
    entries.retain(|_| keep.next().unwrap_or(true));
    entries.sort_by_cached_key(|(dst, _, _, _)| depth(dst));
    entries.dedup_by(|a, b| a.0.as_os_str() == b.0.as_os_str());

    let mut b = Builder {
        steps: Vec::new(),
        made: BTreeSet::new(),
    };
    for (link, target) in &symlinks {
        b.push(
            Op::Symlink {
                target: cstring(target)?,
                link: cstring(link)?,
            },
            "link {path} -> {target}",
        );
    }

    let fresh_tmp = matches!(spec.tmp, TmpMode::Fresh);
    // Whether the new root's /etc holds files written by the plan (the
    // trust store, the fake resolver's resolv.conf).
    let mut etc_written = false;
    let mut tmp_done = false;
    for (dst, src, mode, is_dir) in &entries {
        // /tmp (depth 2 with the root) goes in before anything beneath it.
        if fresh_tmp && !tmp_done && depth(dst) > 2 {
            tmp(&mut b)?;
            tmp_done = true;
        }
        b.bind(src, *is_dir, dst, *mode)?;
        let rule = HostPath {
            path: src.clone(),
            is_dir: *is_dir,
        };
        match mode {
            Mode::ReadOnly if is_under(dst.as_os_str().as_bytes(), b"/etc") => {
                host_rules.etc.push(rule);
            }
            Mode::ReadOnly => host_rules.read.push(rule),
            Mode::Writable => host_rules.write.push(rule),
        }
    }
    if fresh_tmp && !tmp_done {
        tmp(&mut b)?;
    }
    if let Some(bundle) = &spec.trust_store {
        etc_written = true;
        let ssl_bound = entries
            .iter()
            .any(|(dst, _, _, _)| Path::new(CONVENTIONAL_BUNDLE).starts_with(dst));
        crate::net::trust_ops(&mut b, bundle, ssl_bound)?;
    }
    if fake_dns {
        // Under a bound /etc (a caller's choice) the host's file stays.
        let bound = entries
            .iter()
            .any(|(dst, _, _, _)| Path::new(crate::net::RESOLV_CONF).starts_with(dst));
        if !bound {
            etc_written = true;
            crate::net::resolv_conf_ops(&mut b)?;
        }
    }
    dev(&mut b, &mut host_rules, &spec.devices)?;
    proc(&mut b)?;

    let mut child_rules = vec![
        ChildRule {
            path: c("/"),
            access: masks.read_dir,
        },
        ChildRule {
            path: c("/proc"),
            access: masks.read,
        },
        // The device nodes bound into /dev (see `HostRules::devices`); the
        // same rights cover /dev/pts.
        ChildRule {
            path: c("/dev"),
            access: masks.dev,
        },
        ChildRule {
            path: c("/dev/shm"),
            access: masks.all,
        },
    ];
    if etc_written || !host_rules.etc.is_empty() {
        // The binds beneath /etc (`HostRules::etc`) and any file written
        // there live under the root's tmpfs /etc: one rule covers them.
        child_rules.push(ChildRule {
            path: c("/etc"),
            access: masks.read,
        });
    }
    if fresh_tmp {
        child_rules.push(ChildRule {
            path: c("/tmp"),
            access: masks.all,
        });
    }

    let cwd_in = |root: &Path| match &spec.cwd {
        Some(p) if p.is_absolute() => cstring(p),
        Some(p) => cstring(&root.join(p)),
        None => cstring(root),
    };
    let cwd = cwd_in(&inside)?;
    let cwd_degraded = cwd_in(&workspace)?;
    Ok(Layout {
        steps: b.steps,
        host_rules,
        child_rules,
        workspace,
        cwd,
        cwd_degraded,
    })
}

fn tmp(b: &mut Builder) -> Result<(), SpecError> {
    b.mkdirs(Path::new("/tmp"), true)?;
    b.push(
        Op::Tmpfs {
            dst: c("/tmp"),
            data: c("mode=1777"),
        },
        "mount a private /tmp",
    );
    Ok(())
}

/// A minimal /dev: the six character devices bound from the host, the
/// devices the spec passes in, a fresh devpts instance, /dev/shm, and the
/// conventional links.
fn dev(
    b: &mut Builder,
    host_rules: &mut HostRules,
    devices: &[crate::DeviceNode],
) -> Result<(), SpecError> {
    b.mkdirs(Path::new("/dev"), true)?;
    b.push(
        Op::Tmpfs {
            dst: c("/dev"),
            data: c("mode=0755"),
        },
        "mount /dev",
    );
    for name in ["null", "zero", "full", "random", "urandom", "tty"] {
        let path = PathBuf::from("/dev").join(name);
        if !path.exists() {
            continue;
        }
        b.push(
            Op::Touch {
                path: cstring(&path)?,
            },
            "create {path}",
        );
        b.push(
            Op::Bind {
                src: old(&path)?,
                dst: cstring(&path)?,
                attrs: ATTR_NOSUID | ATTR_NOEXEC,
            },
            "bind device {path}",
        );
        host_rules.devices.push(HostPath {
            path,
            is_dir: false,
        });
    }
    // A passed-in node lands beneath /dev alone (not in /dev/pts or
    // /dev/shm, which are made below), on a file of its own; landlock's
    // /dev rule then covers it and the tmpfs holds nothing else.
    for node in devices {
        let at = normal(&node.at);
        let beneath = at
            .strip_prefix("/dev")
            .ok()
            .and_then(|rest| rest.components().next())
            .is_some_and(|first| !matches!(first.as_os_str().to_str(), Some("pts" | "shm")));
        if !beneath {
            return Err(SpecError::DeviceAt {
                path: node.at.clone(),
            });
        }
        if !node.host.exists() {
            return Err(SpecError::PathMissing {
                what: "device node",
                path: node.host.clone(),
            });
        }
        b.mkdirs(&at, false)?;
        b.push(
            Op::Touch {
                path: cstring(&at)?,
            },
            "create {path}",
        );
        b.push(
            Op::Bind {
                src: old(&node.host)?,
                dst: cstring(&at)?,
                attrs: ATTR_NOSUID | ATTR_NOEXEC,
            },
            "bind device {path}",
        );
        host_rules.devices.push(HostPath {
            path: node.host.clone(),
            is_dir: false,
        });
    }
    b.push(
        Op::Mkdir {
            path: c("/dev/pts"),
            mode: 0o755,
        },
        "create /dev/pts",
    );
    b.push(
        Op::Devpts { dst: c("/dev/pts") },
        "mount a fresh devpts on /dev/pts",
    );
    b.push(
        Op::Mkdir {
            path: c("/dev/shm"),
            mode: 0o1777,
        },
        "create /dev/shm",
    );
    for (link, target) in [
        ("/dev/ptmx", "pts/ptmx"),
        ("/dev/fd", "/proc/self/fd"),
        ("/dev/stdin", "/proc/self/fd/0"),
        ("/dev/stdout", "/proc/self/fd/1"),
        ("/dev/stderr", "/proc/self/fd/2"),
    ] {
        b.push(
            Op::Symlink {
                target: c(target),
                link: c(link),
            },
            "link {path}",
        );
    }
    Ok(())
}

/// /proc of the new pid namespace, with the kernel-tuning parts read-only.
fn proc(b: &mut Builder) -> Result<(), SpecError> {
    b.mkdirs(Path::new("/proc"), true)?;
    b.push(
        Op::Proc { dst: c("/proc") },
        "mount /proc of the new pid namespace",
    );
    for p in ["/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus"] {
        b.push(Op::RemountRo { dst: c(p) }, "make {path} read-only");
    }
    Ok(())
}

/// The candidates `execve` tries for `program`, searching `path_var` the way
/// `execvp` does when the name has no slash.
pub(crate) fn exec_candidates(program: &OsStr, path_var: Option<&OsStr>) -> Vec<CString> {
    let bytes = program.as_bytes();
    if bytes.contains(&b'/') {
        return CString::new(bytes).into_iter().collect();
    }
    let path = path_var.map_or(&b"/usr/local/bin:/usr/bin:/bin"[..], OsStrExt::as_bytes);
    path.split(|b| *b == b':')
        .filter(|d| !d.is_empty())
        .filter_map(|dir| {
            let mut full = dir.to_vec();
            full.push(b'/');
            full.extend_from_slice(bytes);
            CString::new(full).ok()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exec_candidates_search_path_only_without_a_slash() {
        let c = exec_candidates(OsStr::new("ls"), Some(OsStr::new("/a::/b")));
        assert_eq!(
            c,
            vec![
                CString::new("/a/ls").unwrap(),
                CString::new("/b/ls").unwrap()
            ]
        );
        let c = exec_candidates(OsStr::new("./x"), Some(OsStr::new("/a")));
        assert_eq!(c, vec![CString::new("./x").unwrap()]);
    }

    #[test]
    fn layout_binds_the_workspace_after_the_private_tmp_beneath_it() {
        let ws = tempfile::tempdir().unwrap();
        let spec = SandboxSpec::new(ws.path());
        let l = layout(&spec, crate::landlock::masks(7)).unwrap();
        let whats: Vec<String> = l.steps.iter().map(Step::describe).collect();
        let tmp = whats
            .iter()
            .position(|w| w == "mount a private /tmp")
            .unwrap();
        let real = std::fs::canonicalize(ws.path()).unwrap();
        let wsb = whats
            .iter()
            .position(|w| *w == format!("bind {} read-write", real.display()))
            .unwrap();
        assert!(tmp < wsb, "{whats:#?}");
        assert!(
            whats.iter().any(|w| w == "bind /usr read-only"),
            "{whats:#?}"
        );
    }

    #[test]
    fn a_workspace_placed_elsewhere_is_bound_there_and_entered_there_only_with_namespaces() {
        let ws = tempfile::tempdir().unwrap();
        let mut spec = SandboxSpec::new(ws.path());
        spec.workspace_at = Some("/workspace".into());
        let l = layout(&spec, crate::landlock::masks(7)).unwrap();
        let whats: Vec<String> = l.steps.iter().map(Step::describe).collect();
        assert!(
            whats.iter().any(|w| w == "bind /workspace read-write"),
            "{whats:#?}"
        );
        let real = std::fs::canonicalize(ws.path()).unwrap();
        assert_eq!(l.cwd.to_str().unwrap(), "/workspace");
        assert_eq!(Path::new(l.cwd_degraded.to_str().unwrap()), real);
        spec.workspace_at = Some("workspace".into());
        assert!(matches!(
            layout(&spec, crate::landlock::masks(7)),
            Err(SpecError::BadPath { .. })
        ));
    }

    #[test]
    fn the_resolver_agrees_with_canonicalize() {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(base.join("real/sub")).unwrap();
        std::fs::write(base.join("real/sub/f"), b"x").unwrap();
        std::os::unix::fs::symlink(base.join("real"), base.join("link")).unwrap();
        std::os::unix::fs::symlink("sub/f", base.join("real/flink")).unwrap();
        std::os::unix::fs::symlink("../../real/sub/f", base.join("real/sub/up")).unwrap();
        std::os::unix::fs::symlink("flink", base.join("real/chain")).unwrap();
        std::os::unix::fs::symlink("../../link/sub", base.join("real/sub/uplink")).unwrap();
        std::os::unix::fs::symlink(base.join("real/sub"), base.join("deep")).unwrap();
        std::os::unix::fs::symlink("loop2", base.join("loop1")).unwrap();
        std::os::unix::fs::symlink("loop1", base.join("loop2")).unwrap();
        for rel in [
            "real/sub/f",
            "link/sub/f",
            "real/flink",
            "link/flink",
            "real/sub/../sub/f",
            "real//sub/./f",
            "real/sub",
            "real/sub/up",
            "link/sub/up",
            "real/chain",
            "real/sub/uplink",
            "real/sub/uplink/f",
            "link/sub/uplink/up",
            "real/sub/..",
            "link/..",
            "deep/..",
            "deep/../sub/f",
        ] {
            let p = base.join(rel);
            let mut res = Resolver::default();
            let (real, is_dir) = res.real(&p).unwrap_or_else(|e| panic!("{rel}: {e}"));
            let want = std::fs::canonicalize(&p).unwrap();
            assert_eq!(real, want, "{rel}");
            assert_eq!(is_dir, want.is_dir(), "{rel}");
        }
        let mut res = Resolver::default();
        assert!(res.real(&base.join("real/missing")).is_err());
        assert!(res.real(&base.join("link/missing")).is_err());
        assert!(res.real(&base.join("real/sub/f/x")).is_err());
        let looped = res.real(&base.join("loop1")).unwrap_err();
        assert_eq!(looped.raw_os_error(), Some(libc::ELOOP));
    }

    #[test]
    fn a_step_is_described_only_when_asked() {
        let step = Step {
            op: Op::Symlink {
                target: c("/proc/self/fd"),
                link: c("/dev/fd"),
            },
            what: "link {path} -> {target}",
        };
        assert_eq!(step.describe(), "link /dev/fd -> /proc/self/fd");
    }

    #[test]
    fn normal_paths_are_read_by_their_slashes() {
        for (path, is) in [
            ("/usr", true),
            ("/etc/ssl/certs", true),
            ("/", false),
            ("usr", false),
            ("/etc/ssl/", false),
            ("/etc//ssl", false),
            ("/etc/./ssl", false),
            ("/etc/../ssl", false),
        ] {
            assert_eq!(is_normal(path.as_bytes()), is, "{path}");
            let n = normal(Path::new(path));
            assert_eq!(n.as_ref(), Path::new(path), "{path}");
            let rebuilt: PathBuf = Path::new(path).components().collect();
            assert_eq!(n.as_os_str(), rebuilt.as_os_str(), "{path}");
            if path.starts_with('/') {
                assert_eq!(depth(&n), Path::new(path).components().count(), "{path}");
            }
        }
        let found: Vec<&[u8]> = parents(b"/a/b/c").collect();
        assert_eq!(found, [&b"/a"[..], b"/a/b"]);
        assert_eq!(parents(b"/a").count(), 0);
    }

    #[test]
    fn is_under_needs_a_separator() {
        assert!(is_under(b"/usr/lib", b"/usr"));
        assert!(!is_under(b"/usrx", b"/usr"));
        assert!(!is_under(b"/usr", b"/usr"));
        assert!(is_under(b"/a", b"/"));
    }

    #[test]
    fn a_missing_workspace_is_named() {
        let spec = SandboxSpec::new("/nonexistent/chock-ws");
        let err = layout(&spec, crate::landlock::masks(7)).unwrap_err();
        assert!(err.to_string().contains("/nonexistent/chock-ws"), "{err}");
    }
}
