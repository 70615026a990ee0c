//! The project's memory: notes the agent keeps for later sessions of the
//! same project, in one Markdown file under the state dir,
//! `memory/<sha256 of the project's path>.md`.
//!
//! It lives outside the project so that a session's notes never show up in
//! the person's repository or its diffs, and it is keyed by the project's
//! real path, so every session of one project (whatever its workspace)
//! reads the same notes. A write replaces the file through a rename, so a
//! crash leaves either the old notes or the new ones, never half of them.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use chock_log::StateDir;
use sha2::{Digest, Sha256};

use super::ToolError;

/// Most bytes the memory file may hold; past it a write is refused and the
/// model is told to condense.
pub(super) const MAX_BYTES: usize = 64 * 1024;

/// The memory file of `project` (its canonical path) in `state`.
pub fn memory_file(state: &StateDir, project: &Path) -> PathBuf {
    let digest = Sha256::digest(project.as_os_str().as_encoded_bytes());
    let name: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    state.root().join("memory").join(format!("{name}.md"))
}

/// The notes, or an empty string when none were written.
pub(super) fn read(file: &Path) -> Result<String, ToolError> {
    match std::fs::read(file) {
        Ok(bytes) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(err) => Err(ToolError::Failed(format!(
            "cannot read the project's memory at {}: {err}",
            file.display()
        ))),
    }
}

/// Replaces the notes with `text`: a new file beside the old one, synced,
/// then renamed over it. The directory and the file are the person's alone.
pub(super) fn write(file: &Path, text: &str) -> Result<(), ToolError> {
    let fail = |what: &str, err: std::io::Error| {
        ToolError::Failed(format!(
            "cannot {what} the project's memory at {}: {err}",
            file.display()
        ))
    };
    let dir = file
        .parent()
        .ok_or_else(|| fail("write", std::io::ErrorKind::InvalidInput.into()))?;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|err| fail("create the directory of", err))?;
    let temp = file.with_extension("md.new");
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&temp)
        .map_err(|err| fail("write", err))?;
    out.write_all(text.as_bytes())
        .and_then(|()| out.sync_all())
        .map_err(|err| fail("write", err))?;
    std::fs::rename(&temp, file).map_err(|err| fail("replace", err))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_project_has_its_own_file_under_the_state_dir() {
        let state = StateDir::at("/s");
        let a = memory_file(&state, Path::new("/home/me/a"));
        let b = memory_file(&state, Path::new("/home/me/b"));
        assert_ne!(a, b);
        assert!(a.starts_with("/s/memory"), "{}", a.display());
        assert_eq!(a, memory_file(&state, Path::new("/home/me/a")));
    }

    #[test]
    fn missing_notes_read_empty_and_a_write_replaces_them_privately() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("memory").join("x.md");
        assert_eq!(read(&file).unwrap(), "");
        write(&file, "one").unwrap();
        write(&file, "two").unwrap();
        assert_eq!(read(&file).unwrap(), "two");
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert!(!file.with_extension("md.new").exists());
    }
}
