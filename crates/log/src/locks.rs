//! Who holds a session log's lock, found in `/proc/locks`.
//!
//! `flock` tells a second writer only that the lock is taken. A person needs
//! to know which process to look at, so the error names it: `/proc/locks`
//! lists every lock with the holder's pid and the locked file as
//! `major:minor:inode` (hex, hex, decimal), which we match against the file's
//! own `stat`. Readers use the same lookup to tell a live session from one
//! whose process died without writing `session.end`.

use std::fs::File;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// The pid holding an exclusive `flock` on the open file, if any.
pub fn lock_holder(file: &File) -> io::Result<Option<u32>> {
    let meta = file.metadata()?;
    let locks = std::fs::read_to_string("/proc/locks")?;
    Ok(find_holder(&locks, meta.dev(), meta.ino()))
}

/// The pid holding an exclusive `flock` on the file at `path`, if any.
pub fn owner_pid(path: &Path) -> io::Result<Option<u32>> {
    let meta = std::fs::metadata(path)?;
    let locks = std::fs::read_to_string("/proc/locks")?;
    Ok(find_holder(&locks, meta.dev(), meta.ino()))
}

/// Whether some process holds the lock on the file at `path`. Unlike
/// [`owner_pid`] this also sees holders in other pid namespaces, whose pid
/// `/proc/locks` cannot name.
pub fn is_owned(path: &Path) -> io::Result<bool> {
    let meta = std::fs::metadata(path)?;
    let locks = std::fs::read_to_string("/proc/locks")?;
    Ok(entries(&locks, meta.dev(), meta.ino()).next().is_some())
}

/// One reading of `/proc/locks`, to ask about many files at once: the
/// first reading after a quiet moment costs milliseconds on some kernels,
/// the files' own `stat` nothing more.
#[derive(Debug)]
pub struct Snapshot(Vec<(u64, u64, u64)>);

impl Snapshot {
    /// Read `/proc/locks` now.
    pub fn read() -> io::Result<Snapshot> {
        let text = std::fs::read_to_string("/proc/locks")?;
        Ok(Snapshot(
            text.lines()
                .filter_map(|line| {
                    let (_pid, file) = exclusive_flock(line)?;
                    let mut parts = file.split(':');
                    let major = u64::from_str_radix(parts.next()?, 16).ok()?;
                    let minor = u64::from_str_radix(parts.next()?, 16).ok()?;
                    let ino = parts.next()?.parse().ok()?;
                    Some((major, minor, ino))
                })
                .collect(),
        ))
    }

    /// Whether some process held an exclusive `flock` on the file with
    /// this device and inode when the snapshot was taken.
    pub fn holds(&self, dev: u64, ino: u64) -> bool {
        let (major, minor) = (
            u64::from(rustix::fs::major(dev)),
            u64::from(rustix::fs::minor(dev)),
        );
        self.0.contains(&(major, minor, ino))
    }
}

fn find_holder(locks: &str, dev: u64, ino: u64) -> Option<u32> {
    entries(locks, dev, ino).find_map(|pid| u32::try_from(pid).ok().filter(|p| *p > 0))
}

fn entries(locks: &str, dev: u64, ino: u64) -> impl Iterator<Item = i64> + '_ {
    let want = format!(
        "{:02x}:{:02x}:{ino}",
        rustix::fs::major(dev),
        rustix::fs::minor(dev)
    );
    locks.lines().filter_map(move |line| {
        let (pid, file) = exclusive_flock(line)?;
        (file == want).then(|| pid.parse().unwrap_or(-1))
    })
}

/// The holder's pid and the `major:minor:inode` of an exclusive `flock`
/// line of `/proc/locks`: `1: FLOCK  ADVISORY  WRITE 4242 fe:01:1311 0 EOF`;
/// waiters carry a `->` after the number and hold nothing.
fn exclusive_flock(line: &str) -> Option<(&str, &str)> {
    let mut fields = line.split_whitespace();
    fields.next()?;
    let kind = fields.next()?;
    if kind != "FLOCK" {
        return None;
    }
    let _advisory = fields.next()?;
    let mode = fields.next()?;
    let pid = fields.next()?;
    let file = fields.next()?;
    (mode == "WRITE").then_some((pid, file))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_flock_holder_of_a_device_and_inode() {
        let dev = (0xfe << 8) | 0x01;
        let locks = "1: POSIX  ADVISORY  WRITE 10 fe:01:77 0 EOF\n\
                     2: FLOCK  ADVISORY  WRITE 4242 fe:01:77 0 EOF\n\
                     2: -> FLOCK  ADVISORY  WRITE 5000 fe:01:77 0 EOF\n\
                     3: FLOCK  ADVISORY  WRITE 99 fe:01:78 0 EOF\n";
        assert_eq!(find_holder(locks, dev, 77), Some(4242));
        assert_eq!(find_holder(locks, dev, 79), None);
    }

    #[test]
    fn sees_a_lock_taken_by_this_process() {
        let tmp = tempfile::NamedTempFile::new().unwrap();
        assert_eq!(owner_pid(tmp.path()).unwrap(), None);
        rustix::fs::flock(
            tmp.as_file(),
            rustix::fs::FlockOperation::NonBlockingLockExclusive,
        )
        .unwrap();
        assert_eq!(owner_pid(tmp.path()).unwrap(), Some(std::process::id()));
        assert!(is_owned(tmp.path()).unwrap());
        let meta = std::fs::metadata(tmp.path()).unwrap();
        let snapshot = Snapshot::read().unwrap();
        assert!(snapshot.holds(meta.dev(), meta.ino()));
        assert!(!snapshot.holds(meta.dev(), meta.ino() + 1));
    }
}
