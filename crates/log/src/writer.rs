//! The only code that writes a session log.
//!
//! Ownership is an exclusive, non-blocking `flock` on the log: whoever holds
//! it may append and nobody else ever writes; a second writer is refused with
//! the holder's pid (from `/proc/locks`). Once the lock is held, a torn tail
//! (a final line without its newline, left by a writer that died mid-write)
//! is cut off, and numbering continues after the last complete event.
//!
//! Each event is one `write(2)` of one whole line on an `O_APPEND`
//! descriptor, so a reader never sees half an event followed by another.
//! Durability is per event kind ([`EventBody::is_durable`]): turn boundaries,
//! approvals, endings, handover, workspace, background and compaction events
//! and `session.open` are `fdatasync`ed before [`LogWriter::append`]
//! returns, because losing them would change what a person or the next
//! owner believes happened; messages, tool calls and results are not, because
//! they are rewritten from the next turn if lost and syncing each would cost
//! a disk flush per token batch. [`LogWriter::sync`] flushes everything.

use std::fs::{File, OpenOptions};
use std::io::{self, Write as _};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use rustix::fs::FlockOperation;

use crate::event::{Event, EventBody};
use crate::id::{EventId, SessionId};
use crate::lines;
use crate::locks;
use crate::paths::{PathError, StateDir};
use crate::time::Timestamp;

/// Why a log could not be opened for writing or an event not appended.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// Another process holds the log's lock.
    #[error("the session log {} is owned by {}: only one process writes a session; stop that process or wait for it to end", path.display(), holder(*pid))]
    Owned {
        /// The log.
        path: PathBuf,
        /// The holder, when `/proc/locks` names it.
        pid: Option<u32>,
    },
    /// `create` found a log already there.
    #[error("cannot create {}: a session log already exists there; open it to carry it on", path.display())]
    Exists {
        /// The log.
        path: PathBuf,
    },
    /// The session directory could not be prepared.
    #[error(transparent)]
    Dir(#[from] PathError),
    /// The log could not be opened, locked, read or repaired.
    #[error("cannot open the session log {}: {error}", path.display())]
    Open {
        /// The log.
        path: PathBuf,
        /// What the system said.
        error: io::Error,
    },
    /// An event could not be written; nothing of it is left in the log.
    #[error("cannot append to {}: {error}; the event was not written, check free space and permissions", path.display())]
    Append {
        /// The log.
        path: PathBuf,
        /// What the system said.
        error: io::Error,
    },
    /// An event was written but could not be flushed to disk.
    #[error("cannot flush {} to disk: {error}; the last events may not survive a crash", path.display())]
    Sync {
        /// The log.
        path: PathBuf,
        /// What the system said.
        error: io::Error,
    },
    /// An event could not be encoded as JSON.
    #[error("cannot encode a {type_name} event: {error}")]
    Encode {
        /// The event type.
        type_name: String,
        /// What serde said.
        error: serde_json::Error,
    },
}

fn holder(pid: Option<u32>) -> String {
    match pid {
        Some(pid) => format!("process {pid}"),
        None => "another process".to_owned(),
    }
}

/// The owner's handle on a session log. Dropping it releases the lock.
#[derive(Debug)]
pub struct LogWriter {
    file: File,
    path: PathBuf,
    last_id: EventId,
    len: u64,
    buf: Vec<u8>,
    tap: Option<Tap>,
}

/// Told each event once it is in the log, in order: what a terminal shows
/// of a session is what the log records, the moment it records it.
pub struct Tap(Box<dyn FnMut(&Event) + Send>);

impl Tap {
    /// A tap that hands each appended event to `see`.
    pub fn new(see: impl FnMut(&Event) + Send + 'static) -> Tap {
        Tap(Box::new(see))
    }
}

impl std::fmt::Debug for Tap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tap")
    }
}

impl LogWriter {
    /// Create the log of a new session (its directory too, mode 0700; the
    /// log itself 0600) and take its lock.
    pub fn create(state: &StateDir, id: &SessionId) -> Result<LogWriter, WriteError> {
        let dir = state.ensure_session_dir(id)?;
        let path = state.log_path(id);
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .map_err(|source| match source.kind() {
                io::ErrorKind::AlreadyExists => WriteError::Exists { path: path.clone() },
                _ => WriteError::Open {
                    path: path.clone(),
                    error: source,
                },
            })?;
        let writer = Self::lock(file, path)?;
        // The new directory entry must survive a crash with the events in it.
        if let Ok(dir) = File::open(&dir) {
            let _ = rustix::fs::fsync(&dir);
        }
        Ok(writer)
    }

    /// Open an existing log to carry it on (after a handover or a crash).
    pub fn open(path: impl AsRef<Path>) -> Result<LogWriter, WriteError> {
        let path = path.as_ref().to_owned();
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .open(&path)
            .map_err(|source| WriteError::Open {
                path: path.clone(),
                error: source,
            })?;
        Self::lock(file, path)
    }

    fn lock(file: File, path: PathBuf) -> Result<LogWriter, WriteError> {
        let open_err = |source: io::Error| WriteError::Open {
            path: path.clone(),
            error: source,
        };
        match rustix::fs::flock(&file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => {}
            Err(rustix::io::Errno::WOULDBLOCK) => {
                let pid = locks::lock_holder(&file).ok().flatten();
                return Err(WriteError::Owned { path, pid });
            }
            Err(e) => return Err(open_err(e.into())),
        }
        let len = file.metadata().map_err(open_err)?.len();
        // Torn tail: whatever follows the last newline never became an event.
        let complete = lines::end_of_last_complete_line(&file, len).map_err(open_err)?;
        if complete < len {
            rustix::fs::ftruncate(&file, complete).map_err(|e| open_err(e.into()))?;
            rustix::fs::fdatasync(&file).map_err(|e| open_err(e.into()))?;
        }
        let last_id = last_event_id(&file, complete).map_err(open_err)?;
        Ok(LogWriter {
            file,
            path,
            last_id,
            len: complete,
            buf: Vec::with_capacity(4096),
            tap: None,
        })
    }

    /// The log's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Hands every event appended from now on to `tap`, once it is written.
    pub fn set_tap(&mut self, tap: Tap) {
        self.tap = Some(tap);
    }

    /// The id of the last event in the log (0 when it is empty).
    pub fn last_id(&self) -> EventId {
        self.last_id
    }

    /// Append one event, numbered after the last, stamped now. Durable
    /// kinds are on disk when this returns (see the module docs).
    pub fn append(&mut self, body: impl Into<EventBody>) -> Result<Event, WriteError> {
        let event = Event {
            id: self.last_id.next(),
            at: Timestamp::now(),
            body: body.into(),
        };
        self.buf.clear();
        event
            .write_line(&mut self.buf)
            .map_err(|source| WriteError::Encode {
                type_name: event.body.type_name().to_owned(),
                error: source,
            })?;
        self.write_buf()?;
        self.last_id = event.id;
        if event.body.is_durable() {
            self.sync()?;
        }
        crate::unsettled::after_append(&self.path, &event.body);
        if let Some(Tap(see)) = &mut self.tap {
            see(&event);
        }
        Ok(event)
    }

    fn write_buf(&mut self) -> Result<(), WriteError> {
        let mut written = 0;
        while written < self.buf.len() {
            // One write(2) for the whole line; the loop only runs again after
            // a short write (a full disk or a signal), which is then undone.
            match (&self.file).write(&self.buf[written..]) {
                Ok(0) => return Err(self.undo(io::ErrorKind::WriteZero.into())),
                Ok(n) => written += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.undo(e)),
            }
        }
        self.len += written as u64;
        Ok(())
    }

    /// Cut off a partly written line so the next append starts clean.
    fn undo(&mut self, source: io::Error) -> WriteError {
        let _ = rustix::fs::ftruncate(&self.file, self.len);
        WriteError::Append {
            path: self.path.clone(),
            error: source,
        }
    }

    /// Flush every event appended so far to disk.
    pub fn sync(&mut self) -> Result<(), WriteError> {
        rustix::fs::fdatasync(&self.file).map_err(|e| WriteError::Sync {
            path: self.path.clone(),
            error: e.into(),
        })
    }
}

/// The id of the last parseable event before `end`, skipping broken lines
/// backwards (a broken line is a reader's problem; the writer only needs to
/// keep numbering above everything that is there).
fn last_event_id(file: &File, end: u64) -> io::Result<EventId> {
    let mut end = end;
    while end > 0 {
        let start = lines::end_of_last_complete_line(file, end - 1)?;
        if let Some(line) = lines::line_at(
            file,
            start,
            end,
            usize::try_from(end - start).unwrap_or(4096),
        )? && let Some(id) = crate::reader::parse_id(&line)
        {
            return Ok(id);
        }
        end = start;
    }
    Ok(EventId::NONE)
}
