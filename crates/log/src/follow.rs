//! Following a log as it grows, for `chock log --follow` and the daemon's
//! `watch`.
//!
//! A [`Follower`] starts from a last event id (found by the reader's binary
//! search) and then remembers the byte offset after the last complete line,
//! so each wake-up reads only what was appended. It waits with inotify on
//! the file; where inotify is unavailable (an exhausted watch limit, a file
//! system without it) it polls every 100 ms instead. The blocking
//! [`Follower::next`] suits a single-threaded caller; an async caller
//! registers [`Follower::as_fd`] with its reactor (e.g. tokio's `AsyncFd`)
//! and calls [`Follower::try_next`] when it is readable, so a daemon needs no
//! thread per watcher.
//!
//! What "ended" means: [`Follower::ended`] is `Some(reason)` while the newest
//! event is a `session.end`. That is not always the last word: after a
//! `handover` ending the next owner appends a new `session.open`, and
//! `ended` goes back to `None`. The follower reports; the caller decides.
//! The usual rule (used by `chock log --follow`) is to stop at an ending
//! whose reason is not `handover`, or at any ending once no process holds
//! the log's lock ([`crate::locks::is_owned`]).

use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags};
use rustix::fs::inotify;

use crate::event::{EndReason, RawEvent};
use crate::id::EventId;
use crate::reader::{self, ReadBatch, ReadError, ReadProblem};

const POLL_INTERVAL: Duration = Duration::from_millis(100);

/// Reads new events of one log as they are appended.
#[derive(Debug)]
pub struct Follower {
    path: PathBuf,
    file: File,
    /// Where the next read starts: a line start.
    offset: u64,
    /// Events at or below this id are not returned again.
    last_id: EventId,
    /// Ids at or below this are the caller's; lines above it are new.
    after: EventId,
    inotify: Option<OwnedFd>,
    ended: Option<EndReason>,
    problems: Vec<ReadProblem>,
    started: bool,
}

impl Follower {
    /// Follow the log at `path`, starting with the events above `after`.
    pub fn new(path: &Path, after: EventId) -> Result<Follower, ReadError> {
        Self::with_inotify(path, after, true)
    }

    /// Follow without inotify, polling every 100 ms: for file systems whose
    /// changes inotify does not report (network mounts), and what
    /// [`Follower::new`] falls back to when inotify is unavailable.
    pub fn polling(path: &Path, after: EventId) -> Result<Follower, ReadError> {
        Self::with_inotify(path, after, false)
    }

    fn with_inotify(path: &Path, after: EventId, use_inotify: bool) -> Result<Follower, ReadError> {
        let file = reader::open(path)?;
        // Watch before the first read so no append can fall between them.
        let inotify = if use_inotify { watch(path) } else { None };
        Ok(Follower {
            path: path.to_owned(),
            file,
            offset: 0,
            last_id: EventId::NONE,
            after,
            inotify,
            ended: None,
            problems: Vec::new(),
            started: false,
        })
    }

    /// The inotify descriptor, readable when the log may have grown; `None`
    /// when the follower polls instead.
    pub fn as_fd(&self) -> Option<BorrowedFd<'_>> {
        self.inotify.as_ref().map(AsFd::as_fd)
    }

    /// The highest event id read so far.
    pub fn last_id(&self) -> EventId {
        self.last_id
    }

    /// The reason of the newest event when it is a `session.end`.
    pub fn ended(&self) -> Option<EndReason> {
        self.ended.clone()
    }

    /// Problems met since the last call (bad lines that were skipped).
    pub fn take_problems(&mut self) -> Vec<ReadProblem> {
        std::mem::take(&mut self.problems)
    }

    /// New events, without waiting (possibly none). Clears the readiness of
    /// [`Follower::as_fd`].
    pub fn try_next(&mut self) -> Result<Vec<RawEvent>, ReadError> {
        self.drain_inotify();
        let io_err = |source| ReadError::Io {
            path: self.path.clone(),
            error: source,
        };
        let batch = if self.started {
            let len = self.file.metadata().map_err(io_err)?.len();
            let mut batch = ReadBatch::default();
            reader::scan(
                &self.file,
                self.offset,
                len,
                self.after,
                self.last_id,
                usize::MAX,
                &mut batch,
            )
            .map_err(io_err)?;
            batch
        } else {
            self.started = true;
            reader::read_after(&self.path, self.after)?
        };
        if batch.last_id > self.last_id {
            self.last_id = batch.last_id;
            self.ended = batch.ended;
        }
        self.offset = batch.end_offset.max(self.offset);
        self.problems.extend(batch.problems);
        Ok(batch.events)
    }

    /// New events, waiting up to `timeout` for at least one; an empty list
    /// means the timeout passed with nothing appended.
    pub fn next(&mut self, timeout: Duration) -> Result<Vec<RawEvent>, ReadError> {
        let deadline = Instant::now() + timeout;
        loop {
            let events = self.try_next()?;
            if !events.is_empty() {
                return Ok(events);
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(events);
            }
            self.wait(deadline - now);
        }
    }

    fn wait(&self, limit: Duration) {
        match &self.inotify {
            Some(fd) => {
                // A second's cap guards against a file system whose changes
                // inotify does not see (network mounts).
                let limit = limit.min(Duration::from_secs(1));
                let timeout = rustix::event::Timespec {
                    tv_sec: i64::try_from(limit.as_secs()).unwrap_or(1),
                    tv_nsec: i64::from(limit.subsec_nanos()),
                };
                let mut fds = [PollFd::new(fd, PollFlags::IN)];
                let _ = rustix::event::poll(&mut fds, Some(&timeout));
            }
            None => std::thread::sleep(limit.min(POLL_INTERVAL)),
        }
    }

    fn drain_inotify(&self) {
        let Some(fd) = &self.inotify else { return };
        let mut buf = [0u8; 4096];
        while let Ok(n) = rustix::io::read(fd, &mut buf) {
            if n == 0 {
                break;
            }
        }
    }
}

fn watch(path: &Path) -> Option<OwnedFd> {
    let fd = inotify::init(inotify::CreateFlags::CLOEXEC | inotify::CreateFlags::NONBLOCK).ok()?;
    let mask = inotify::WatchFlags::MODIFY
        | inotify::WatchFlags::CLOSE_WRITE
        | inotify::WatchFlags::ATTRIB
        | inotify::WatchFlags::DELETE_SELF
        | inotify::WatchFlags::MOVE_SELF;
    inotify::add_watch(&fd, path, mask).ok()?;
    Some(fd)
}
