//! A server on a pair of pipes. The server's stdout goes through a pump
//! before the SDK reads it: the SDK skips a line that is not JSON (so a
//! server printing a traceback would just look slow), and reads a line of
//! any length. A session's server is hostile input, so the pump takes the
//! first line that is not JSON, or is over [`MAX_LINE`], as the server
//! failing: it records why and ends the stream, and every wait on the
//! server ends with that reason.

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

use crate::client::{Bounds, Connected, Fault, connect};
use crate::error::McpError;

/// The longest message a server may write: 16 MiB.
pub const MAX_LINE: usize = 16 << 20;

/// Connects to a server whose stdout is `from` and stdin is `to`.
/// `revision` pins one (`2026-07-28`, `2025-11-25`); `None` discovers.
pub async fn connect_stdio<R, W>(
    from: R,
    to: W,
    bounds: Bounds,
    revision: Option<&str>,
) -> Result<Connected, McpError>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let fault: Fault = Arc::new(Mutex::new(None));
    let (checked, read) = tokio::io::duplex(256 * 1024);
    let pump = tokio::spawn(pump(from, checked, Arc::clone(&fault)));
    connect((read, to), bounds, revision, fault, vec![pump]).await
}

fn record(fault: &Fault, err: McpError) {
    if let Ok(mut held) = fault.lock()
        && held.is_none()
    {
        *held = Some(err);
    }
}

/// Copies whole lines that are JSON from `from` to `to`; the first that is
/// not, or is too long, or the end of `from`, is recorded and ends it.
async fn pump<R: AsyncRead + Unpin>(from: R, mut to: tokio::io::DuplexStream, fault: Fault) {
    let mut from = BufReader::with_capacity(64 * 1024, from);
    let mut line: Vec<u8> = Vec::new();
    loop {
        line.clear();
        let ended = loop {
            let buf = match from.fill_buf().await {
                Ok(buf) => buf,
                Err(err) => {
                    record(
                        &fault,
                        McpError::Closed {
                            detail: format!("reading its output failed: {err}"),
                        },
                    );
                    return;
                }
            };
            if buf.is_empty() {
                break true;
            }
            let (take, whole) = match memchr(buf) {
                Some(at) => (at + 1, true),
                None => (buf.len(), false),
            };
            line.extend_from_slice(&buf[..take]);
            from.consume(take);
            if line.len() > MAX_LINE {
                record(&fault, McpError::TooLong { limit: MAX_LINE });
                return;
            }
            if whole {
                break false;
            }
        };
        let text = line.trim_ascii();
        if !text.is_empty() {
            if serde_json::from_slice::<serde::de::IgnoredAny>(text).is_err() {
                let shown: String = String::from_utf8_lossy(text).chars().take(200).collect();
                record(&fault, McpError::Garbage { line: shown });
                return;
            }
            if to.write_all(text).await.is_err() || to.write_all(b"\n").await.is_err() {
                return;
            }
        }
        if ended {
            record(
                &fault,
                McpError::Closed {
                    detail: "its output ended".to_owned(),
                },
            );
            return;
        }
    }
}

fn memchr(buf: &[u8]) -> Option<usize> {
    buf.iter().position(|b| *b == b'\n')
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    /// What the pump passes on and records for `written` from a server.
    async fn pumped(written: Vec<u8>) -> (String, Option<McpError>) {
        let fault: Fault = Arc::new(Mutex::new(None));
        let (mut server, from) = tokio::io::duplex(1 << 16);
        let (checked, mut read) = tokio::io::duplex(1 << 16);
        let writer = tokio::spawn(async move {
            let _ = server.write_all(&written).await;
        });
        let pumping = tokio::spawn(pump(from, checked, Arc::clone(&fault)));
        let mut out = Vec::new();
        read.read_to_end(&mut out).await.unwrap();
        pumping.await.unwrap();
        writer.abort();
        let held = fault.lock().unwrap().clone();
        (String::from_utf8(out).unwrap(), held)
    }

    #[tokio::test]
    async fn json_lines_pass_whole_and_the_end_is_recorded() {
        let (out, fault) = pumped(b"{\"a\":1}\r\n\n  {\"b\":2}\n".to_vec()).await;
        assert_eq!(out, "{\"a\":1}\n{\"b\":2}\n");
        assert!(matches!(fault, Some(McpError::Closed { .. })), "{fault:?}");
    }

    #[tokio::test]
    async fn the_first_line_that_is_not_json_ends_the_stream_and_is_said() {
        let (out, fault) = pumped(b"{\"a\":1}\nTraceback: oops\n{\"b\":2}\n".to_vec()).await;
        assert_eq!(out, "{\"a\":1}\n");
        match fault {
            Some(McpError::Garbage { line }) => assert_eq!(line, "Traceback: oops"),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn a_line_over_the_bound_ends_the_stream_without_keeping_it() {
        let mut huge = vec![b'"'; MAX_LINE + 2];
        huge.push(b'\n');
        let (out, fault) = pumped(huge).await;
        assert_eq!(out, "");
        assert!(matches!(fault, Some(McpError::TooLong { .. })), "{fault:?}");
    }
}
