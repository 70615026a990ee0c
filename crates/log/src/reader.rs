//! Reading a log from a last event id, without locking and without reading
//! it from the start.
//!
//! [`read_after`] binary-searches byte offsets for the first line whose id
//! is above the one asked for: it seeks to the middle of the remaining range,
//! resynchronises on the next line start, reads that line's id, and halves
//! again, so reading the tail of a million-event log touches a few pages.
//! The search trusts that ids grow with the offset, which the writer
//! guarantees; it checks that trust on every line it looks at, and when what
//! it sees contradicts it (ids that do not grow between probes) it falls back
//! to reading the whole log and says so in the batch.
//!
//! Problems never stop a read: a line that is not a valid event, or whose id
//! does not grow, is reported as a [`ReadProblem`] with its line number and
//! left out, and the lines after it are read as usual. Line numbers are
//! counted only when there is a problem to report. A final line without its
//! newline is a write in progress or a torn write: it is not an event yet
//! and is skipped silently (the next owner truncates it).

use std::borrow::Cow;
use std::fmt;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde::de::IgnoredAny;

use crate::event::{EndReason, RawEvent};
use crate::id::EventId;
use crate::lines::{self, ForwardLines};

/// A log could not be read at all.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// There is no log at that path.
    #[error("no session log at {}: list sessions with 'chock sessions'", path.display())]
    Missing {
        /// The path.
        path: PathBuf,
    },
    /// The path exists but is not a regular file.
    #[error("{} is not a session log (not a regular file)", path.display())]
    NotAFile {
        /// The path.
        path: PathBuf,
    },
    /// The log could not be opened or read.
    #[error("cannot read the session log {}: {error}; check its permissions", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// What the system said.
        error: io::Error,
    },
}

/// Something wrong with one line; the rest of the log is still read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadProblem {
    /// The line is not a JSON event with `id`, `at` and `type`.
    Invalid {
        /// 1-based line number.
        line: u64,
        /// What the parser said.
        message: String,
    },
    /// The line's id is not above the id before it (out of order or repeated).
    OutOfOrder {
        /// 1-based line number.
        line: u64,
        /// The line's id.
        id: EventId,
        /// The highest id before it.
        previous: EventId,
    },
    /// The binary search met ids that do not grow and read the whole log.
    SearchFellBack,
}

impl fmt::Display for ReadProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadProblem::Invalid { line, message } => {
                write!(
                    f,
                    "line {line} is not a valid event ({message}); skipped it and read on"
                )
            }
            ReadProblem::OutOfOrder { line, id, previous } if id == previous => write!(
                f,
                "line {line} repeats event id {id}; skipped it and read on"
            ),
            ReadProblem::OutOfOrder { line, id, previous } => write!(
                f,
                "line {line} has event id {id}, not above the previous id {previous}; skipped it and read on"
            ),
            ReadProblem::SearchFellBack => {
                f.write_str("event ids do not grow through the log, so it was read from the start")
            }
        }
    }
}

/// What one read found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadBatch {
    /// The events with ids above the one asked for, in log order.
    pub events: Vec<RawEvent>,
    /// Lines that were left out, and why.
    pub problems: Vec<ReadProblem>,
    /// The highest id read (including ids at or below the one asked for).
    pub last_id: EventId,
    /// The byte offset just after the last complete line.
    pub end_offset: u64,
    /// Whether a partial line follows `end_offset`.
    pub torn_tail: bool,
    /// When the newest event read is a `session.end`, its reason.
    pub ended: Option<EndReason>,
}

/// Read the events of the log at `path` with ids above `after`.
pub fn read_after(path: &Path, after: EventId) -> Result<ReadBatch, ReadError> {
    read_bounded(path, after, usize::MAX)
}

/// [`read_after`], stopping at the first line that brings the events read
/// to `budget` bytes or more (at least one event, however long): a page of
/// a long log, so a reader that sends a log on holds one page of it at a
/// time. Ask again after the page's last id for the next one; an empty
/// page is the end of what the log holds now.
pub fn read_page(path: &Path, after: EventId, budget: usize) -> Result<ReadBatch, ReadError> {
    read_bounded(path, after, budget)
}

fn read_bounded(path: &Path, after: EventId, budget: usize) -> Result<ReadBatch, ReadError> {
    let file = open(path)?;
    let io_err = |source| ReadError::Io {
        path: path.to_owned(),
        error: source,
    };
    let len = file.metadata().map_err(io_err)?.len();
    let mut batch = ReadBatch::default();
    let (start, previous) = if after == EventId::NONE {
        (0, EventId::NONE)
    } else {
        match locate(&file, len, after).map_err(io_err)? {
            Some(found) => found,
            None => {
                batch.problems.push(ReadProblem::SearchFellBack);
                (0, EventId::NONE)
            }
        }
    };
    scan(&file, start, len, after, previous, budget, &mut batch).map_err(io_err)?;
    Ok(batch)
}

/// Open a log for reading, with errors that name it.
pub(crate) fn open(path: &Path) -> Result<File, ReadError> {
    let file = File::open(path).map_err(|source| match source.kind() {
        io::ErrorKind::NotFound => ReadError::Missing {
            path: path.to_owned(),
        },
        _ => ReadError::Io {
            path: path.to_owned(),
            error: source,
        },
    })?;
    let meta = file.metadata().map_err(|source| ReadError::Io {
        path: path.to_owned(),
        error: source,
    })?;
    if !meta.is_file() {
        return Err(ReadError::NotAFile {
            path: path.to_owned(),
        });
    }
    Ok(file)
}

/// The part of an event a reader checks: it must be a JSON object with an
/// id, a time and a type; everything else is the fold's business.
#[derive(Deserialize)]
struct Head<'a> {
    id: EventId,
    #[expect(
        dead_code,
        reason = "required to be present; its value is not needed here"
    )]
    at: IgnoredAny,
    #[serde(borrow, rename = "type")]
    kind: Cow<'a, str>,
    #[serde(default)]
    reason: Option<IgnoredAny>,
}

/// A `session.end`'s reason, read only for that type.
#[derive(Deserialize)]
struct EndHead {
    reason: EndReason,
}

/// The id of a line, cheaply: the writer always puts `{"id":N,` first, and
/// anything else gets a real parse.
pub(crate) fn parse_id(line: &[u8]) -> Option<EventId> {
    if let Some(rest) = line.strip_prefix(b"{\"id\":") {
        let digits = rest.iter().take_while(|c| c.is_ascii_digit()).count();
        if digits > 0 && digits < 20 && matches!(rest.get(digits), Some(b',' | b'}')) {
            let mut id = 0u64;
            for &c in &rest[..digits] {
                id = id * 10 + u64::from(c - b'0');
            }
            return Some(EventId(id));
        }
    }
    serde_json::from_slice::<Head<'_>>(line).ok().map(|h| h.id)
}

/// Find where the events above `after` start: a line start and the id of
/// the line before it. `None` when the ids seen contradict their order.
fn locate(file: &File, len: u64, after: EventId) -> io::Result<Option<(u64, EventId)>> {
    // Invariant: every line starting before `lo` has an id <= after (and
    // `lo_id` is the highest of them); every line starting at or after `hi`
    // has an id > after.
    let mut lo = 0u64;
    let mut lo_id = EventId::NONE;
    let mut hi = len;
    let mut probes: Vec<(u64, EventId)> = Vec::new();
    // The first line joins the probes: a log whose numbering restarts part
    // way (two logs concatenated, a bad restore) is caught by it even when
    // every probe lands in the restarted part.
    if let Some((start, _, id)) = probe(file, 0, len)? {
        probes.push((start, id));
    }
    while hi - lo > 16 * 1024 {
        let mid = lo + (hi - lo) / 2;
        match probe(file, mid, hi)? {
            None => hi = mid,
            Some((start, end, id)) => {
                probes.push((start, id));
                if id > after {
                    hi = mid;
                } else {
                    lo = end;
                    lo_id = id;
                }
            }
        }
    }
    probes.sort_unstable_by_key(|p| p.0);
    if probes.windows(2).any(|w| w[0].1 >= w[1].1) {
        return Ok(None);
    }
    Ok(Some((lo, lo_id)))
}

/// The first valid line starting in `[from, hi)`: (start, end, id).
fn probe(file: &File, from: u64, hi: u64) -> io::Result<Option<(u64, u64, EventId)>> {
    let mut at = from;
    loop {
        let Some(start) = lines::line_start_at_or_after(file, at, hi)? else {
            return Ok(None);
        };
        let Some(line) = lines::line_at(file, start, u64::MAX, 4096)? else {
            return Ok(None);
        };
        let end = start + line.len() as u64 + 1;
        if let Some(id) = parse_id(&line) {
            return Ok(Some((start, end, id)));
        }
        at = end;
    }
}

/// Read complete lines from `start` to `len`, keeping events above `after`.
pub(crate) fn scan(
    file: &File,
    start: u64,
    len: u64,
    after: EventId,
    previous: EventId,
    budget: usize,
    batch: &mut ReadBatch,
) -> io::Result<()> {
    let mut lines = ForwardLines::new(file, start, len);
    let mut taken = 0usize;
    let mut previous = previous;
    batch.last_id = batch.last_id.max(previous);
    let mut pending: Vec<(u64, ReadProblem)> = Vec::new();
    while let Some((offset, line)) = lines.next_line()? {
        match serde_json::from_slice::<Head<'_>>(line) {
            Err(err) => pending.push((
                offset,
                ReadProblem::Invalid {
                    line: 0,
                    message: err.to_string(),
                },
            )),
            Ok(head) if head.id <= previous => {
                pending.push((
                    offset,
                    ReadProblem::OutOfOrder {
                        line: 0,
                        id: head.id,
                        previous,
                    },
                ));
            }
            Ok(head) => {
                previous = head.id;
                batch.last_id = head.id;
                batch.ended = if head.kind == "session.end" && head.reason.is_some() {
                    serde_json::from_slice::<EndHead>(line)
                        .ok()
                        .map(|h| h.reason)
                } else {
                    None
                };
                if head.id > after {
                    taken = taken.saturating_add(line.len());
                    batch.events.push(RawEvent {
                        id: head.id,
                        line: String::from_utf8_lossy(line).into_owned(),
                    });
                    if taken >= budget {
                        break;
                    }
                }
            }
        }
    }
    batch.end_offset = lines.offset();
    batch.torn_tail = batch.end_offset < len;
    let offsets: Vec<u64> = pending.iter().map(|p| p.0).collect();
    let numbers = lines::line_numbers(file, &offsets)?;
    for ((_, mut problem), number) in pending.into_iter().zip(numbers) {
        match &mut problem {
            ReadProblem::Invalid { line, .. } | ReadProblem::OutOfOrder { line, .. } => {
                *line = number;
            }
            ReadProblem::SearchFellBack => {}
        }
        batch.problems.push(problem);
    }
    Ok(())
}
