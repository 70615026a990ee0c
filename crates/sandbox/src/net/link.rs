//! The host's end of the link into a sandbox's network namespace: a unix
//! socket pair over which the namespace passes out sockets it created (the
//! router's listener first, the fake resolver's UDP socket second when
//! asked for, then one fresh TCP socket per request, for a published port
//! or a fake address's listener). A socket stays in the namespace it was made in, so the
//! host can accept on the listener and connect the fresh sockets to the
//! namespace's loopback without ever entering the namespace itself.

use std::io;
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream, UdpSocket};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Mutex;

/// A unix stream socket pair, both ends close-on-exec: (host, namespace).
pub(crate) fn link_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: socketpair fills two descriptors we then own.
    let rc = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fresh descriptors from socketpair.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// The host's end of one sandbox's router. Dropping it ends the socket
/// helper inside the namespace.
#[derive(Debug)]
pub struct RouterLink {
    link: Mutex<OwnedFd>,
    /// Whether the namespace passes out the fake resolver's socket: asking
    /// for one that will never come would wait forever.
    resolver: bool,
}

impl RouterLink {
    pub(crate) fn new(link: OwnedFd, resolver: bool) -> Self {
        Self {
            link: Mutex::new(link),
            resolver,
        }
    }

    /// The router's listener on the namespace's `127.0.0.1:<port>`, passed
    /// out before the command started. Call once, before [`Self::dial`].
    pub fn listener(&self) -> io::Result<TcpListener> {
        let link = self
            .link
            .lock()
            .map_err(|_| io::Error::other("router link poisoned"))?;
        let fd = recv_fd(link.as_raw_fd())?;
        Ok(TcpListener::from(fd))
    }

    /// The fake resolver's UDP socket on the namespace's `127.0.0.53:53`,
    /// passed out right after the listener when the spec asked for the
    /// resolver. Call once, after [`Self::listener`].
    pub fn resolver_socket(&self) -> io::Result<UdpSocket> {
        if !self.resolver {
            return Err(io::Error::other(
                "this sandbox was not given the fake resolver: build its spec with with_fake_resolver",
            ));
        }
        let link = self
            .link
            .lock()
            .map_err(|_| io::Error::other("router link poisoned"))?;
        let fd = recv_fd(link.as_raw_fd())?;
        Ok(UdpSocket::from(fd))
    }

    /// A connection to `127.0.0.1:<port>` inside the namespace, made from a
    /// socket the namespace's helper opened: the one power it has.
    pub fn dial(&self, port: u16) -> io::Result<TcpStream> {
        let fd = self.fresh()?;
        let sa = sockaddr(SocketAddrV4::new(Ipv4Addr::LOCALHOST, port));
        // SAFETY: connect on a descriptor we own, with a stack address.
        let rc = unsafe {
            libc::connect(
                fd.as_raw_fd(),
                (&raw const sa).cast(),
                size_of::<libc::sockaddr_in>() as libc::socklen_t,
            )
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(TcpStream::from(fd))
    }

    /// A listener on `addr` inside the namespace (a fake resolver's
    /// address), from a socket the helper opened. The host binds it: as
    /// the owner of the sandbox's user namespace it may bind any port
    /// there, 80 and 443 included.
    pub fn listen_on(&self, addr: SocketAddrV4) -> io::Result<TcpListener> {
        let fd = self.fresh()?;
        let sa = sockaddr(addr);
        // SAFETY: bind and listen on a descriptor we own.
        let rc = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                (&raw const sa).cast(),
                size_of::<libc::sockaddr_in>() as libc::socklen_t,
            )
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: as above.
        if unsafe { libc::listen(fd.as_raw_fd(), 128) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(TcpListener::from(fd))
    }

    /// One fresh TCP socket of the namespace, from the helper.
    fn fresh(&self) -> io::Result<OwnedFd> {
        let link = self
            .link
            .lock()
            .map_err(|_| io::Error::other("router link poisoned"))?;
        let one = [1u8];
        // SAFETY: write of a one-byte buffer.
        let n = unsafe { libc::send(link.as_raw_fd(), one.as_ptr().cast(), 1, libc::MSG_NOSIGNAL) };
        if n != 1 {
            return Err(io::Error::other(
                "the sandbox's socket helper is gone (the command ended)",
            ));
        }
        recv_fd(link.as_raw_fd())
    }
}

fn sockaddr(addr: SocketAddrV4) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: addr.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(*addr.ip()).to_be(),
        },
        sin_zero: [0; 8],
    }
}

/// Receives one byte and the descriptor attached to it.
fn recv_fd(link: i32) -> io::Result<OwnedFd> {
    let mut byte = 0u8;
    let mut iov = libc::iovec {
        iov_base: (&raw mut byte).cast(),
        iov_len: 1,
    };
    let mut control = [0u64; 4];
    // SAFETY: a zeroed msghdr pointing at stack buffers.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &raw mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = size_of_val(&control);
    // SAFETY: recvmsg into the buffers above.
    let n = unsafe { libc::recvmsg(link, &raw mut msg, libc::MSG_CMSG_CLOEXEC) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    if n == 0 {
        return Err(io::Error::other(
            "the sandbox's socket helper is gone (the command ended)",
        ));
    }
    // SAFETY: walking the control buffer recvmsg filled.
    unsafe {
        let cmsg = libc::CMSG_FIRSTHDR(&raw const msg);
        if cmsg.is_null()
            || (*cmsg).cmsg_level != libc::SOL_SOCKET
            || (*cmsg).cmsg_type != libc::SCM_RIGHTS
        {
            return Err(io::Error::other(
                "the sandbox's socket helper could not open a socket",
            ));
        }
        let fd = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<i32>());
        Ok(OwnedFd::from_raw_fd(fd))
    }
}
