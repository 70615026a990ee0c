//! Which session logs may have changed since the row watcher last looked,
//! by inotify: one watch on the sessions directory (sessions that come or
//! go) and one on each session's directory (its log written, replaced or
//! removed). The watcher then stats only those logs, instead of every log
//! every tick; it still looks at every log when the kernel's queue
//! overflowed, when reading it failed, and every [`FULL_EVERY`] ticks (a
//! file system whose changes inotify does not see, such as a network one,
//! is then at most that late). Without inotify (no instance or watch left
//! under the kernel's limits) every tick looks at every log, as before.

use std::collections::{HashMap, HashSet};
use std::ffi::CStr;
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::path::Path;

use chock_log::SessionId;
use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};
use rustix::io::Errno;

/// Every this many ticks the watcher looks at every log anyway.
pub(super) const FULL_EVERY: u32 = 50;

/// What a tick should look at.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Touched {
    /// Every log.
    All,
    /// These sessions' logs (sessions new, changed or gone).
    Some(HashSet<SessionId>),
}

/// The watches, while inotify serves.
#[derive(Debug)]
pub(super) struct Changes {
    fd: OwnedFd,
    /// The sessions directory's own watch.
    top: i32,
    /// Each session directory's watch.
    dirs: HashMap<i32, SessionId>,
    /// The next look is at every log (the first, after the watches were
    /// added, catches what changed while they were being added).
    full: bool,
    /// A watch was refused: every look is at every log from now on.
    refused: bool,
    buf: Vec<MaybeUninit<u8>>,
}

/// What a session directory's watch reports: its log written, replaced,
/// made or removed, and the directory itself gone.
fn dir_flags() -> WatchFlags {
    WatchFlags::MODIFY
        | WatchFlags::ATTRIB
        | WatchFlags::CLOSE_WRITE
        | WatchFlags::CREATE
        | WatchFlags::DELETE
        | WatchFlags::MOVED_FROM
        | WatchFlags::MOVED_TO
        | WatchFlags::DELETE_SELF
        | WatchFlags::ONLYDIR
        | WatchFlags::DONT_FOLLOW
}

impl Changes {
    /// Watches `sessions` and the directory of each of `ids`; `None` when
    /// inotify cannot serve (no instance, or a watch refused by the
    /// kernel's limit), and the watcher stats every log.
    pub(super) fn watch<'a>(
        sessions: &Path,
        ids: impl Iterator<Item = &'a SessionId>,
    ) -> Option<Changes> {
        let fd = inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK).ok()?;
        let top = inotify::add_watch(
            &fd,
            sessions,
            WatchFlags::CREATE
                | WatchFlags::DELETE
                | WatchFlags::MOVED_FROM
                | WatchFlags::MOVED_TO
                | WatchFlags::ONLYDIR
                | WatchFlags::DONT_FOLLOW,
        )
        .ok()?;
        let mut changes = Changes {
            fd,
            top,
            dirs: HashMap::new(),
            full: true,
            refused: false,
            buf: vec![MaybeUninit::uninit(); 64 << 10],
        };
        for id in ids {
            if !changes.add(sessions, id) {
                tracing::info!(
                    "inotify refused a watch (its limit); the row watcher stats every log each tick"
                );
                return None;
            }
        }
        Some(changes)
    }

    /// Watches one session's directory; false when the kernel refused.
    fn add(&mut self, sessions: &Path, id: &SessionId) -> bool {
        match inotify::add_watch(&self.fd, sessions.join(id.as_str()), dir_flags()) {
            Ok(wd) => {
                self.dirs.insert(wd, id.clone());
                true
            }
            // Gone already, or not a directory: nothing to watch.
            Err(Errno::NOENT | Errno::NOTDIR) => true,
            Err(_) => false,
        }
    }

    /// What changed since the last call.
    pub(super) fn touched(&mut self, sessions: &Path) -> Touched {
        let mut touched = HashSet::new();
        let mut all = std::mem::take(&mut self.full) || self.refused;
        let mut new_dirs = Vec::new();
        let mut buf = std::mem::take(&mut self.buf);
        {
            let mut reader = inotify::Reader::new(&self.fd, &mut buf);
            loop {
                let event = match reader.next() {
                    Ok(event) => event,
                    Err(Errno::AGAIN | Errno::INTR) => break,
                    Err(_) => {
                        all = true;
                        break;
                    }
                };
                let flags = event.events();
                if flags.contains(ReadFlags::QUEUE_OVERFLOW) {
                    all = true;
                    continue;
                }
                if event.wd() == self.top {
                    let Some(id) = event.file_name().and_then(session_id) else {
                        continue;
                    };
                    if flags.intersects(ReadFlags::CREATE | ReadFlags::MOVED_TO) {
                        new_dirs.push(id.clone());
                    }
                    touched.insert(id);
                } else if flags.contains(ReadFlags::IGNORED) {
                    // The directory is gone and its watch with it.
                    if let Some(id) = self.dirs.remove(&event.wd()) {
                        touched.insert(id);
                    }
                } else if let Some(id) = self.dirs.get(&event.wd()) {
                    touched.insert(id.clone());
                }
            }
        }
        self.buf = buf;
        // A new session's directory is watched before its log is looked
        // at, so a write after the look is reported.
        for id in &new_dirs {
            if !self.add(sessions, id) {
                tracing::info!(
                    "inotify refused a watch (its limit); the row watcher stats every log each tick"
                );
                self.refused = true;
                all = true;
            }
        }
        if all {
            Touched::All
        } else {
            Touched::Some(touched)
        }
    }
}

fn session_id(name: &CStr) -> Option<SessionId> {
    name.to_str()
        .ok()
        .and_then(|name| SessionId::parse(name).ok())
}
