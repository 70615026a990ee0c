//! Carrying a connection's bytes between its two sides once the proxy has
//! decided it: one buffer per direction, read from one side and written to
//! the other, as `tokio::io::copy_bidirectional` does, but with a buffer
//! that grows for bulk transfers.
//!
//! Measured against each other in one run on the quiet machine
//! (docs/performance.md, "Sandbox network"), copying through large buffers
//! carried a loopback download faster than `splice(2)` through a pipe, 1
//! MiB buffers about 10% faster than 256 KiB ones, and a 64 KiB buffer
//! slower still: what a routed byte costs is mostly the two TCP
//! connections' own work, and a larger read or write means fewer system
//! calls and fewer wake-ups of the programs on either side. A buffer that
//! size for every connection would cost the router up to 2 GiB at its
//! connection cap, so each direction starts at [`START`] and grows to
//! [`BULK`] once a read fills it (a bulk transfer), for at most
//! [`MAX_BULK`] buffers at once; the rest stay small: slower, same bytes.

use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// What each direction's buffer starts at.
const START: usize = 16 * 1024;

/// What a bulk direction's buffer grows to.
const BULK: usize = 1024 * 1024;

/// How many buffers may be grown at once: 8 MiB of the router's memory
/// however many connections it carries (eight downloads at full speed at
/// once; a ninth carries on with its small buffer).
const MAX_BULK: usize = 8;

/// Buffers of this process grown to [`BULK`] and still alive.
static GROWN: AtomicUsize = AtomicUsize::new(0);

/// One direction's buffer.
struct Buffer {
    data: Vec<u8>,
    /// Counted in [`GROWN`].
    grown: bool,
}

impl Buffer {
    fn new() -> Self {
        Self {
            data: vec![0; START],
            grown: false,
        }
    }

    /// Grows to [`BULK`] if fewer than [`MAX_BULK`] buffers are grown
    /// already; otherwise stays as it is.
    fn grow(&mut self) {
        if self.grown {
            return;
        }
        if GROWN.fetch_add(1, Ordering::AcqRel) >= MAX_BULK {
            GROWN.fetch_sub(1, Ordering::AcqRel);
            return;
        }
        self.data.resize(BULK, 0);
        self.grown = true;
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        if self.grown {
            GROWN.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// One direction: `src` to `dst` until `src` ends, then a half-close of
/// `dst` so its reader sees the end too.
async fn pump<R, W>(mut src: R, mut dst: W) -> io::Result<u64>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut buffer = Buffer::new();
    let mut total = 0u64;
    loop {
        let n = src.read(&mut buffer.data).await?;
        if n == 0 {
            dst.shutdown().await?;
            return Ok(total);
        }
        dst.write_all(&buffer.data[..n]).await?;
        total += n as u64;
        if n == buffer.data.len() {
            buffer.grow();
        }
    }
}

/// Copies both ways until both sides are done, as
/// `tokio::io::copy_bidirectional` does: returns the bytes carried from `a`
/// to `b` and from `b` to `a`.
pub(crate) async fn carry<A, B>(a: &mut A, b: &mut B) -> io::Result<(u64, u64)>
where
    A: AsyncRead + AsyncWrite + Unpin,
    B: AsyncRead + AsyncWrite + Unpin,
{
    let (ar, aw) = tokio::io::split(a);
    let (br, bw) = tokio::io::split(b);
    tokio::try_join!(pump(ar, bw), pump(br, aw))
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    use super::*;

    async fn pair() -> (TcpStream, TcpStream) {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        let (c, s) = tokio::join!(TcpStream::connect(addr), l.accept());
        (c.unwrap(), s.unwrap().0)
    }

    /// Bytes both ways, larger than any buffer, arrive whole and in order,
    /// and each side's end reaches the other as a half-close.
    #[tokio::test]
    async fn carries_both_ways_and_passes_the_end_on() {
        let (mut client, mut a) = pair().await;
        let (mut b, mut server) = pair().await;
        let bridge = tokio::spawn(async move { carry(&mut a, &mut b).await });
        let up: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        let down: Vec<u8> = (0..5_000_000u32).map(|i| (i % 241) as u8).collect();
        let (up2, down2) = (up.clone(), down.clone());
        let c = tokio::spawn(async move {
            client.write_all(&up2).await.unwrap();
            client.shutdown().await.unwrap();
            let mut got = Vec::new();
            client.read_to_end(&mut got).await.unwrap();
            got
        });
        let s = tokio::spawn(async move {
            let mut got = Vec::new();
            server.read_to_end(&mut got).await.unwrap();
            server.write_all(&down2).await.unwrap();
            server.shutdown().await.unwrap();
            got
        });
        let (c, s) = (c.await.unwrap(), s.await.unwrap());
        assert!(
            s == up,
            "client to server: {} of {} bytes",
            s.len(),
            up.len()
        );
        assert!(
            c == down,
            "server to client: {} of {} bytes",
            c.len(),
            down.len()
        );
        let (ab, ba) = bridge.await.unwrap().unwrap();
        assert_eq!((ab, ba), (up.len() as u64, down.len() as u64));
    }

    /// Buffers start small; however many grow, at most `MAX_BULK` do, and
    /// dropping one frees its place.
    #[test]
    fn only_a_bounded_number_of_buffers_grow() {
        let mut buffers: Vec<Buffer> = (0..MAX_BULK + 8).map(|_| Buffer::new()).collect();
        assert!(buffers.iter().all(|b| b.data.len() == START));
        for b in &mut buffers {
            b.grow();
        }
        let big = buffers.iter().filter(|b| b.data.len() == BULK).count();
        assert!(big <= MAX_BULK, "{big} buffers grown");
        assert!(big > 0, "no buffer grew");
        assert!(buffers.iter().any(|b| b.data.len() == START));
        drop(buffers);
        let mut again = Buffer::new();
        again.grow();
        assert_eq!(again.data.len(), BULK);
    }

    /// A stream that is not a socket (here an in-memory duplex) is carried
    /// the same way.
    #[tokio::test]
    async fn other_streams_are_carried() {
        let (mut client, mut a) = tokio::io::duplex(1024);
        let (mut b, mut server) = pair().await;
        let bridge = tokio::spawn(async move { carry(&mut a, &mut b).await });
        client.write_all(b"hello").await.unwrap();
        client.shutdown().await.unwrap();
        let mut got = Vec::new();
        server.read_to_end(&mut got).await.unwrap();
        assert_eq!(got, b"hello");
        server.write_all(b"back").await.unwrap();
        server.shutdown().await.unwrap();
        let mut back = Vec::new();
        client.read_to_end(&mut back).await.unwrap();
        assert_eq!(back, b"back");
        assert_eq!(bridge.await.unwrap().unwrap(), (5, 4));
    }
}
