//! Landlock, the second wall: read-only where the mounts are read-only,
//! read-write on the workspace, `/tmp` and the writable paths.
//!
//! The ruleset is created in the caller for every spawn (a handful of
//! syscalls) with the `landlock` crate, with rules on host inodes: a bind
//! mount shares its source's inode, so a rule on the host's `/usr` holds for
//! the sandbox's `/usr`. Mounts made fresh inside the child (`/proc`, the
//! tmpfs `/tmp`, `/dev/pts`, `/dev/shm`) have no inode before the fork, so the
//! child adds those rules itself with raw `landlock_add_rule` calls on the
//! same descriptor, then calls `landlock_restrict_self`. A ruleset per spawn
//! means the child may add rules without touching another spawn's.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::OnceLock;

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, Ruleset, RulesetAttr,
    Scope,
};

use crate::report::LandlockState;

/// The ABI this crate asks for; a kernel with less is "partial".
const TARGET: u32 = 7;

/// The kernel's landlock ABI, 0 when unavailable. Asked once per process.
pub(crate) fn kernel_abi() -> u32 {
    static ABI_VERSION: OnceLock<u32> = OnceLock::new();
    *ABI_VERSION.get_or_init(|| {
        // SAFETY: LANDLOCK_CREATE_RULESET_VERSION with a null attr only asks.
        let v = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<u8>(),
                0usize,
                1u32,
            )
        };
        u32::try_from(v).unwrap_or(0)
    })
}

fn abi_enum(v: u32) -> ABI {
    match v.min(TARGET) {
        0 => ABI::Unsupported,
        1 => ABI::V1,
        2 => ABI::V2,
        3 => ABI::V3,
        4 => ABI::V4,
        5 => ABI::V5,
        6 => ABI::V6,
        _ => ABI::V7,
    }
}

/// What landlock state a spawn will get, from the kernel ABI (or forced off).
pub(crate) fn state(forced_off: bool) -> LandlockState {
    let abi = if forced_off { 0 } else { kernel_abi() };
    match abi {
        0 => LandlockState::Unavailable,
        a if a >= TARGET => LandlockState::Full { abi: a },
        a => LandlockState::Partial {
            abi: a,
            missing: missing_for(a),
        },
    }
}

fn missing_for(abi: u32) -> &'static str {
    match abi {
        1 => "no refer (cross-directory link/rename), truncate, TCP, device ioctl or scope rules",
        2 => "no truncate, TCP, device ioctl or scope rules",
        3 => "no TCP, device ioctl or scope rules",
        4 => "no device ioctl or scope rules",
        5 => "no abstract-socket or signal scoping",
        _ => "no audit logging control",
    }
}

/// Access masks the child uses for the rules it adds itself.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Masks {
    pub(crate) all: u64,
    pub(crate) read: u64,
    pub(crate) read_dir: u64,
    pub(crate) dev: u64,
}

pub(crate) fn masks(abi: u32) -> Masks {
    let abi = abi_enum(abi);
    let all = AccessFs::from_all(abi);
    let read = AccessFs::from_read(abi);
    let file_rw =
        (AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev) & all;
    Masks {
        all: all.bits(),
        read: read.bits(),
        read_dir: (BitFlags::from(AccessFs::ReadDir)).bits(),
        dev: (file_rw | AccessFs::ReadDir).bits(),
    }
}

/// A rule the child adds after its own mounts: a path inside the new root.
#[derive(Debug, Clone)]
pub(crate) struct ChildRule {
    pub(crate) path: CString,
    pub(crate) access: u64,
}

/// A host path a rule covers, and whether it is a directory: rights that
/// only make sense on a directory are left off a file's rule (the kernel
/// refuses them), and knowing it from the plan spares a `stat` per rule.
#[derive(Debug, Clone)]
pub(crate) struct HostPath {
    pub(crate) path: PathBuf,
    pub(crate) is_dir: bool,
}

/// The host-side paths a ruleset covers.
#[derive(Debug, Clone, Default)]
pub(crate) struct HostRules {
    pub(crate) read: Vec<HostPath>,
    pub(crate) write: Vec<HostPath>,
    /// Read-only binds beneath the new root's `/etc`, and the device nodes
    /// bound into its `/dev`. With namespaces, one rule on each of those
    /// directories of the new root (a [`ChildRule`]) covers them: landlock
    /// walks a path up across mount points, so a rule on `/etc` holds for
    /// every bind mounted beneath it, and a rule per bind would only repeat
    /// it (three system calls each). Without namespaces there is no new
    /// root, and these host rules are what grants them.
    pub(crate) etc: Vec<HostPath>,
    pub(crate) devices: Vec<HostPath>,
}

/// Adds one path-beneath rule with raw calls: `O_PATH` open, add, close.
/// A path that cannot be opened (gone since the plan was made) gets no
/// rule, so it stays denied.
fn add_path_rule(ruleset: &OwnedFd, hp: &HostPath, access: u64, file: u64) -> Result<(), String> {
    let Ok(c) = CString::new(hp.path.as_os_str().as_bytes()) else {
        return Ok(());
    };
    // SAFETY: open of a C string we own.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    if fd < 0 {
        return Ok(());
    }
    // SAFETY: a fresh descriptor we now own.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let attr = PathBeneathAttr {
        allowed_access: if hp.is_dir { access } else { access & file },
        parent_fd: fd.as_raw_fd(),
    };
    // SAFETY: landlock_add_rule with a valid struct for rule type 1
    // (LANDLOCK_RULE_PATH_BENEATH).
    let rc = unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset.as_raw_fd(),
            1u32,
            &raw const attr,
            0u32,
        )
    };
    if rc < 0 {
        return Err(format!(
            "adding the landlock rule for {} failed: {}",
            hp.path.display(),
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// `struct landlock_path_beneath_attr` (packed in the kernel's headers).
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// Creates the ruleset for one spawn. `degraded` (no namespaces) also
/// handles TCP bind and connect with no rule, since there is no network
/// namespace, and adds the host rules a new root's child rules would cover.
pub(crate) fn create(host: &HostRules, degraded: bool) -> Result<OwnedFd, String> {
    let abi = abi_enum(kernel_abi());
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))
        .map_err(|e| e.to_string())?
        .scope(Scope::from_all(abi))
        .map_err(|e| e.to_string())?;
    if degraded {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(abi))
            .map_err(|e| e.to_string())?;
    }
    let created = ruleset.create().map_err(|e| e.to_string())?;
    let fd = Option::<OwnedFd>::from(created)
        .ok_or_else(|| "landlock is not supported by this kernel".to_owned())?;
    // Raw rules rather than the crate's `path_beneath_rules`, which asks the
    // kernel twice per path whether it is a directory; every access mask
    // below lies within what the ruleset handles (`from_all(abi)`).
    let all = AccessFs::from_all(abi);
    let file = AccessFs::from_file(abi).bits();
    let dev = ((AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::IoctlDev) & all).bits();
    for hp in &host.read {
        add_path_rule(&fd, hp, AccessFs::from_read(abi).bits(), file)?;
    }
    for hp in &host.write {
        add_path_rule(&fd, hp, all.bits(), file)?;
    }
    if degraded {
        for hp in &host.etc {
            add_path_rule(&fd, hp, AccessFs::from_read(abi).bits(), file)?;
        }
        for hp in &host.devices {
            add_path_rule(&fd, hp, dev, file)?;
        }
    }
    Ok(fd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_are_subsets_of_all() {
        for abi in 1..=8 {
            let m = masks(abi);
            assert_eq!(m.read & !m.all, 0);
            assert_eq!(m.dev & !m.all, 0);
            assert_eq!(m.read_dir & !m.all, 0);
        }
    }

    #[test]
    fn partial_names_what_is_missing() {
        assert!(missing_for(3).contains("TCP"));
    }
}
