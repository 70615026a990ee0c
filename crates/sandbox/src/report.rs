//! What a spawn actually got, for the runner to log and for `chock sandbox`
//! to print: which layers are in force and which are missing, by name. A
//! layer that is absent is never silent: it appears in `degraded`.

use std::fmt;

/// How much of landlock is in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LandlockState {
    /// Every right this crate asks for is enforced (kernel ABI >= 7).
    Full {
        /// The kernel's landlock ABI.
        abi: u32,
    },
    /// Landlock works but the kernel's ABI lacks some rights; `missing`
    /// names them.
    Partial {
        /// The kernel's landlock ABI.
        abi: u32,
        /// What this ABI cannot restrict.
        missing: &'static str,
    },
    /// Landlock is not available (not built in, not enabled, or forced off).
    Unavailable,
}

/// The layers one sandboxed process runs under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxReport {
    /// Fresh user, mount, pid, ipc, uts and network namespaces.
    pub namespaces: bool,
    /// Landlock state.
    pub landlock: LandlockState,
    /// The seccomp filter is installed (always, or the spawn fails).
    pub seccomp: bool,
    /// Pages may be writable and executable (`sandbox.jit` allowed).
    pub jit: bool,
    /// `PR_SET_MDWE` was available on this kernel.
    pub mdwe: bool,
    /// Each missing layer, in words, for the log and stderr.
    pub degraded: Vec<String>,
}

impl SandboxReport {
    /// True when every layer is present.
    pub fn is_complete(&self) -> bool {
        self.degraded.is_empty()
    }
}

impl fmt::Display for SandboxReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ll = match self.landlock {
            LandlockState::Full { abi } => format!("landlock ABI {abi}"),
            LandlockState::Partial { abi, .. } => format!("landlock ABI {abi} (partial)"),
            LandlockState::Unavailable => "no landlock".to_owned(),
        };
        write!(
            f,
            "{}, {ll}, seccomp, {}",
            if self.namespaces {
                "namespaces"
            } else {
                "no namespaces"
            },
            if self.jit { "jit allowed" } else { "W^X" },
        )?;
        for d in &self.degraded {
            write!(f, "; {d}")?;
        }
        Ok(())
    }
}
