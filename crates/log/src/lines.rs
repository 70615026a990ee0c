//! Reading lines at byte offsets with `pread`, forwards and backwards.
//!
//! Readers and the writer's torn-tail repair both need to look at a few
//! lines near an arbitrary offset of a file that may be hundreds of
//! megabytes, without reading it from the start and without moving a shared
//! file position (several readers may share one descriptor).

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

/// Read as much of `[offset, offset + buf.len())` as the file holds.
pub(crate) fn read_full_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

/// The offset of the first line start at or after `offset` and before
/// `end`: `offset` itself when it is 0 or follows a newline.
pub(crate) fn line_start_at_or_after(
    file: &File,
    offset: u64,
    end: u64,
) -> io::Result<Option<u64>> {
    if offset == 0 {
        return Ok((end > 0).then_some(0));
    }
    let mut pos = offset - 1;
    let mut buf = [0u8; 4096];
    while pos < end {
        let want = usize::try_from((end - pos).min(buf.len() as u64)).unwrap_or(buf.len());
        let n = read_full_at(file, &mut buf[..want], pos)?;
        if n == 0 {
            return Ok(None);
        }
        if let Some(i) = memchr::memchr(b'\n', &buf[..n]) {
            let start = pos + i as u64 + 1;
            return Ok((start < end).then_some(start));
        }
        pos += n as u64;
    }
    Ok(None)
}

/// The complete line starting at `start` (without its newline), or `None`
/// when no newline ends it before `end` (a torn tail).
pub(crate) fn line_at(
    file: &File,
    start: u64,
    end: u64,
    first: usize,
) -> io::Result<Option<Vec<u8>>> {
    let mut line = Vec::new();
    let mut pos = start;
    let mut chunk = first.max(64);
    while pos < end {
        let want = usize::try_from((end - pos).min(chunk as u64)).unwrap_or(chunk);
        let old = line.len();
        line.resize(old + want, 0);
        let n = read_full_at(file, &mut line[old..], pos)?;
        line.truncate(old + n);
        if n == 0 {
            break;
        }
        if let Some(i) = memchr::memchr(b'\n', &line[old..]) {
            line.truncate(old + i);
            return Ok(Some(line));
        }
        pos += n as u64;
        chunk = chunk.saturating_mul(2).min(1 << 20);
    }
    Ok(None)
}

/// The offset just after the last newline before `end` (0 when none).
pub(crate) fn end_of_last_complete_line(file: &File, end: u64) -> io::Result<u64> {
    let mut pos = end;
    let mut buf = vec![0u8; 64 * 1024];
    while pos > 0 {
        let from = pos.saturating_sub(buf.len() as u64);
        let len = usize::try_from(pos - from).unwrap_or(0);
        let n = read_full_at(file, &mut buf[..len], from)?;
        if let Some(i) = memchr::memrchr(b'\n', &buf[..n]) {
            return Ok(from + i as u64 + 1);
        }
        pos = from;
    }
    Ok(0)
}

/// The 1-based line numbers of the lines starting at `offsets` (ascending),
/// counted in one pass over the file up to the last of them. Only called
/// when there are problems to report, so only broken logs pay for it.
pub(crate) fn line_numbers(file: &File, offsets: &[u64]) -> io::Result<Vec<u64>> {
    let mut numbers = Vec::with_capacity(offsets.len());
    let mut count = 0u64;
    let mut pos = 0u64;
    let mut buf = vec![0u8; 1 << 20];
    for &offset in offsets {
        while pos < offset {
            let want = usize::try_from((offset - pos).min(buf.len() as u64)).unwrap_or(buf.len());
            let n = read_full_at(file, &mut buf[..want], pos)?;
            if n == 0 {
                break;
            }
            count += memchr::memchr_iter(b'\n', &buf[..n]).count() as u64;
            pos += n as u64;
        }
        numbers.push(count + 1);
    }
    Ok(numbers)
}

/// Complete lines from `start` to `end`, read in large chunks; each item is
/// (offset of the line, the line without its newline).
pub(crate) struct ForwardLines<'f> {
    file: &'f File,
    pos: u64,
    end: u64,
    buf: Vec<u8>,
    /// Bytes of `buf` already handed out.
    used: usize,
    /// File offset of `buf[0]`.
    buf_offset: u64,
}

impl<'f> ForwardLines<'f> {
    pub(crate) fn new(file: &'f File, start: u64, end: u64) -> Self {
        ForwardLines {
            file,
            pos: start,
            end,
            buf: Vec::new(),
            used: 0,
            buf_offset: start,
        }
    }

    /// The offset just after the last complete line returned.
    pub(crate) fn offset(&self) -> u64 {
        self.buf_offset + self.used as u64
    }

    /// The next complete line, or `None` at the end (a trailing partial line
    /// is never returned; `offset()` then points at its start).
    pub(crate) fn next_line(&mut self) -> io::Result<Option<(u64, &[u8])>> {
        loop {
            if let Some(i) = memchr::memchr(b'\n', &self.buf[self.used..]) {
                let start = self.used;
                self.used += i + 1;
                let offset = self.buf_offset + start as u64;
                return Ok(Some((offset, &self.buf[start..start + i])));
            }
            if self.pos >= self.end {
                return Ok(None);
            }
            // Keep the partial line, drop what was handed out, read more.
            self.buf.drain(..self.used);
            self.buf_offset += self.used as u64;
            self.used = 0;
            let chunk = (self.end - self.pos).min(1 << 20);
            let chunk = usize::try_from(chunk).unwrap_or(1 << 20);
            let old = self.buf.len();
            self.buf.resize(old + chunk, 0);
            let n = read_full_at(self.file, &mut self.buf[old..], self.pos)?;
            self.buf.truncate(old + n);
            if n == 0 {
                self.end = self.pos;
                return Ok(None);
            }
            self.pos += n as u64;
        }
    }
}
