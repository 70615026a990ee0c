//! What runs inside the sandbox's network namespace, between `clone` and
//! `execve`: raw system calls only, like the rest of `child.rs`.
//!
//! A socket belongs to the network namespace it was created in, whoever
//! holds it later. So the namespace side does the least it can: pid 1 opens
//! the router's listener on `127.0.0.1:<port>` (before the command exists,
//! so the command never races it) and passes it out over the link; then it
//! forks one helper whose single power is to open a fresh TCP socket in the
//! namespace whenever the host asks, for published ports and the fake
//! resolver's listeners. With the fake resolver, pid 1 also binds a UDP
//! socket on `127.0.0.53:53` (before the command exists, like the listener)
//! and passes it out second. The host binds,
//! accepts and connects those sockets itself; nothing in here decides
//! anything, reads a path, or talks to the network.

use std::ffi::c_int;

use crate::child::step;

/// The fake resolver's address inside the namespace (systemd-resolved's
/// stub address, so a resolv.conf naming it looks familiar).
pub(crate) const RESOLVER_ADDR: [u8; 4] = [127, 0, 0, 53];

/// Opens the listener (and, with `resolver`, the resolver's UDP socket),
/// hands them out, forks the socket helper, and closes pid 1's copy of the
/// link so neither pid 1 nor the command holds it.
///
/// # Safety
/// Only in the freshly cloned child, after the loopback interface is up.
pub(crate) unsafe fn start(link: c_int, port: u16, resolver: bool, w: c_int) {
    // SAFETY: raw calls on stack data.
    unsafe {
        let s = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        crate::child::check(w, step::ROUTER, s.into());
        let addr = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: port.to_be(),
            sin_addr: libc::in_addr {
                s_addr: u32::from_be_bytes([127, 0, 0, 1]).to_be(),
            },
            sin_zero: [0; 8],
        };
        let rc = libc::bind(
            s,
            (&raw const addr).cast(),
            size_of::<libc::sockaddr_in>() as libc::socklen_t,
        );
        crate::child::check(w, step::ROUTER, rc.into());
        crate::child::check(w, step::ROUTER, libc::listen(s, 1024).into());
        crate::child::check(w, step::ROUTER, send_fd(link, s));
        libc::close(s);
        if resolver {
            // Port 53 needs CAP_NET_BIND_SERVICE, which pid 1 holds over its
            // own namespace until the command execs.
            let u = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
            crate::child::check(w, step::ROUTER, u.into());
            let addr = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: 53u16.to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from_be_bytes(RESOLVER_ADDR).to_be(),
                },
                sin_zero: [0; 8],
            };
            let rc = libc::bind(
                u,
                (&raw const addr).cast(),
                size_of::<libc::sockaddr_in>() as libc::socklen_t,
            );
            crate::child::check(w, step::ROUTER, rc.into());
            crate::child::check(w, step::ROUTER, send_fd(link, u));
            libc::close(u);
        }

        let pid = libc::syscall(
            libc::SYS_clone,
            libc::SIGCHLD,
            0usize,
            0usize,
            0usize,
            0usize,
        );
        crate::child::check(w, step::ROUTER, pid);
        if pid == 0 {
            helper(link);
        }
        libc::close(link);
    }
}

/// The socket helper: one byte in, one fresh TCP socket out, until the host
/// closes its end. Never returns.
unsafe fn helper(link: c_int) -> ! {
    // SAFETY: raw calls; see the module comment.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        libc::prctl(libc::PR_SET_DUMPABLE, 0);
        // Nothing but the link: the setup pipe must reach EOF when the
        // command execs, and the status pipe when pid 1 exits.
        if link > 0 {
            libc::syscall(libc::SYS_close_range, 0u32, (link - 1) as u32, 0u32);
        }
        libc::syscall(libc::SYS_close_range, (link + 1) as u32, u32::MAX, 0u32);
        let mut byte = 0u8;
        loop {
            let n = libc::read(link, (&raw mut byte).cast(), 1);
            if n == 0 || (n < 0 && *libc::__errno_location() != libc::EINTR) {
                libc::_exit(0);
            }
            if n < 0 {
                continue;
            }
            let s = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
            if s < 0 {
                // No descriptor to pass: a bare byte tells the host it failed.
                libc::write(link, (&raw const byte).cast(), 1);
                continue;
            }
            if send_fd(link, s) < 0 {
                libc::_exit(0);
            }
            libc::close(s);
        }
    }
}

/// Sends one byte with `fd` attached (SCM_RIGHTS).
unsafe fn send_fd(link: c_int, fd: c_int) -> libc::c_long {
    // SAFETY: a stack control buffer sized for one descriptor.
    unsafe {
        let mut byte = 1u8;
        let mut iov = libc::iovec {
            iov_base: (&raw mut byte).cast(),
            iov_len: 1,
        };
        let mut control = [0u64; 4];
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &raw mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = libc::CMSG_SPACE(size_of::<c_int>() as u32) as usize;
        let cmsg = libc::CMSG_FIRSTHDR(&raw const msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(size_of::<c_int>() as u32) as usize;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<c_int>(), fd);
        libc::sendmsg(link, &raw const msg, libc::MSG_NOSIGNAL) as libc::c_long
    }
}
