//! The directory walk under glob and grep: depth first, sorted by name so
//! results are stable, never descending into a symlinked directory (which
//! could go round in a loop), leaving out any symlink whose target is
//! outside the workspace (grep would otherwise read through it), and
//! skipping `.git`, whose contents are the repository's business and would
//! drown every search.

use std::path::{Path, PathBuf};

/// Stops a walk of an enormous tree instead of running for minutes.
pub(super) const MAX_VISITED: usize = 200_000;

/// A file found by the walk.
#[derive(Debug)]
pub(super) struct Found {
    /// Path relative to the walk's start.
    pub(super) rel: PathBuf,
    pub(super) path: PathBuf,
    pub(super) is_dir: bool,
}

/// Everything under `start`, depth first, that stays inside `root`. The
/// flag says the walk stopped at [`MAX_VISITED`].
pub(super) fn walk(root: &Path, start: &Path) -> (Vec<Found>, bool) {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    let mut visited = 0;
    while let Some(rel) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(start.join(&rel)) else {
            continue;
        };
        let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
        entries.sort_by_key(std::fs::DirEntry::file_name);
        let mut dirs = Vec::new();
        for entry in entries {
            visited += 1;
            if visited > MAX_VISITED {
                return (out, true);
            }
            let name = entry.file_name();
            if name == ".git" {
                continue;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let child = rel.join(&name);
            let path = start.join(&child);
            let is_dir = if kind.is_symlink() {
                match path.canonicalize() {
                    Ok(target) if target.starts_with(root) => target.is_dir(),
                    _ => continue,
                }
            } else {
                if kind.is_dir() {
                    dirs.push(child.clone());
                }
                kind.is_dir()
            };
            out.push(Found {
                path,
                rel: child,
                is_dir,
            });
        }
        stack.extend(dirs.into_iter().rev());
    }
    (out, false)
}
