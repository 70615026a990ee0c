//! The sandbox's fresh network namespace, made by a helper while pid 1
//! builds the root.
//!
//! Creating a network namespace is most of a sandbox's kernel time: about
//! 0.4 ms on the machines measured, against 0.06 ms for the user, pid,
//! mount, ipc and uts namespaces together (docs/performance.md), and the
//! kernel spends it in the process that asks. So the parent's `clone`
//! leaves the network out, and pid 1 starts a helper that unshares one,
//! brings up its loopback and opens a descriptor of it (`SIOCGSKNS` on the
//! loopback's socket) while pid 1 mounts the new root on another CPU. Pid 1
//! then waits for the helper to exit, enters the namespace by that
//! descriptor (`setns`) before anything of the command's runs, and closes
//! it. Where the helper cannot be started or fails to open the descriptor
//! (an architecture without the raw calls below), pid 1 makes the namespace
//! itself; a namespace the kernel refuses is reported like a refused user
//! namespace.
//!
//! The helper shares pid 1's memory and descriptor table (`CLONE_VM |
//! CLONE_FILES`: nothing to copy, nothing to tear down) and runs at the
//! same time as pid 1, so it touches nothing pid 1 uses: it runs on a stack
//! of its own, leaves its result in that stack's mapping, which pid 1 reads
//! only after reaping it, and makes its system calls with the `syscall`
//! instruction directly, never through the C library, which would write
//! `errno` in the thread storage both processes point at.

use std::ffi::c_int;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::child::{errno, fail, step};

/// The helper's mapping: its result in the first eight bytes, its stack
/// above (its code uses a few hundred bytes).
const STACK: usize = 16 * 1024;

/// How pid 1 gets its network namespace: [`Mode::Helper`] but in tests
/// (`CHOCK_SANDBOX_FORCE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Helper,
    /// Pid 1 unshares it itself, as where no helper can be started.
    Itself,
    /// The helper reports the namespace refused (EPERM) without trying.
    Refused,
}

/// A started helper, or none (pid 1 then makes the namespace itself).
pub(crate) struct Helper {
    /// The helper's pid, or -1.
    pid: libc::pid_t,
    /// Where the helper leaves its result ([`Outcome`]).
    result: *const AtomicU64,
}

/// What the helper leaves for pid 1, packed in 64 bits: the namespace's
/// descriptor when it succeeded, else the step that failed and its errno.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Ready(c_int),
    Failed(u32, i32),
}

impl Outcome {
    const READY: u64 = 1 << 63;

    fn pack(self) -> u64 {
        match self {
            Outcome::Ready(fd) => Self::READY | u64::from(fd as u32),
            Outcome::Failed(st, err) => (u64::from(st) << 32) | u64::from(err as u32),
        }
    }

    /// `None` for 0: the helper died before it wrote anything.
    fn unpack(v: u64) -> Option<Self> {
        if v == 0 {
            None
        } else if v & Self::READY != 0 {
            Some(Outcome::Ready((v & 0xffff_ffff) as u32 as c_int))
        } else {
            Some(Outcome::Failed(
                (v >> 32) as u32,
                (v & 0xffff_ffff) as u32 as i32,
            ))
        }
    }
}

impl Helper {
    const NONE: Self = Self {
        pid: -1,
        result: std::ptr::null(),
    };

    /// Starts the helper; never fails (see [`Self::join`]).
    ///
    /// # Safety
    /// Only in pid 1, before it forks anything else.
    pub(crate) unsafe fn start(mode: Mode) -> Self {
        if !raw::SUPPORTED || mode == Mode::Itself {
            return Self::NONE;
        }
        // SAFETY: raw calls on a fresh mapping.
        unsafe {
            let base = libc::mmap(
                std::ptr::null_mut(),
                STACK,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
                -1,
                0,
            );
            if base == libc::MAP_FAILED {
                return Self::NONE;
            }
            let result = base.cast::<AtomicU64>();
            // The slot starts as the helper's one instruction.
            (*result).store(u64::from(mode == Mode::Refused), Ordering::Relaxed);
            let top = base.cast::<u8>().add(STACK).cast();
            let pid = libc::clone(
                helper_main,
                top,
                libc::CLONE_VM | libc::CLONE_FILES | libc::SIGCHLD,
                result.cast(),
            );
            // The mapping stays: it goes with pid 1.
            if pid < 0 {
                return Self::NONE;
            }
            Self { pid, result }
        }
    }

    /// Enters the helper's namespace, or makes one here; a failure is
    /// reported on the setup pipe `w` and ends pid 1.
    ///
    /// # Safety
    /// Only in pid 1.
    pub(crate) unsafe fn join(self, w: c_int) {
        // SAFETY: raw calls; `result` is in the helper's mapping, read once
        // the helper has been reaped.
        unsafe {
            if self.pid > 0 {
                let mut status = 0;
                while libc::waitpid(self.pid, &raw mut status, libc::__WALL) < 0
                    && errno() == libc::EINTR
                {}
                match Outcome::unpack((*self.result).load(Ordering::Acquire)) {
                    Some(Outcome::Failed(st, err)) => fail(w, st, err),
                    Some(Outcome::Ready(fd)) => {
                        let joined = libc::setns(fd, libc::CLONE_NEWNET) == 0;
                        libc::close(fd);
                        if joined {
                            return;
                        }
                    }
                    None => {}
                }
            }
            match make(|nr, a, b, c| {
                let rc = libc::syscall(nr, a, b, c);
                if rc < 0 {
                    -libc::c_long::from(errno())
                } else {
                    rc
                }
            }) {
                Ok(sock) => {
                    libc::close(sock as c_int);
                }
                Err((st, err)) => fail(w, st, err),
            }
        }
    }
}

/// `ioctl` on a socket that opens its network namespace (Linux 4.9).
const SIOCGSKNS: libc::c_long = 0x894c;

/// The helper: make the namespace, leave the outcome, exit. Raw system
/// calls only (see the module comment).
extern "C" fn helper_main(result: *mut libc::c_void) -> c_int {
    // SAFETY: `result` is the start of this helper's own mapping, which pid
    // 1 reads only after reaping the helper.
    let slot = unsafe { &*result.cast::<AtomicU64>() };
    let call = |nr, a, b, c| {
        // SAFETY: the calls below, on the helper's own stack data.
        unsafe { raw::call3(nr, a, b, c) }
    };
    let outcome = if slot.load(Ordering::Relaxed) == 1 {
        Some(Outcome::Failed(step::NETNS, libc::EPERM))
    } else {
        match make(call) {
            Err((st, err)) => Some(Outcome::Failed(st, err)),
            Ok(sock) => {
                let ns = call(libc::SYS_ioctl, sock, SIOCGSKNS, 0);
                call(libc::SYS_close, sock, 0, 0);
                // Without the descriptor pid 1 makes a namespace itself.
                c_int::try_from(ns)
                    .ok()
                    .filter(|fd| *fd >= 0)
                    .map(Outcome::Ready)
            }
        }
    };
    slot.store(outcome.map_or(0, Outcome::pack), Ordering::Release);
    call(libc::SYS_exit, 0, 0, 0);
    0
}

/// `struct ifreq` with the flags member, padded to the kernel's 40 bytes.
#[repr(C)]
struct IfReqFlags {
    name: [u8; 16],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// Unshares a network namespace and brings up its loopback (it starts
/// down), so a command can serve and reach its own loopback; the namespace
/// has no other interface, nothing leaves it. `call` makes a system call
/// and returns the result or `-errno`. Returns the socket that brought the
/// loopback up (the caller closes it), or the step that failed and its
/// errno.
fn make(
    call: impl Fn(libc::c_long, libc::c_long, libc::c_long, libc::c_long) -> libc::c_long,
) -> Result<libc::c_long, (u32, i32)> {
    let errno = |rc: libc::c_long| i32::try_from(-rc).unwrap_or(libc::EIO);
    let rc = call(
        libc::SYS_unshare,
        libc::c_long::from(libc::CLONE_NEWNET),
        0,
        0,
    );
    if rc < 0 {
        return Err((step::NETNS, errno(rc)));
    }
    let sock = call(
        libc::SYS_socket,
        libc::c_long::from(libc::AF_INET),
        libc::c_long::from(libc::SOCK_DGRAM | libc::SOCK_CLOEXEC),
        0,
    );
    if sock < 0 {
        return Err((step::LOOPBACK, errno(sock)));
    }
    let mut req = IfReqFlags {
        name: [0; 16],
        flags: (libc::IFF_UP | libc::IFF_LOOPBACK | libc::IFF_RUNNING) as libc::c_short,
        _pad: [0; 22],
    };
    req.name[0] = b'l';
    req.name[1] = b'o';
    let rc = call(
        libc::SYS_ioctl,
        sock,
        libc::SIOCSIFFLAGS as libc::c_long,
        (&raw mut req) as libc::c_long,
    );
    if rc < 0 {
        call(libc::SYS_close, sock, 0, 0);
        return Err((step::LOOPBACK, errno(rc)));
    }
    Ok(sock)
}

/// System calls without the C library: the result, or `-errno`.
mod raw {
    #[cfg(target_arch = "x86_64")]
    pub(super) const SUPPORTED: bool = true;
    #[cfg(target_arch = "aarch64")]
    pub(super) const SUPPORTED: bool = true;
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    pub(super) const SUPPORTED: bool = false;

    /// # Safety
    /// As the system call `nr` with these arguments.
    pub(super) unsafe fn call3(
        nr: libc::c_long,
        a: libc::c_long,
        b: libc::c_long,
        c: libc::c_long,
    ) -> libc::c_long {
        #[cfg(target_arch = "x86_64")]
        {
            let ret;
            // SAFETY: the x86-64 system call convention; rcx and r11
            // clobbered.
            unsafe {
                std::arch::asm!(
                    "syscall",
                    inlateout("rax") nr => ret,
                    in("rdi") a,
                    in("rsi") b,
                    in("rdx") c,
                    lateout("rcx") _,
                    lateout("r11") _,
                    options(nostack),
                );
            }
            ret
        }
        #[cfg(target_arch = "aarch64")]
        {
            let ret;
            // SAFETY: the aarch64 system call convention.
            unsafe {
                std::arch::asm!(
                    "svc 0",
                    in("x8") nr,
                    inlateout("x0") a => ret,
                    in("x1") b,
                    in("x2") c,
                    options(nostack),
                );
            }
            ret
        }
        // Never called: `SUPPORTED` is false here.
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        {
            let _ = (nr, a, b, c);
            -libc::c_long::from(libc::ENOSYS)
        }
    }
}
