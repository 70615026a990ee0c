//! Parsing a file's lines on several threads and handing them back in file
//! order.
//!
//! Parsing JSON is most of what reading a whole log costs, and each line
//! parses on its own, so the work splits cleanly: the file is cut into
//! fixed-size blocks by byte offset, and a block owns the lines that *start*
//! inside it. A worker reads its block with `pread` (no shared file
//! position), reads one byte before it to know whether the block begins at a
//! line start, and reads past its end until the newline that ends its last
//! line, so a line cut by a block boundary is parsed once, by the block it
//! starts in. Workers take blocks round-robin and send each block's results
//! down their own bounded channel; the caller takes block 0 from worker 0,
//! block 1 from worker 1, and so on, so results arrive in file order without
//! a reordering buffer, and at most a few blocks are held in memory.
//!
//! The rules are those of a single forward read: only complete lines up to
//! `end` count (a final line without its newline is a torn tail or a write in
//! progress, and is left alone), and a line's offset is where it starts. A
//! log smaller than two blocks, or a machine with one core, is read on the
//! calling thread by the same block code, so both paths share their edge
//! cases.

use std::fs::File;
use std::io;
use std::num::NonZeroUsize;
use std::sync::mpsc;

use crate::lines::read_full_at;

/// The bytes each block covers. Large enough that a block holds thousands
/// of lines (per-block costs vanish), small enough that the blocks in flight
/// are a few MiB.
pub(crate) const BLOCK: u64 = 1 << 20;

/// Blocks a worker may finish ahead of the caller.
const AHEAD: usize = 2;

/// At most this many workers: past it, the caller applying results in order
/// is the bottleneck anyway.
const MAX_WORKERS: usize = 4;

/// How the lines of a range are split up.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Split {
    /// Bytes per block.
    pub(crate) block: u64,
    /// Parsing threads; 1 parses on the calling thread.
    pub(crate) workers: usize,
}

impl Split {
    /// The split for a range of `len` bytes on this machine.
    pub(crate) fn for_len(len: u64) -> Split {
        let cores = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
        let workers = if len < 2 * BLOCK {
            1
        } else {
            cores.min(MAX_WORKERS)
        };
        Split {
            block: BLOCK,
            workers,
        }
    }
}

/// One block's lines, parsed: (offset of the line, what `parse` made of it),
/// and the offset just after its last complete line (when it has one).
struct Parsed<T> {
    lines: Vec<(u64, T)>,
    end: Option<u64>,
}

/// Parse every complete line in `[start, end)` of `file` with `parse` and
/// give each result to `each` in file order, with the line's offset.
/// `start` must be a line start. Returns the offset just after the last
/// complete line (`start` when there is none).
pub(crate) fn for_each_line<T: Send>(
    file: &File,
    start: u64,
    end: u64,
    split: Split,
    parse: impl Fn(&[u8]) -> T + Sync,
    mut each: impl FnMut(u64, T),
) -> io::Result<u64> {
    let block = split.block.max(1);
    let blocks = (end.saturating_sub(start)).div_ceil(block);
    let mut last_end = start;
    let mut take = |parsed: Parsed<T>| {
        for (offset, value) in parsed.lines {
            each(offset, value);
        }
        parsed.end
    };
    let workers = u64::try_from(split.workers.max(1))
        .unwrap_or(1)
        .min(blocks.max(1));
    if workers == 1 {
        let mut buf = Vec::new();
        for i in 0..blocks {
            let lo = start + i * block;
            let parsed = parse_block(
                file,
                start,
                lo,
                (lo + block).min(end),
                end,
                &mut buf,
                &parse,
            )?;
            last_end = take(parsed).unwrap_or(last_end);
        }
        return Ok(last_end);
    }
    let parse = &parse;
    std::thread::scope(|scope| {
        let mut receivers = Vec::new();
        for w in 0..workers {
            let (tx, rx) = mpsc::sync_channel::<io::Result<Parsed<T>>>(AHEAD);
            receivers.push(rx);
            scope.spawn(move || {
                let mut buf = Vec::new();
                let mut i = w;
                while i < blocks {
                    let lo = start + i * block;
                    let parsed =
                        parse_block(file, start, lo, (lo + block).min(end), end, &mut buf, parse);
                    let failed = parsed.is_err();
                    // A closed channel means the caller stopped early (an
                    // error in an earlier block): nothing more is wanted.
                    if tx.send(parsed).is_err() || failed {
                        return;
                    }
                    i += workers;
                }
            });
        }
        for i in 0..blocks {
            let rx = &receivers[usize::try_from(i % workers).unwrap_or(0)];
            match rx.recv() {
                Ok(parsed) => last_end = take(parsed?).unwrap_or(last_end),
                // The worker ended without sending: it can only have
                // panicked, which the scope re-raises when it joins.
                Err(_) => break,
            }
        }
        Ok(last_end)
    })
}

/// Parse the lines that start in `[lo, hi)`; `start` is where the range
/// begins (a line start) and `end` where the readable file ends.
fn parse_block<T>(
    file: &File,
    start: u64,
    lo: u64,
    hi: u64,
    end: u64,
    buf: &mut Vec<u8>,
    parse: &impl Fn(&[u8]) -> T,
) -> io::Result<Parsed<T>> {
    // Read from one byte before the block, so that a newline there (or the
    // range's start) says the block opens with a line start.
    let from = if lo > start { lo - 1 } else { lo };
    buf.clear();
    read_into(file, buf, from, hi)?;
    let first = if lo == start {
        0
    } else {
        match memchr::memchr(b'\n', buf) {
            Some(i) => i + 1,
            None => buf.len(),
        }
    };
    let owned = buf.len();
    let mut parsed = Parsed {
        lines: Vec::new(),
        end: None,
    };
    if first >= owned {
        return Ok(parsed);
    }
    // The last line starting in the block may run past it: read on until
    // its newline or the end of the file.
    if buf.last() != Some(&b'\n') {
        let mut chunk = 4096u64;
        loop {
            let pos = from + buf.len() as u64;
            let old = buf.len();
            if pos >= end {
                break;
            }
            read_into(file, buf, pos, (pos + chunk).min(end))?;
            if buf.len() == old || memchr::memchr(b'\n', &buf[old..]).is_some() {
                break;
            }
            chunk = (chunk * 2).min(BLOCK);
        }
    }
    let mut at = first;
    while at < owned {
        let Some(n) = memchr::memchr(b'\n', &buf[at..]) else {
            break;
        };
        let offset = from + at as u64;
        parsed.lines.push((offset, parse(&buf[at..at + n])));
        at += n + 1;
        parsed.end = Some(from + at as u64);
    }
    Ok(parsed)
}

/// Append `[from, to)` of `file` to `buf` (less when the file is shorter).
fn read_into(file: &File, buf: &mut Vec<u8>, from: u64, to: u64) -> io::Result<()> {
    let old = buf.len();
    let want = usize::try_from(to.saturating_sub(from)).unwrap_or(0);
    buf.resize(old + want, 0);
    let n = read_full_at(file, &mut buf[old..], from)?;
    buf.truncate(old + n);
    Ok(())
}

#[cfg(test)]
mod tests;
