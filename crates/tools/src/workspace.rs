//! Confinement of tool paths to the session's workspace. A path the model
//! gives is joined to the workspace root, `.` and `..` are resolved
//! lexically, and the part of it that exists is resolved through symlinks;
//! the result must still lie inside the (canonical) root. So `../x`,
//! `/etc/passwd` and a symlink pointing out of the workspace are refused
//! alike, while `a/../b` and a symlink to elsewhere inside the workspace are
//! fine.
//!
//! The check happens when a tool resolves its path, so a symlink swapped in
//! between the check and the use is not caught here; the sandbox is the
//! boundary that holds against a hostile program, this is the one that keeps
//! the model's file tools where they belong.

use std::path::{Component, Path, PathBuf};

/// Why a path was refused or could not be resolved.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PathError {
    #[error(
        "'{given}' is outside the workspace: tools can only reach files under the workspace root; give a path relative to it"
    )]
    Outside { given: String },
    #[error(
        "'{given}' leads through a symlink that points outside the workspace; tools do not follow links out of it"
    )]
    SymlinkOut { given: String },
    #[error("'{given}' is a symlink whose target does not exist")]
    Dangling { given: String },
    #[error("'{given}' is inside .git: the repository's own files are not edited with file tools")]
    InGitDir { given: String },
    #[error("cannot resolve '{given}': {detail}")]
    Io { given: String, detail: String },
}

/// Where a session's commands see the workspace: a neutral path, so that
/// what a command prints (and `/proc/self/mountinfo` inside) names no host
/// directory. The file tools take a path under it as the same path in the
/// workspace.
pub const SANDBOX_ROOT: &str = "/workspace";

/// The directory a session's file tools work in.
#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
}

impl Workspace {
    /// A workspace rooted at `root`, which must exist.
    pub fn new(root: &Path) -> std::io::Result<Self> {
        Ok(Self {
            root: root.canonicalize()?,
        })
    }

    /// A workspace rooted at `root` as given, for a checkout that is still
    /// being made: `root` must be the path [`Workspace::new`] will give once
    /// it exists (canonical), and no tool may run before it does.
    pub fn planned(root: PathBuf) -> Self {
        Self { root }
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `path` relative to the root, for messages to the model.
    pub fn display(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_owned(),
            Ok(rel) => rel.display().to_string(),
            Err(_) => path.display().to_string(),
        }
    }

    /// Resolves `given` (relative to the root, or absolute inside it) to a
    /// path inside the workspace. The path need not exist.
    pub fn resolve(&self, given: &str) -> Result<PathBuf, PathError> {
        // A path a command printed, as the sandbox shows the workspace.
        let joined = match Path::new(given).strip_prefix(SANDBOX_ROOT) {
            Ok(rest) => self.root.join(rest),
            Err(_) => self.root.join(given),
        };
        let normal = normalize(&joined).ok_or_else(|| PathError::Outside {
            given: given.to_owned(),
        })?;
        if !normal.starts_with(&self.root) {
            return Err(PathError::Outside {
                given: given.to_owned(),
            });
        }
        // Walk back to the longest prefix that exists (as a link or not).
        let mut existing = normal.clone();
        let mut missing = Vec::new();
        while std::fs::symlink_metadata(&existing).is_err() {
            match existing.file_name() {
                Some(name) => missing.push(name.to_owned()),
                None => break,
            }
            existing.pop();
        }
        let canonical = match existing.canonicalize() {
            Ok(canonical) => canonical,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Err(PathError::Dangling {
                    given: given.to_owned(),
                });
            }
            Err(err) => {
                return Err(PathError::Io {
                    given: given.to_owned(),
                    detail: err.to_string(),
                });
            }
        };
        if !canonical.starts_with(&self.root) {
            return Err(PathError::SymlinkOut {
                given: given.to_owned(),
            });
        }
        Ok(missing
            .into_iter()
            .rev()
            .fold(canonical, |path, name| path.join(name)))
    }

    /// [`Workspace::resolve`] for a path that will be written: also refuses
    /// anything inside the repository's `.git` directory.
    pub fn resolve_for_write(&self, given: &str) -> Result<PathBuf, PathError> {
        let path = self.resolve(given)?;
        let rel = path.strip_prefix(&self.root).unwrap_or(&path);
        if rel.components().next() == Some(Component::Normal(".git".as_ref())) {
            return Err(PathError::InGitDir {
                given: given.to_owned(),
            });
        }
        Ok(path)
    }
}

/// Resolves `.` and `..` without touching the file system; `None` when
/// `..` climbs above `/`.
fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => out.push(component.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::Normal(name) => out.push(name),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_resolves_dots_lexically() {
        assert_eq!(
            normalize(Path::new("/a/./b/../c")),
            Some(PathBuf::from("/a/c"))
        );
        assert_eq!(normalize(Path::new("/a/../..")), None);
    }
}
