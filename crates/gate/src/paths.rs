//! Where stops live on this machine: `~/.chock/stops/`, one file per stopped
//! repository named by the SHA-256 of its real path, and `_everywhere.json`.
//!
//! The registry sits outside every repository so that a hook whose client
//! names no project (and an agent that deletes `.chock/stop.json`) still meets
//! the stop.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::GateError;

/// The file name of the machine-wide stop inside the registry.
pub(crate) const EVERYWHERE_FILE: &str = "_everywhere.json";

/// The machine registry of one user.
#[derive(Debug, Clone)]
pub struct StopPaths {
    /// `~/.chock/stops`.
    pub registry: PathBuf,
}

impl StopPaths {
    /// The registry under a given home directory.
    pub fn under_home(home: &Path) -> Self {
        StopPaths {
            registry: home.join(".chock").join("stops"),
        }
    }

    /// The registry under `$HOME`.
    pub fn from_env() -> Result<Self, GateError> {
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .ok_or(GateError::NoHome)?;
        Ok(Self::under_home(Path::new(&home)))
    }

    /// `~/.chock/stops/_everywhere.json`.
    pub fn everywhere(&self) -> PathBuf {
        self.registry.join(EVERYWHERE_FILE)
    }

    /// The registry entry of a repository, keyed by its main checkout's real path.
    pub fn entry_for(&self, main_checkout_realpath: &Path) -> PathBuf {
        self.registry
            .join(format!("{}.json", registry_key(main_checkout_realpath)))
    }
}

/// Lower-case hex SHA-256 of a path's bytes.
pub(crate) fn registry_key(realpath: &Path) -> String {
    let digest = Sha256::digest(realpath.as_os_str().as_bytes());
    let mut hex = String::with_capacity(64);
    for byte in digest {
        hex.push_str(&format!("{byte:02x}"));
    }
    hex
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_is_the_sha256_of_the_path() {
        // printf %s /srv/repo | sha256sum
        assert_eq!(
            registry_key(Path::new("/srv/repo")),
            "203fce37fbfc82f3bd7cd983ce20b2e7db8ad25ee40b8382c9345c1ae1d6407d"
        );
    }
}
