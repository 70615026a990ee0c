//! Bounded line reading. A peer that never sends a newline must not make the
//! other end buffer forever, so every read has a ceiling and a line past it
//! is an error, not a longer buffer. The rest of such a line is read and
//! thrown away before the error is returned, so the peer, still sending it,
//! is not reset and reads the error line that follows.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// The longest request line the daemon reads: room for a long message.
pub const MAX_REQUEST_LINE: usize = 1 << 20;
/// The longest reply line a client reads: an event can carry a large tool result.
pub const MAX_REPLY_LINE: usize = 64 << 20;

#[derive(Debug, thiserror::Error)]
pub enum LineError {
    #[error("line longer than {limit} bytes: send one request per line, under the limit")]
    TooLong { limit: usize },
    #[error("line is not UTF-8 text: the protocol is UTF-8 lines")]
    NotUtf8,
    #[error("connection closed in the middle of a line (after {0} bytes)")]
    Unterminated(usize),
    #[error("reading the connection failed: {0}")]
    Io(std::io::Error),
}

/// A failed read of the connection; its message says the cause, so the
/// cause is not its `source()` as well.
impl From<std::io::Error> for LineError {
    fn from(error: std::io::Error) -> Self {
        LineError::Io(error)
    }
}

/// Reads lines of at most `limit` bytes (newline excluded) from a buffered stream.
#[derive(Debug)]
pub struct LineReader<R> {
    inner: R,
    limit: usize,
    buf: Vec<u8>,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    pub fn new(inner: R, limit: usize) -> Self {
        LineReader {
            inner,
            limit,
            buf: Vec::new(),
        }
    }

    /// The next line without its newline, or `None` at a clean end of stream.
    /// After an error the stream is in an unknown place: drop the reader.
    pub async fn next_line(&mut self) -> Result<Option<String>, LineError> {
        self.buf.clear();
        loop {
            let available = self.inner.fill_buf().await?;
            if available.is_empty() {
                if self.buf.is_empty() {
                    return Ok(None);
                }
                return Err(LineError::Unterminated(self.buf.len()));
            }
            let (chunk, found) = match available.iter().position(|&b| b == b'\n') {
                Some(at) => (&available[..at], Some(at)),
                None => (available, None),
            };
            if self.buf.len() + chunk.len() > self.limit {
                self.buf = Vec::new();
                self.skip_line().await?;
                return Err(LineError::TooLong { limit: self.limit });
            }
            self.buf.extend_from_slice(chunk);
            let used = found.map_or(chunk.len(), |at| at + 1);
            self.inner.consume(used);
            if found.is_some() {
                let line = std::mem::take(&mut self.buf);
                return String::from_utf8(line)
                    .map(Some)
                    .map_err(|_| LineError::NotUtf8);
            }
        }
    }

    /// Reads and throws away the rest of an over-long line, up to and
    /// including its newline (or the end of the stream), holding no more of
    /// it than the stream's own buffer. The peer is still writing that line:
    /// closing on it unread would reset the connection under its feet, and
    /// the error line sent after it would be lost.
    async fn skip_line(&mut self) -> Result<(), LineError> {
        loop {
            let available = self.inner.fill_buf().await?;
            if available.is_empty() {
                return Ok(());
            }
            match available.iter().position(|&b| b == b'\n') {
                Some(at) => {
                    self.inner.consume(at + 1);
                    return Ok(());
                }
                None => {
                    let len = available.len();
                    self.inner.consume(len);
                }
            }
        }
    }

    pub fn get_mut(&mut self) -> &mut R {
        &mut self.inner
    }
}
