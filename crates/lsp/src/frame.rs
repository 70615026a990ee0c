//! The base protocol's framing: `Content-Length: <n>\r\n`, any other
//! headers, an empty line, then `n` bytes of JSON. Anything else from a
//! server is garbage, and garbage is the server failing, not a line to
//! skip: a client that skips cannot tell where the next message starts.

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::error::LspError;

/// The largest message a server may send (a whole file's diagnostics fit
/// many times over).
pub const MAX_FRAME: usize = 16 * 1024 * 1024;

/// The longest header line a server may send.
const MAX_HEADER: usize = 1024;

/// Reads one message's JSON body; `None` at a clean end of stream.
pub(crate) async fn read<R: AsyncBufRead + Unpin>(
    reader: &mut R,
) -> Result<Option<Vec<u8>>, LspError> {
    let mut length = None;
    let mut line = Vec::new();
    let mut first = true;
    loop {
        line.clear();
        let n = (&mut *reader)
            .take(MAX_HEADER as u64 + 1)
            .read_until(b'\n', &mut line)
            .await
            .map_err(LspError::Io)?;
        if n == 0 {
            return if first {
                Ok(None)
            } else {
                Err(LspError::Garbage(
                    "the stream ended inside a header".to_owned(),
                ))
            };
        }
        first = false;
        if n > MAX_HEADER || !line.ends_with(b"\n") {
            return Err(LspError::Garbage(format!(
                "a header line longer than {MAX_HEADER} bytes"
            )));
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            break;
        }
        let header = text.split_once(':').filter(|(name, _)| {
            !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        });
        let Some((name, value)) = header else {
            return Err(LspError::Garbage(format!(
                "{:?} where a Content-Length header belongs",
                shorten(text)
            )));
        };
        if name.eq_ignore_ascii_case("content-length") {
            length = Some(value.trim().parse::<usize>().map_err(|_| {
                LspError::Garbage(format!("a Content-Length of {:?}", shorten(value)))
            })?);
        }
    }
    let length =
        length.ok_or_else(|| LspError::Garbage("a message with no Content-Length".to_owned()))?;
    if length > MAX_FRAME {
        return Err(LspError::Garbage(format!(
            "a message of {length} bytes, over the bound of {MAX_FRAME}"
        )));
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).await.map_err(LspError::Io)?;
    Ok(Some(body))
}

/// Writes one message.
pub(crate) async fn write<W: AsyncWrite + Unpin>(
    writer: &mut W,
    body: &[u8],
) -> Result<(), LspError> {
    let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    frame.extend_from_slice(body);
    writer.write_all(&frame).await.map_err(LspError::Io)?;
    writer.flush().await.map_err(LspError::Io)
}

fn shorten(text: &str) -> String {
    text.chars().take(80).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn one(bytes: &[u8]) -> Result<Option<Vec<u8>>, LspError> {
        read(&mut tokio::io::BufReader::new(bytes)).await
    }

    #[tokio::test]
    async fn a_frame_is_read_and_garbage_is_an_error_that_says_what_came() {
        let body = one(b"Content-Length: 2\r\nContent-Type: x\r\n\r\n{}")
            .await
            .unwrap();
        assert_eq!(body.as_deref(), Some(&b"{}"[..]));
        assert!(one(b"").await.unwrap().is_none());
        let err = one(b"hello world\n").await.unwrap_err().to_string();
        assert!(
            err.contains("\"hello world\" where a Content-Length header belongs"),
            "{err}"
        );
        let err = one(b"Traceback (most recent call last): oops\n")
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("\"Traceback (most recent call last): oops\" where"),
            "{err}"
        );
        let err = one(b"Content-Length: 99999999999\r\n\r\n")
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("over the bound"), "{err}");
        let err = one(b"Content-Type: x\r\n\r\n")
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("no Content-Length"), "{err}");
    }
}
