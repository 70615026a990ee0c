//! Carrying a copy bind's changes back: what `chock workspace apply` shows
//! for each `.mode = .copy` bind of the project, and the writes it makes
//! once the `workspace.apply` prompt that names them is permitted.
//!
//! The copy was written by the session's commands, so it is read as
//! hostile: the trees are walked without following a symlink, a file is
//! read through a descriptor opened with no symlink anywhere in its path
//! (`RESOLVE_NO_SYMLINKS`), a link is carried back as a link (its target
//! text, never what it points at), and nothing but files, directories and
//! links is carried. The original is the person's: it is written as the
//! person could write it.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Read as _;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use chock_policy::{BindMode, Policy};

use super::binds::copy_dir;

/// One entry of a tree, as the walk found it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    Dir,
    File {
        len: u64,
        mode: u32,
    },
    Link(PathBuf),
    /// A device, socket or fifo: never carried.
    Other,
}

/// What changed at one path, relative to the bind's root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    Added(PathBuf),
    Changed(PathBuf),
    Removed(PathBuf),
}

/// A copy bind whose copy differs from its original.
#[derive(Debug, Clone)]
pub struct CopyBack {
    pub name: String,
    pub copy: PathBuf,
    pub original: PathBuf,
    pub changes: Vec<Change>,
}

/// The copy binds of `policy`'s project whose copies in `session_dir`
/// differ from their originals (read against `project`).
pub fn pending(policy: &Policy, project: &Path, session_dir: &Path) -> Vec<CopyBack> {
    policy
        .workspace_binds()
        .iter()
        .filter(|b| b.mode == BindMode::Copy)
        .filter_map(|b| {
            let copy = copy_dir(session_dir, &b.name);
            let original = std::fs::canonicalize(project.join(&b.path)).ok()?;
            let copy = std::fs::canonicalize(copy).ok()?;
            let changes = compare(&original, &copy);
            (!changes.is_empty()).then(|| CopyBack {
                name: b.name.clone(),
                copy,
                original,
                changes,
            })
        })
        .collect()
}

/// Every entry beneath `root`, by relative path, without following links.
fn walk(root: &Path) -> BTreeMap<PathBuf, Node> {
    let mut out = BTreeMap::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(root.join(&rel)) else {
            continue;
        };
        for entry in entries.flatten() {
            let rel = rel.join(entry.file_name());
            let Ok(meta) = std::fs::symlink_metadata(root.join(&rel)) else {
                continue;
            };
            let node = if meta.is_dir() {
                stack.push(rel.clone());
                Node::Dir
            } else if meta.file_type().is_symlink() {
                std::fs::read_link(root.join(&rel)).map_or(Node::Other, Node::Link)
            } else if meta.is_file() {
                Node::File {
                    len: meta.len(),
                    mode: meta.permissions().mode() & 0o777,
                }
            } else {
                Node::Other
            };
            out.insert(rel, node);
        }
    }
    out
}

/// The bytes of the file `rel` beneath `root`, opened with no symlink
/// between them and no step out of `root`.
fn read_plain(root: &Path, rel: &Path) -> std::io::Result<Vec<u8>> {
    use rustix::fs::{Mode, OFlags, ResolveFlags};
    let dir = rustix::fs::open(
        root,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let fd = rustix::fs::openat2(
        &dir,
        rel,
        OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW,
        Mode::empty(),
        ResolveFlags::NO_SYMLINKS | ResolveFlags::BENEATH,
    )?;
    let mut bytes = Vec::new();
    std::fs::File::from(fd).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// What differs between `original` and `copy`, in path order.
fn compare(original: &Path, copy: &Path) -> Vec<Change> {
    let before = walk(original);
    let after = walk(copy);
    let mut changes = Vec::new();
    for (rel, node) in &after {
        if *node == Node::Other {
            continue;
        }
        match before.get(rel) {
            None => changes.push(Change::Added(rel.clone())),
            Some(old) if old != node => changes.push(Change::Changed(rel.clone())),
            Some(Node::File { .. }) => {
                let same = read_plain(copy, rel)
                    .ok()
                    .zip(std::fs::read(original.join(rel)).ok())
                    .is_some_and(|(a, b)| a == b);
                if !same {
                    changes.push(Change::Changed(rel.clone()));
                }
            }
            Some(_) => {}
        }
    }
    for rel in before.keys() {
        if !after.contains_key(rel) {
            changes.push(Change::Removed(rel.clone()));
        }
    }
    changes.sort_by(|a, b| path_of(a).cmp(path_of(b)));
    changes
}

fn path_of(change: &Change) -> &Path {
    match change {
        Change::Added(p) | Change::Changed(p) | Change::Removed(p) => p,
    }
}

/// The words the apply prompt shows for `pending`.
pub fn describe(pending: &[CopyBack]) -> String {
    let mut out = String::new();
    for back in pending {
        let _ = writeln!(
            out,
            "The copy bind {} changed {} path{}; applying writes them to {}:",
            back.name,
            back.changes.len(),
            if back.changes.len() == 1 { "" } else { "s" },
            back.original.display()
        );
        for change in back.changes.iter().take(50) {
            let (mark, path) = match change {
                Change::Added(p) => ("A", p),
                Change::Changed(p) => ("M", p),
                Change::Removed(p) => ("D", p),
            };
            let _ = writeln!(out, "  {mark} {}", path.display());
        }
        if back.changes.len() > 50 {
            let _ = writeln!(out, "  ... and {} more", back.changes.len() - 50);
        }
    }
    out
}

/// Writes `back`'s changes into its original; the two then match, so a
/// second apply carries nothing twice. The count of changes carried.
pub fn carry_back(back: &CopyBack) -> Result<usize, String> {
    let fail = |path: &Path, err: std::io::Error| format!("{}: {err}", path.display());
    let after = walk(&back.copy);
    for change in &back.changes {
        let rel = path_of(change);
        let dst = back.original.join(rel);
        if let Ok(meta) = std::fs::symlink_metadata(&dst)
            && !matches!(after.get(rel), Some(Node::Dir) if meta.is_dir())
        {
            let removed = if meta.is_dir() {
                std::fs::remove_dir_all(&dst)
            } else {
                std::fs::remove_file(&dst)
            };
            removed.map_err(|e| fail(&dst, e))?;
        }
        match after.get(rel) {
            None | Some(Node::Other) => {}
            Some(Node::Dir) => std::fs::create_dir_all(&dst).map_err(|e| fail(&dst, e))?,
            Some(Node::Link(target)) => {
                std::os::unix::fs::symlink(target, &dst).map_err(|e| fail(&dst, e))?;
            }
            Some(Node::File { mode, .. }) => {
                let bytes =
                    read_plain(&back.copy, rel).map_err(|e| fail(&back.copy.join(rel), e))?;
                if let Some(parent) = dst.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| fail(parent, e))?;
                }
                std::fs::write(&dst, bytes).map_err(|e| fail(&dst, e))?;
                std::fs::set_permissions(&dst, std::fs::Permissions::from_mode(*mode))
                    .map_err(|e| fail(&dst, e))?;
            }
        }
    }
    Ok(back.changes.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_s_additions_changes_and_removals_are_found_and_carried_back() {
        let dir = tempfile::tempdir().unwrap();
        let (orig, copy) = (dir.path().join("orig"), dir.path().join("copy"));
        std::fs::create_dir_all(orig.join("sub")).unwrap();
        std::fs::write(orig.join("keep"), "same").unwrap();
        std::fs::write(orig.join("edit"), "before").unwrap();
        std::fs::write(orig.join("sub/gone"), "x").unwrap();
        std::process::Command::new("cp")
            .args(["-a"])
            .arg(&orig)
            .arg(&copy)
            .status()
            .unwrap();
        std::fs::write(copy.join("edit"), "after!").unwrap();
        std::fs::write(copy.join("new"), "n").unwrap();
        std::fs::remove_file(copy.join("sub/gone")).unwrap();
        std::os::unix::fs::symlink("/etc/shadow", copy.join("link")).unwrap();
        let changes = compare(&orig, &copy);
        assert_eq!(
            changes,
            [
                Change::Changed("edit".into()),
                Change::Added("link".into()),
                Change::Added("new".into()),
                Change::Removed("sub/gone".into()),
            ]
        );
        let back = CopyBack {
            name: "data".into(),
            copy: copy.clone(),
            original: orig.clone(),
            changes,
        };
        assert!(describe(std::slice::from_ref(&back)).contains("  D sub/gone"));
        carry_back(&back).unwrap();
        assert_eq!(
            std::fs::read_to_string(orig.join("edit")).unwrap(),
            "after!"
        );
        assert!(!orig.join("sub/gone").exists());
        assert_eq!(
            std::fs::read_link(orig.join("link")).unwrap(),
            Path::new("/etc/shadow")
        );
        assert!(compare(&orig, &copy).is_empty());
    }

    #[test]
    fn a_file_reached_through_a_link_in_the_copy_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("real")).unwrap();
        std::fs::write(dir.path().join("real/secret"), "s").unwrap();
        std::os::unix::fs::symlink(dir.path().join("real"), dir.path().join("via")).unwrap();
        assert!(read_plain(dir.path(), Path::new("via/secret")).is_err());
        assert!(read_plain(dir.path(), Path::new("../x")).is_err());
        assert!(read_plain(dir.path(), Path::new("real/secret")).is_ok());
    }
}
