//! Carrying a connection's bytes between two sockets once the proxy has
//! decided it: `splice(2)` through a pipe per direction, so the bytes move
//! between the two sockets' buffers inside the kernel and never through
//! this process's memory.
//!
//! The copying loop (read into a buffer, write it out) costs two copies of
//! every byte and a system call per buffer on each side; on a loopback
//! download the proxy's copies were the routed path's bottleneck
//! (docs/performance.md). `splice` needs a pipe between the sockets, so each
//! direction gets one, made when the tunnel starts: two descriptors per
//! direction, only for carried connections (a refused client never has
//! any). When either side is not a plain socket this module knows (a test's
//! in-memory stream), or no pipe can be made (descriptors or the user's pipe
//! budget exhausted), the connection falls back to copying: slower, same
//! bytes.
//!
//! Readiness comes from tokio (`ready` and `try_io`, which clears
//! readiness on `EAGAIN`), so a carried connection is an ordinary task on
//! the caller's runtime, and no thread is ever blocked in `splice`. Unlike
//! `send` with `MSG_NOSIGNAL`, a `splice` into a socket whose peer has gone
//! raises `SIGPIPE`: Rust programs ignore it from the start, and a program
//! embedding the router must too (docs/network.md).

use std::any::Any;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::io::{AsyncRead, AsyncWrite, Interest};
use tokio::net::{TcpStream, UnixStream};

/// Buffer size each direction uses when copying: tokio's default of 8 KiB
/// costs about half the throughput of a loopback download in system calls.
const COPY_BUFFER: usize = 256 * 1024;

/// Most bytes one `splice` call moves; the pipe holds what the kernel gives
/// it, so this only caps a single call.
const SPLICE_CHUNK: usize = 1024 * 1024;

/// Pipe capacity a bulk connection grows to: the most an unprivileged
/// process may ask for (`/proc/sys/fs/pipe-max-size`, 1 MiB by default).
/// Every pipe starts at the kernel's 64 KiB; one splice that fills it shows
/// a bulk transfer, and the pipe grows so that each wake-up of the proxy
/// moves up to a megabyte: fewer system calls, fewer wake-ups of the
/// programs on either side, and fewer acknowledgements sent from here.
/// From 256 KiB to 1 MiB took the routed share of a loopback download from
/// about 0.45 to 0.6 of direct (docs/performance.md).
const PIPE_SIZE: libc::c_int = 1024 * 1024;

/// How many pipes may be grown at once. Every pipe page counts against the
/// person's per-user pipe budget (`/proc/sys/fs/pipe-user-pages-soft`,
/// 64 MiB by default), and a user past it gets single-page pipes in every
/// program (a shell pipeline too); 8 pipes of 1 MiB keep the router to
/// 8 MiB of it however many connections it carries. Connections past that
/// keep the default size: slower, same bytes.
const MAX_ENLARGED: usize = 8;

/// Pipes of this process grown to [`PIPE_SIZE`] and still open.
static ENLARGED: AtomicUsize = AtomicUsize::new(0);

/// A socket this module can splice, borrowed from the caller's stream.
#[derive(Clone, Copy)]
enum Sock<'a> {
    Tcp(&'a TcpStream),
    Unix(&'a UnixStream),
}

impl Sock<'_> {
    fn of<S: Any>(s: &S) -> Option<Sock<'_>> {
        let any: &dyn Any = s;
        if let Some(t) = any.downcast_ref::<TcpStream>() {
            return Some(Sock::Tcp(t));
        }
        any.downcast_ref::<UnixStream>().map(Sock::Unix)
    }

    fn fd(self) -> RawFd {
        match self {
            Sock::Tcp(s) => s.as_raw_fd(),
            Sock::Unix(s) => s.as_raw_fd(),
        }
    }

    async fn ready(self, interest: Interest) -> io::Result<()> {
        match self {
            Sock::Tcp(s) => s.ready(interest).await.map(drop),
            Sock::Unix(s) => s.ready(interest).await.map(drop),
        }
    }

    fn try_io<R>(self, interest: Interest, f: impl FnOnce() -> io::Result<R>) -> io::Result<R> {
        match self {
            Sock::Tcp(s) => s.try_io(interest, f),
            Sock::Unix(s) => s.try_io(interest, f),
        }
    }

    /// Repeats `f` until it does not say "would block", waiting for
    /// `interest` in between.
    async fn until_ready(
        self,
        interest: Interest,
        mut f: impl FnMut() -> io::Result<usize>,
    ) -> io::Result<usize> {
        loop {
            self.ready(interest).await?;
            match self.try_io(interest, &mut f) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                r => return r,
            }
        }
    }
}

/// A non-blocking pipe: (read end, write end).
struct Pipe {
    r: OwnedFd,
    w: OwnedFd,
    /// Bytes it holds at most, as the kernel reports.
    capacity: usize,
    /// Counted in [`ENLARGED`].
    enlarged: bool,
}

impl Drop for Pipe {
    fn drop(&mut self) {
        if self.enlarged {
            ENLARGED.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

impl Pipe {
    fn new() -> io::Result<Self> {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: pipe2 fills two descriptors we then own.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fresh descriptors from pipe2.
        let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        // SAFETY: fcntl on a descriptor we own.
        let size = unsafe { libc::fcntl(w.as_raw_fd(), libc::F_GETPIPE_SZ) };
        Ok(Self {
            r,
            w,
            capacity: usize::try_from(size).unwrap_or(0),
            enlarged: false,
        })
    }

    /// Grows the pipe to [`PIPE_SIZE`] if fewer than [`MAX_ENLARGED`] pipes
    /// are grown already (and the kernel agrees); otherwise it stays as it
    /// is. Called once the pipe is empty.
    fn grow(&mut self) {
        if self.enlarged {
            return;
        }
        if ENLARGED.fetch_add(1, Ordering::AcqRel) >= MAX_ENLARGED {
            ENLARGED.fetch_sub(1, Ordering::AcqRel);
            return;
        }
        // SAFETY: fcntl on a descriptor we own.
        let size = unsafe { libc::fcntl(self.w.as_raw_fd(), libc::F_SETPIPE_SZ, PIPE_SIZE) };
        match usize::try_from(size) {
            Ok(size) => {
                self.capacity = size;
                self.enlarged = true;
            }
            // Past the person's pipe budget, or a lower pipe-max-size.
            Err(_) => {
                ENLARGED.fetch_sub(1, Ordering::AcqRel);
            }
        }
    }
}

fn splice(from: RawFd, to: RawFd, len: usize) -> io::Result<usize> {
    // SAFETY: splice between two descriptors the caller holds, no offsets.
    let n = unsafe {
        libc::splice(
            from,
            std::ptr::null_mut(),
            to,
            std::ptr::null_mut(),
            len,
            libc::SPLICE_F_MOVE | libc::SPLICE_F_NONBLOCK,
        )
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n as usize)
}

/// One direction: `src` to `dst` through `pipe` until `src` ends, then a
/// half-close of `dst` so its reader sees the end too.
async fn pump(src: Sock<'_>, dst: Sock<'_>, mut pipe: Pipe) -> io::Result<u64> {
    let (pr, pw) = (pipe.r.as_raw_fd(), pipe.w.as_raw_fd());
    let mut total = 0u64;
    loop {
        // The pipe is empty here, so "would block" can only mean that the
        // socket has nothing to read.
        let n = src
            .until_ready(Interest::READABLE, || splice(src.fd(), pw, SPLICE_CHUNK))
            .await?;
        if n == 0 {
            // SAFETY: shutdown on a socket the caller holds.
            unsafe { libc::shutdown(dst.fd(), libc::SHUT_WR) };
            return Ok(total);
        }
        let mut left = n;
        while left > 0 {
            let m = dst
                .until_ready(Interest::WRITABLE, || splice(pr, dst.fd(), left))
                .await?;
            if m == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            left -= m.min(left);
        }
        total += n as u64;
        if n >= pipe.capacity {
            pipe.grow();
        }
    }
}

/// Copies both ways until both sides are done, as
/// `tokio::io::copy_bidirectional` does: returns the bytes carried from `a`
/// to `b` and from `b` to `a`.
pub(crate) async fn carry<A, B>(a: &mut A, b: &mut B) -> io::Result<(u64, u64)>
where
    A: AsyncRead + AsyncWrite + Unpin + Any,
    B: AsyncRead + AsyncWrite + Unpin + Any,
{
    if let (Some(sa), Some(sb)) = (Sock::of(&*a), Sock::of(&*b))
        && let (Ok(ab), Ok(ba)) = (Pipe::new(), Pipe::new())
    {
        return tokio::try_join!(pump(sa, sb, ab), pump(sb, sa, ba));
    }
    tokio::io::copy_bidirectional_with_sizes(a, b, COPY_BUFFER, COPY_BUFFER).await
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    async fn pair() -> (TcpStream, TcpStream) {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        let (c, s) = tokio::join!(TcpStream::connect(addr), l.accept());
        (c.unwrap(), s.unwrap().0)
    }

    /// Bytes both ways, larger than any pipe, arrive whole and in order,
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

    /// Pipes start at the kernel's size; however many grow, at most
    /// `MAX_ENLARGED` do, and closing one frees its place.
    #[test]
    fn only_a_bounded_number_of_pipes_grow() {
        // SAFETY: fcntl on a descriptor the pipe owns.
        let size = |p: &Pipe| unsafe { libc::fcntl(p.w.as_raw_fd(), libc::F_GETPIPE_SZ) };
        let mut pipes: Vec<Pipe> = (0..MAX_ENLARGED + 8)
            .map(|_| Pipe::new().unwrap())
            .collect();
        assert!(pipes.iter().all(|p| size(p) < PIPE_SIZE));
        for p in &mut pipes {
            p.grow();
            assert_eq!(usize::try_from(size(p)).unwrap(), p.capacity);
        }
        let big = pipes.iter().filter(|p| size(p) == PIPE_SIZE).count();
        assert!(big <= MAX_ENLARGED, "{big} pipes grown");
        assert!(big > 0, "no pipe grew");
        assert!(pipes.iter().any(|p| size(p) < PIPE_SIZE));
        drop(pipes);
        let mut again = Pipe::new().unwrap();
        again.grow();
        assert_eq!(size(&again), PIPE_SIZE);
    }

    /// A stream that is not a socket (here an in-memory duplex) is copied.
    #[tokio::test]
    async fn other_streams_are_copied() {
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
