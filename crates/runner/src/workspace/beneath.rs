//! Reading what a sandboxed command left in a directory, without letting it
//! steer the read: every file is opened one component at a time beneath a
//! directory the host opened itself, never through a link, and only a
//! regular file is read, bounded. The session's private git directory
//! (`super::sandbox_git`) is read only this way.

use std::collections::BTreeSet;
use std::fs;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags};

use super::WorkspaceError;

/// The most bytes of private objects one import copies.
const IMPORT_LIMIT: u64 = 2 << 30;

/// Opens `rel` beneath `root`, one component at a time, never through a
/// link; `None` when a component is missing.
fn open_beneath(root: &Path, rel: &str, flags: OFlags) -> std::io::Result<Option<OwnedFd>> {
    let nofollow = OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut dir = rustix::fs::open(
        root,
        OFlags::DIRECTORY | OFlags::RDONLY | nofollow,
        Mode::empty(),
    )?;
    let parts: Vec<&str> = rel.split('/').filter(|p| !p.is_empty()).collect();
    for (n, part) in parts.iter().enumerate() {
        if *part == ".." || *part == "." {
            return Err(std::io::Error::from(std::io::ErrorKind::InvalidInput));
        }
        let last = n + 1 == parts.len();
        let want = if last {
            flags
        } else {
            OFlags::DIRECTORY | OFlags::RDONLY
        };
        match rustix::fs::openat(&dir, *part, want | nofollow, Mode::empty()) {
            Ok(fd) => dir = fd,
            Err(rustix::io::Errno::NOENT) => return Ok(None),
            Err(err) => return Err(err.into()),
        }
    }
    Ok(Some(dir))
}

/// Reads a regular file beneath the private directory, at most `limit`
/// bytes; `None` when it is missing. A link or anything but a regular file
/// is an error.
pub(super) fn read_private(
    root: &Path,
    rel: &str,
    limit: u64,
) -> Result<Option<String>, WorkspaceError> {
    let io = |source| WorkspaceError::Io {
        what: "read",
        path: root.join(rel),
        error: source,
    };
    let Some(fd) = open_beneath(root, rel, OFlags::RDONLY | OFlags::NONBLOCK).map_err(io)? else {
        return Ok(None);
    };
    let file = fs::File::from(fd);
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(WorkspaceError::Refused(format!(
            "{rel} in the sandbox's git directory is not a regular file"
        )));
    }
    let mut text = String::new();
    file.take(limit).read_to_string(&mut text).map_err(io)?;
    Ok(Some(text))
}

/// Copies the loose objects and pack files of `from` (the private store)
/// into `to`, regular files only, each opened beneath `from` without
/// following a link; skips loose objects already in `imported`. Returns the
/// loose objects it copied.
pub(super) fn copy_objects(
    from: &Path,
    to: &Path,
    imported: &BTreeSet<String>,
) -> Result<Vec<String>, WorkspaceError> {
    let io = |what, path: PathBuf| move |error| WorkspaceError::Io { what, path, error };
    let Some(root) = open_beneath(from, "", OFlags::DIRECTORY | OFlags::RDONLY)
        .map_err(io("open", from.to_owned()))?
    else {
        return Ok(Vec::new());
    };
    let mut budget = IMPORT_LIMIT;
    let mut fresh = Vec::new();
    let names = list_dir(&root).map_err(io("list", from.to_owned()))?;
    for dir in names {
        let loose = dir.len() == 2 && dir.bytes().all(|b| b.is_ascii_hexdigit());
        if !loose && dir != "pack" {
            continue;
        }
        let Ok(sub) = rustix::fs::openat(
            &root,
            dir.as_str(),
            OFlags::DIRECTORY | OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        ) else {
            continue;
        };
        for name in list_dir(&sub).map_err(io("list", from.join(&dir)))? {
            let wanted = if loose {
                name.bytes().all(|b| b.is_ascii_hexdigit())
                    && !imported.contains(&format!("{dir}{name}"))
            } else {
                name.starts_with("pack-") && name.ends_with(".pack")
            };
            if !wanted {
                continue;
            }
            let Ok(fd) = rustix::fs::openat(
                &sub,
                name.as_str(),
                OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
                Mode::empty(),
            ) else {
                continue;
            };
            let mut file = fs::File::from(fd);
            let meta = file
                .metadata()
                .map_err(io("read", from.join(&dir).join(&name)))?;
            if !meta.is_file() {
                continue;
            }
            if meta.len() > budget {
                return Err(WorkspaceError::Refused(format!(
                    "the sandbox's git objects are over {} GiB; nothing was brought back",
                    IMPORT_LIMIT >> 30
                )));
            }
            budget -= meta.len();
            let target_dir = to.join(&dir);
            fs::create_dir_all(&target_dir).map_err(io("create", target_dir.clone()))?;
            let target = target_dir.join(&name);
            let mut out = fs::File::create(&target).map_err(io("write", target.clone()))?;
            std::io::copy(&mut (&mut file).take(meta.len()), &mut out)
                .map_err(io("copy", target.clone()))?;
            if loose {
                fresh.push(format!("{dir}{name}"));
            }
        }
    }
    Ok(fresh)
}

fn list_dir(dir: &OwnedFd) -> std::io::Result<Vec<String>> {
    let mut names = Vec::new();
    let fd = rustix::fs::openat(
        dir,
        ".",
        OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    for entry in rustix::fs::Dir::new(fd)? {
        let entry = entry?;
        if let Ok(name) = entry.file_name().to_str()
            && name != "."
            && name != ".."
        {
            names.push(name.to_owned());
        }
    }
    Ok(names)
}
