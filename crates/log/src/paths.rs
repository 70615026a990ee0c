//! Where Chock keeps its state, so every process agrees on one layout.
//!
//! The state directory is `$CHOCK_STATE_DIR`, else `$XDG_STATE_HOME/chock`,
//! else `~/.local/state/chock`. Beneath it: `daemon.sock`, `serve.sock`,
//! `decisions.jsonl`, `sessions/<id>/{log.jsonl,approve.sock,handover.sock}`
//! and `workspaces/<id>/`. Path methods only compute; the `ensure_*` methods
//! create directories with mode 0700 (and tighten an existing one we own that
//! is wider), because logs hold conversations and sockets take orders.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::id::{SessionId, SessionIdError};

/// A state directory could not be found or prepared.
#[derive(Debug, thiserror::Error)]
pub enum PathError {
    /// None of the variables that name the state directory is usable.
    #[error(
        "cannot find the state directory: set CHOCK_STATE_DIR, XDG_STATE_HOME or HOME to an absolute path"
    )]
    NoHome,
    /// A variable names a relative path, which would depend on the caller's cwd.
    #[error("{var} is '{value}', which is not an absolute path: set it to an absolute path")]
    Relative {
        /// The environment variable.
        var: &'static str,
        /// Its value.
        value: PathBuf,
    },
    /// A directory could not be created or its mode set.
    #[error("cannot create {path}: {error}; check the permissions of its parent")]
    Create {
        /// The directory.
        path: PathBuf,
        /// What the system said.
        error: io::Error,
    },
}

/// A session named by a person or a client could not be found.
#[derive(Debug, thiserror::Error)]
pub enum FindError {
    /// The text is not a session id at all.
    #[error(transparent)]
    BadId(#[from] SessionIdError),
    /// No session of that id has a log in this state directory.
    #[error("no session {id} in {}: list sessions with 'chock sessions'", dir.display())]
    Unknown {
        /// The id.
        id: SessionId,
        /// The state directory searched.
        dir: PathBuf,
    },
}

/// The root of Chock's state; see the module docs for the layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateDir {
    root: PathBuf,
}

impl StateDir {
    /// Resolve from the environment of this process.
    pub fn resolve() -> Result<StateDir, PathError> {
        Self::resolve_from(|name| std::env::var_os(name))
    }

    /// Resolve with a given environment lookup (an empty value counts as unset).
    pub fn resolve_from(env: impl Fn(&str) -> Option<OsString>) -> Result<StateDir, PathError> {
        let get = |var: &'static str| env(var).filter(|v| !v.is_empty()).map(PathBuf::from);
        let absolute = |var: &'static str, value: PathBuf| {
            if value.is_absolute() {
                Ok(value)
            } else {
                Err(PathError::Relative { var, value })
            }
        };
        let root = if let Some(dir) = get("CHOCK_STATE_DIR") {
            absolute("CHOCK_STATE_DIR", dir)?
        } else if let Some(dir) = get("XDG_STATE_HOME") {
            absolute("XDG_STATE_HOME", dir)?.join("chock")
        } else if let Some(home) = get("HOME") {
            absolute("HOME", home)?.join(".local/state/chock")
        } else {
            return Err(PathError::NoHome);
        };
        Ok(StateDir { root })
    }

    /// A state directory at an explicit path (tests, `--state-dir` flags).
    pub fn at(root: impl Into<PathBuf>) -> StateDir {
        StateDir { root: root.into() }
    }

    /// The state directory itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The directory holding one directory per session.
    pub fn sessions(&self) -> PathBuf {
        self.root.join("sessions")
    }

    /// The directory of one session.
    pub fn session_dir(&self, id: &SessionId) -> PathBuf {
        self.sessions().join(id.as_str())
    }

    /// The session's log.
    pub fn log_path(&self, id: &SessionId) -> PathBuf {
        self.session_dir(id).join("log.jsonl")
    }

    /// The unix socket on which a session takes approval answers.
    pub fn approve_socket(&self, id: &SessionId) -> PathBuf {
        self.session_dir(id).join("approve.sock")
    }

    /// The unix socket on which a session is asked to hand over.
    pub fn handover_socket(&self, id: &SessionId) -> PathBuf {
        self.session_dir(id).join("handover.sock")
    }

    /// The directory holding one workspace per session.
    pub fn workspaces(&self) -> PathBuf {
        self.root.join("workspaces")
    }

    /// The workspace (git worktree) of one session.
    pub fn workspace_dir(&self, id: &SessionId) -> PathBuf {
        self.workspaces().join(id.as_str())
    }

    /// The machine-wide log of policy decisions.
    pub fn decisions_log(&self) -> PathBuf {
        self.root.join("decisions.jsonl")
    }

    /// The daemon's default listening socket.
    pub fn daemon_socket(&self) -> PathBuf {
        self.root.join("daemon.sock")
    }

    /// `chock serve`'s default listening socket.
    pub fn serve_socket(&self) -> PathBuf {
        self.root.join("serve.sock")
    }

    /// The id and log path of the session named by `text`, which must
    /// exist; the error names the id and points at `chock sessions`.
    pub fn find_session(&self, text: &str) -> Result<(SessionId, PathBuf), FindError> {
        let id = SessionId::parse(text)?;
        let log = self.log_path(&id);
        if fs::symlink_metadata(&log).is_err() {
            return Err(FindError::Unknown {
                id,
                dir: self.root.clone(),
            });
        }
        Ok((id, log))
    }

    /// Create the state directory (0700) and return its path.
    pub fn ensure_root(&self) -> Result<&Path, PathError> {
        create_private_dir(&self.root)?;
        Ok(&self.root)
    }

    /// Create `sessions/` (0700) and return its path.
    pub fn ensure_sessions(&self) -> Result<PathBuf, PathError> {
        self.ensure_root()?;
        let dir = self.sessions();
        ensure_private_dir(&dir)?;
        Ok(dir)
    }

    /// Create the session's directory (0700) and return its path.
    pub fn ensure_session_dir(&self, id: &SessionId) -> Result<PathBuf, PathError> {
        self.ensure_sessions()?;
        let dir = self.session_dir(id);
        ensure_private_dir(&dir)?;
        Ok(dir)
    }

    /// Create `workspaces/` (0700) and return its path.
    pub fn ensure_workspaces(&self) -> Result<PathBuf, PathError> {
        self.ensure_root()?;
        let dir = self.workspaces();
        ensure_private_dir(&dir)?;
        Ok(dir)
    }
}

/// Write `bytes` to `path` whole or not at all: to a temporary file beside
/// it (mode 0600, its directory made private first), renamed over `path`.
/// Two writers at once leave one whole file or the other.
pub(crate) fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let dir = path.parent().ok_or(io::ErrorKind::NotFound)?;
    create_private_dir(dir).map_err(io::Error::other)?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = dir.join(format!(
        ".{name}.{}.{}",
        std::process::id(),
        SessionId::new().as_str()
    ));
    let written = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .and_then(|mut f| f.write_all(bytes))
        .and_then(|()| fs::rename(&tmp, path));
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

/// Create `dir` (and missing parents) with mode 0700; leave an existing
/// one as it is. Every directory Chock makes under a person's home
/// (`~/.local`, `~/.local/state`, `~/.chock`, ...) is made this way.
pub fn create_private_dir(dir: &Path) -> Result<(), PathError> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|source| PathError::Create {
            path: dir.to_owned(),
            error: source,
        })
}

/// Create `dir` with mode 0700, or narrow an existing one to 0700 when it
/// is wider. Never widens anything.
fn ensure_private_dir(dir: &Path) -> Result<(), PathError> {
    let create = |source| PathError::Create {
        path: dir.to_owned(),
        error: source,
    };
    create_private_dir(dir)?;
    let meta = fs::metadata(dir).map_err(create)?;
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        fs::set_permissions(dir, fs::Permissions::from_mode(mode & 0o700)).map_err(create)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<OsString> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn chock_state_dir_wins() {
        let dir = StateDir::resolve_from(env(&[
            ("CHOCK_STATE_DIR", "/s"),
            ("XDG_STATE_HOME", "/x"),
            ("HOME", "/h"),
        ]))
        .unwrap();
        assert_eq!(dir.root(), Path::new("/s"));
    }

    #[test]
    fn xdg_then_home() {
        let dir = StateDir::resolve_from(env(&[("XDG_STATE_HOME", "/x"), ("HOME", "/h")])).unwrap();
        assert_eq!(dir.root(), Path::new("/x/chock"));
        let dir = StateDir::resolve_from(env(&[("CHOCK_STATE_DIR", ""), ("HOME", "/h")])).unwrap();
        assert_eq!(dir.root(), Path::new("/h/.local/state/chock"));
    }

    #[test]
    fn relative_or_missing_is_an_error() {
        let err = StateDir::resolve_from(env(&[("CHOCK_STATE_DIR", "rel")])).unwrap_err();
        assert!(err.to_string().contains("CHOCK_STATE_DIR"), "{err}");
        assert!(matches!(
            StateDir::resolve_from(env(&[])),
            Err(PathError::NoHome)
        ));
    }

    #[test]
    fn layout() {
        let dir = StateDir::at("/s");
        let id = SessionId::parse("20261129-192736-123-7f3a9c1e").unwrap();
        assert_eq!(
            dir.log_path(&id),
            Path::new("/s/sessions/20261129-192736-123-7f3a9c1e/log.jsonl")
        );
        assert_eq!(
            dir.approve_socket(&id),
            Path::new("/s/sessions/20261129-192736-123-7f3a9c1e/approve.sock")
        );
        assert_eq!(
            dir.workspace_dir(&id),
            Path::new("/s/workspaces/20261129-192736-123-7f3a9c1e")
        );
        assert_eq!(dir.decisions_log(), Path::new("/s/decisions.jsonl"));
        assert_eq!(dir.daemon_socket(), Path::new("/s/daemon.sock"));
        assert_eq!(dir.serve_socket(), Path::new("/s/serve.sock"));
    }

    #[test]
    fn ensure_creates_private_dirs_and_narrows_wide_ones_of_its_own() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = StateDir::at(tmp.path().join("state"));
        let id = SessionId::new();
        fs::create_dir(dir.root()).unwrap();
        fs::set_permissions(dir.root(), fs::Permissions::from_mode(0o755)).unwrap();
        fs::create_dir(dir.sessions()).unwrap();
        fs::set_permissions(dir.sessions(), fs::Permissions::from_mode(0o755)).unwrap();
        let session = dir.ensure_session_dir(&id).unwrap();
        for path in [dir.sessions(), session] {
            let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o700, "{}", path.display());
        }
        // The state directory itself may be a person's own: left alone.
        let mode = fs::metadata(dir.root()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o755);
        let fresh = StateDir::at(tmp.path().join("new/state"));
        fresh.ensure_root().unwrap();
        for path in [tmp.path().join("new"), fresh.root().to_owned()] {
            let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o700, "{}", path.display());
        }
    }
}
