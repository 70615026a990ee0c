//! The sandbox's fresh network namespace, made by a helper while pid 1
//! builds the root.
//!
//! Creating a network namespace is most of a sandbox's kernel time: about
//! 0.4 ms on the machines measured, against 0.06 ms for the user, pid,
//! mount, ipc and uts namespaces together (docs/performance.md), and the
//! kernel spends it in the process that asks. So the parent's `clone`
//! leaves the network out, and pid 1 starts a helper that unshares one and
//! brings up its loopback while pid 1 mounts the new root on another CPU.
//! Pid 1 then joins the helper's namespace through its pidfd (`setns`)
//! before anything of the command's runs, and the helper exits. Where the
//! helper cannot be started or joined (a kernel before 5.8 has no `setns`
//! on a pidfd, another architecture), pid 1 makes the namespace itself.
//!
//! The helper shares pid 1's memory (`CLONE_VM`: no page tables to copy)
//! and runs at the same time as pid 1, so it must not touch anything pid 1
//! uses: it runs on a stack of its own, takes its two descriptors by value,
//! and makes its system calls with the `syscall` instruction directly,
//! never through the C library, which would write `errno` in the thread
//! storage both processes point at.

use std::ffi::c_int;

use crate::child::{fail, step};

/// The helper's stack: its code uses a few hundred bytes.
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
    /// The helper's pidfd, or -1.
    pidfd: c_int,
    /// The helper's report: `(step, errno)`, errno 0 when ready.
    ready_r: c_int,
    /// Closed once pid 1 has joined; the helper then exits.
    done_w: c_int,
}

impl Helper {
    const NONE: Self = Self {
        pidfd: -1,
        ready_r: -1,
        done_w: -1,
    };

    /// Starts the helper; never fails (see [`Self::join`]).
    ///
    /// # Safety
    /// Only in pid 1, before it forks anything else.
    pub(crate) unsafe fn start(mode: Mode) -> Self {
        if !raw::SUPPORTED || mode == Mode::Itself {
            return Self::NONE;
        }
        // SAFETY: raw calls on fresh descriptors and a fresh mapping.
        unsafe {
            let mut ready = [-1; 2];
            let mut done = [-1; 2];
            if libc::pipe2(ready.as_mut_ptr(), libc::O_CLOEXEC) < 0 {
                return Self::NONE;
            }
            if libc::pipe2(done.as_mut_ptr(), libc::O_CLOEXEC) < 0 {
                close_all(&ready);
                return Self::NONE;
            }
            let [ready_r, ready_w] = ready;
            let [done_r, done_w] = done;
            let stack = libc::mmap(
                std::ptr::null_mut(),
                STACK,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
                -1,
                0,
            );
            if stack == libc::MAP_FAILED {
                close_all(&[ready_r, ready_w, done_r, done_w]);
                return Self::NONE;
            }
            let top = stack.cast::<u8>().add(STACK).cast();
            // Both descriptors travel in the argument itself: nothing of
            // pid 1's memory is read after the clone.
            let refused = u64::from(mode == Mode::Refused) << 63;
            let arg = refused | (u64::from(ready_w as u32) << 32) | u64::from(done_r as u32);
            let mut pidfd: c_int = -1;
            let pid = libc::clone(
                helper_main,
                top,
                libc::CLONE_VM | libc::CLONE_PIDFD | libc::SIGCHLD,
                arg as usize as *mut libc::c_void,
                &raw mut pidfd,
            );
            // The mapping stays: the helper may still be on it, and it
            // goes with pid 1.
            libc::close(ready_w);
            libc::close(done_r);
            if pid < 0 {
                close_all(&[ready_r, done_w]);
                return Self::NONE;
            }
            Self {
                pidfd,
                ready_r,
                done_w,
            }
        }
    }

    /// Enters the helper's namespace, or makes one here; a failure is
    /// reported on the setup pipe `w` and ends pid 1.
    ///
    /// # Safety
    /// Only in pid 1.
    pub(crate) unsafe fn join(self, w: c_int) {
        // SAFETY: raw calls on descriptors this struct owns.
        unsafe {
            let mut joined = false;
            if self.pidfd >= 0 {
                let mut rec = [0u8; 8];
                let n = libc::read(self.ready_r, rec.as_mut_ptr().cast(), rec.len());
                let (st, err) = decode(rec);
                if n == rec.len() as isize && err != 0 {
                    fail(w, st, err);
                }
                joined =
                    n == rec.len() as isize && libc::setns(self.pidfd, libc::CLONE_NEWNET) == 0;
                close_all(&[self.done_w, self.ready_r, self.pidfd]);
            }
            if !joined {
                let (st, err) = make(|nr, a, b, c| {
                    let rc = libc::syscall(nr, a, b, c);
                    if rc < 0 {
                        -libc::c_long::from(crate::child::errno())
                    } else {
                        rc
                    }
                });
                if err != 0 {
                    fail(w, st, err);
                }
            }
        }
    }
}

fn close_all(fds: &[c_int]) {
    for fd in fds {
        // SAFETY: closing descriptors we own.
        unsafe { libc::close(*fd) };
    }
}

fn encode(st: u32, err: i32) -> [u8; 8] {
    let mut rec = [0u8; 8];
    let (a, b) = rec.split_at_mut(4);
    a.copy_from_slice(&st.to_ne_bytes());
    b.copy_from_slice(&err.to_ne_bytes());
    rec
}

fn decode(rec: [u8; 8]) -> (u32, i32) {
    let (a, b) = rec.split_at(4);
    (
        u32::from_ne_bytes(a.try_into().unwrap_or_default()),
        i32::from_ne_bytes(b.try_into().unwrap_or_default()),
    )
}

/// The helper: make the namespace, report, wait for pid 1 to join (or to
/// be gone: EOF either way), exit. Raw system calls only (module comment).
extern "C" fn helper_main(arg: *mut libc::c_void) -> c_int {
    let arg = arg as usize as u64;
    let refused = arg >> 63 == 1;
    let ready_w = ((arg >> 32) as u32 & 0x7fff_ffff) as libc::c_long;
    let done_r = (arg & 0xffff_ffff) as u32 as libc::c_long;
    // SAFETY: raw system calls on the helper's own descriptors and stack.
    unsafe {
        // Only the two pipes: a copy of the setup, status or stdio pipes
        // here would hold back the EOF their readers wait for.
        let (lo, hi) = (ready_w.min(done_r), ready_w.max(done_r));
        if lo > 0 {
            raw::call3(libc::SYS_close_range, 0, lo - 1, 0);
        }
        if hi > lo + 1 {
            raw::call3(libc::SYS_close_range, lo + 1, hi - 1, 0);
        }
        raw::call3(
            libc::SYS_close_range,
            hi + 1,
            libc::c_long::from(u32::MAX),
            0,
        );
        let (st, err) = if refused {
            (step::NETNS, libc::EPERM)
        } else {
            make(|nr, a, b, c| raw::call3(nr, a, b, c))
        };
        let rec = encode(st, err);
        raw::call3(libc::SYS_write, ready_w, rec.as_ptr() as libc::c_long, 8);
        let mut byte = 0u8;
        raw::call3(libc::SYS_read, done_r, (&raw mut byte) as libc::c_long, 1);
        raw::call3(libc::SYS_exit, 0, 0, 0);
    }
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
/// and returns the result or `-errno`. Returns `(step, 0)` on success, else
/// the step that failed and its errno.
fn make(
    call: impl Fn(libc::c_long, libc::c_long, libc::c_long, libc::c_long) -> libc::c_long,
) -> (u32, i32) {
    let rc = call(
        libc::SYS_unshare,
        libc::c_long::from(libc::CLONE_NEWNET),
        0,
        0,
    );
    if rc < 0 {
        return (step::NETNS, -rc as i32);
    }
    let s = call(
        libc::SYS_socket,
        libc::c_long::from(libc::AF_INET),
        libc::c_long::from(libc::SOCK_DGRAM | libc::SOCK_CLOEXEC),
        0,
    );
    if s < 0 {
        return (step::LOOPBACK, -s as i32);
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
        s,
        libc::SIOCSIFFLAGS as libc::c_long,
        (&raw mut req) as libc::c_long,
    );
    call(libc::SYS_close, s, 0, 0);
    if rc < 0 {
        (step::LOOPBACK, -rc as i32)
    } else {
        (step::LOOPBACK, 0)
    }
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
    #[cfg(target_arch = "x86_64")]
    pub(super) unsafe fn call3(
        nr: libc::c_long,
        a: libc::c_long,
        b: libc::c_long,
        c: libc::c_long,
    ) -> libc::c_long {
        let ret;
        // SAFETY: the x86-64 system call convention; rcx and r11 clobbered.
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

    /// # Safety
    /// As the system call `nr` with these arguments.
    #[cfg(target_arch = "aarch64")]
    pub(super) unsafe fn call3(
        nr: libc::c_long,
        a: libc::c_long,
        b: libc::c_long,
        c: libc::c_long,
    ) -> libc::c_long {
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

    /// # Safety
    /// Never called: [`SUPPORTED`] is false here.
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    pub(super) unsafe fn call3(
        _: libc::c_long,
        _: libc::c_long,
        _: libc::c_long,
        _: libc::c_long,
    ) -> libc::c_long {
        -libc::c_long::from(libc::ENOSYS)
    }
}
