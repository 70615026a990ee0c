//! The code that runs between `clone` and `execve`.
//!
//! The caller may be a tokio program or a multi-threaded test harness, and a
//! fork carries only the calling thread: a lock another thread held (malloc's,
//! stdio's) stays held forever in the child. So this module only makes raw
//! system calls on data prepared before the fork ([`Prepared`], [`PerSpawn`]):
//! no allocation, no formatting, no panics (no slice indexing that could fail,
//! no `unwrap`). A failure writes a fixed-size record (step, errno) to the
//! setup pipe and exits; the caller turns it into words.
//!
//! In namespace mode the cloned child is pid 1 of the new pid namespace: it
//! builds the root, forks the command, forwards the polite signals to it,
//! reaps orphans, and when the command ends writes its wait status to the
//! status pipe and exits, which makes the kernel kill whatever the command
//! left behind. In degraded mode the cloned child becomes the command itself.

use std::ffi::{CStr, c_char, c_int};
use std::sync::atomic::{AtomicI32, Ordering};

use crate::plan::{ATTR_NODEV, ATTR_NOEXEC, ATTR_NOSUID, ATTR_RDONLY, Op};
use crate::spawn::{PerSpawn, Prepared};

/// Steps that are not ops; ops are reported as `OP_BASE + index`.
pub(crate) mod step {
    pub(crate) const PDEATHSIG: u32 = 1;
    pub(crate) const PARENT_GONE: u32 = 2;
    pub(crate) const UID_MAP: u32 = 3;
    pub(crate) const PRIVATE: u32 = 4;
    pub(crate) const BASE: u32 = 5;
    pub(crate) const PIVOT: u32 = 6;
    pub(crate) const OLD_ROOT: u32 = 7;
    pub(crate) const ROOT_RO: u32 = 8;
    pub(crate) const FORK: u32 = 9;
    pub(crate) const SETSID: u32 = 10;
    pub(crate) const RLIMIT: u32 = 11;
    pub(crate) const CAPS: u32 = 12;
    pub(crate) const NNP: u32 = 13;
    pub(crate) const LANDLOCK: u32 = 14;
    pub(crate) const SECCOMP: u32 = 15;
    pub(crate) const CHDIR: u32 = 16;
    pub(crate) const STDIO: u32 = 17;
    pub(crate) const EXEC: u32 = 18;
    pub(crate) const LOOPBACK: u32 = 19;
    pub(crate) const ROUTER: u32 = 20;
    pub(crate) const NETNS: u32 = 21;
    pub(crate) const OP_BASE: u32 = 1000;
}

/// The pid of the command, for pid 1's signal forwarding.
static COMMAND_PID: AtomicI32 = AtomicI32::new(0);

pub(crate) fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// Writes the failure record and exits. Never returns.
pub(crate) fn fail(setup_w: c_int, step: u32, err: i32) -> ! {
    let mut rec = [0u8; 8];
    let (a, b) = rec.split_at_mut(4);
    a.copy_from_slice(&step.to_ne_bytes());
    b.copy_from_slice(&err.to_ne_bytes());
    // SAFETY: plain write and _exit on valid memory.
    unsafe {
        libc::write(setup_w, rec.as_ptr().cast(), rec.len());
        libc::_exit(if step == step::EXEC { 127 } else { 125 });
    }
}

pub(crate) fn check(setup_w: c_int, step: u32, rc: libc::c_long) {
    if rc < 0 {
        fail(setup_w, step, errno());
    }
}

/// Entry point of the cloned child. Never returns.
///
/// # Safety
/// Must be called only in a freshly cloned child, with `prep` and `spawn`
/// prepared by the parent before the clone.
pub(crate) unsafe fn main(prep: &Prepared, spawn: &PerSpawn) -> ! {
    let w = spawn.setup_w;
    // SAFETY: raw system calls on prepared data, see the module comment.
    unsafe {
        if spawn.pause_ms > 0 {
            let pause = libc::timespec {
                tv_sec: libc::time_t::from(spawn.pause_ms / 1000),
                tv_nsec: libc::c_long::from(spawn.pause_ms % 1000) * 1_000_000,
            };
            libc::nanosleep(&raw const pause, std::ptr::null_mut());
        }
        // The clone gave this process a copy of the parent's end of the
        // setup pipe; while it is open the pipe has a reader whatever
        // becomes of the parent, and the check below could never fire.
        libc::close(spawn.setup_r);
        check(
            w,
            step::PDEATHSIG,
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL).into(),
        );
        // The parent blocks reading the setup pipe until we exec: if its read
        // end is gone, the parent died before PDEATHSIG was armed.
        let mut pfd = libc::pollfd {
            fd: w,
            events: 0,
            revents: 0,
        };
        if libc::poll(&raw mut pfd, 1, 0) > 0 && pfd.revents & libc::POLLERR != 0 {
            libc::_exit(125);
        }
        stdio(spawn);
        close_others(spawn);
        if spawn.namespaces {
            build_root(prep, spawn);
            pid_one(prep, spawn)
        } else {
            command(prep, spawn)
        }
    }
}

unsafe fn stdio(spawn: &PerSpawn) {
    for (target, src) in spawn.stdio.iter().enumerate() {
        if let Some(fd) = *src {
            // SAFETY: dup2 onto 0..=2.
            let rc = unsafe { libc::dup2(fd, target as c_int) };
            check(spawn.setup_w, step::STDIO, rc.into());
        }
    }
}

/// Closes every descriptor but stdio and the ones named in `spawn.keep`:
/// nothing the caller had open (a log, a socket, another sandbox's pipe)
/// reaches the command.
unsafe fn close_others(spawn: &PerSpawn) {
    let mut keep = spawn.keep;
    keep.sort_unstable();
    let mut next: u32 = 3;
    for fd in keep {
        if fd < 0 {
            continue;
        }
        let fd = fd as u32;
        if fd > next {
            // SAFETY: close_range on a valid range.
            unsafe { libc::syscall(libc::SYS_close_range, next, fd - 1, 0u32) };
        }
        next = next.max(fd + 1);
    }
    // SAFETY: as above.
    unsafe { libc::syscall(libc::SYS_close_range, next, u32::MAX, 0u32) };
}

unsafe fn write_file(path: &CStr, data: &CStr) -> bool {
    // SAFETY: open/write/close on prepared C strings.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return false;
        }
        let bytes = data.to_bytes();
        let n = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        libc::close(fd);
        n == bytes.len() as isize
    }
}

#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

unsafe fn set_attrs(path: *const c_char, attrs: u64, recursive: bool) -> libc::c_long {
    let attr = MountAttr {
        attr_set: attrs,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    let flags = if recursive { libc::AT_RECURSIVE } else { 0 };
    // SAFETY: mount_setattr with a valid struct of the right size.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path,
            flags,
            &raw const attr,
            size_of::<MountAttr>(),
        )
    };
    if rc < 0 && errno() == libc::ENOSYS {
        // Before Linux 5.12: a plain remount, not recursive.
        let mut flags = libc::MS_REMOUNT | libc::MS_BIND;
        if attrs & ATTR_RDONLY != 0 {
            flags |= libc::MS_RDONLY;
        }
        if attrs & ATTR_NOSUID != 0 {
            flags |= libc::MS_NOSUID;
        }
        if attrs & ATTR_NODEV != 0 {
            flags |= libc::MS_NODEV;
        }
        if attrs & ATTR_NOEXEC != 0 {
            flags |= libc::MS_NOEXEC;
        }
        // SAFETY: remount of an existing mount point.
        return unsafe {
            libc::mount(
                std::ptr::null(),
                path,
                std::ptr::null(),
                flags,
                std::ptr::null(),
            )
        }
        .into();
    }
    rc
}

unsafe fn build_root(prep: &Prepared, spawn: &PerSpawn) {
    let w = spawn.setup_w;
    let nul = std::ptr::null::<c_char>();
    // SAFETY: raw mount-namespace calls on prepared C strings.
    unsafe {
        // First, so that the helper's half millisecond overlaps as much of
        // pid 1's set-up as it can.
        let netns = crate::netns::Helper::start(spawn.netns);
        // The maps: ourselves only, as the same uid and gid as outside.
        let ok = write_file(c"/proc/self/setgroups", c"deny")
            && write_file(c"/proc/self/uid_map", &prep.uid_map)
            && write_file(c"/proc/self/gid_map", &prep.gid_map);
        if !ok {
            fail(w, step::UID_MAP, errno());
        }
        let rc = libc::mount(
            nul,
            c"/".as_ptr(),
            nul,
            libc::MS_REC | libc::MS_PRIVATE,
            nul.cast(),
        );
        check(w, step::PRIVATE, rc.into());
        let rc = libc::mount(
            c"tmpfs".as_ptr(),
            c"/tmp".as_ptr(),
            c"tmpfs".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV,
            c"mode=0755".as_ptr().cast(),
        );
        check(w, step::BASE, rc.into());
        check(w, step::PIVOT, libc::chdir(c"/tmp".as_ptr()).into());
        check(
            w,
            step::PIVOT,
            libc::mkdir(c"oldroot".as_ptr(), 0o755).into(),
        );
        check(
            w,
            step::PIVOT,
            libc::syscall(libc::SYS_pivot_root, c".".as_ptr(), c"oldroot".as_ptr()),
        );
        check(w, step::PIVOT, libc::chdir(c"/".as_ptr()).into());
        libc::umask(0);

        for (i, s) in prep.layout.steps.iter().enumerate() {
            let id = step::OP_BASE + i as u32;
            run_op(&s.op, w, id);
        }

        check(
            w,
            step::OLD_ROOT,
            libc::umount2(c"/oldroot".as_ptr(), libc::MNT_DETACH).into(),
        );
        check(w, step::OLD_ROOT, libc::rmdir(c"/oldroot".as_ptr()).into());
        check(
            w,
            step::ROOT_RO,
            set_attrs(c"/".as_ptr(), ATTR_RDONLY | ATTR_NOSUID | ATTR_NODEV, false),
        );
        libc::umask(0o022);
        netns.join(w);
        if spawn.net_fd >= 0 {
            crate::net::inside::start(spawn.net_fd, spawn.net_port, spawn.net_resolver, w);
        }
    }
}

unsafe fn run_op(op: &Op, w: c_int, id: u32) {
    let nul = std::ptr::null::<c_char>();
    // SAFETY: raw calls on prepared C strings.
    unsafe {
        match op {
            Op::Mkdir { path, mode } => {
                if libc::mkdir(path.as_ptr(), *mode) < 0 {
                    let e = errno();
                    // An existing directory is fine, even on a read-only bind.
                    if e != libc::EEXIST && libc::access(path.as_ptr(), libc::F_OK) != 0 {
                        fail(w, id, e);
                    }
                }
            }
            Op::Copy {
                path,
                contents,
                mode,
            } => {
                let fd = libc::open(
                    path.as_ptr(),
                    libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY | libc::O_CLOEXEC,
                    *mode,
                );
                if fd < 0 {
                    fail(w, id, errno());
                }
                let mut done = 0;
                while done < contents.len() {
                    let rest = contents.get(done..).unwrap_or_default();
                    let n = libc::write(fd, rest.as_ptr().cast(), rest.len());
                    if n <= 0 {
                        fail(w, id, errno());
                    }
                    done += n as usize;
                }
                libc::close(fd);
            }
            Op::Touch { path } => {
                // One call, where open and close would be two.
                if libc::mknod(path.as_ptr(), libc::S_IFREG | 0o644, 0) < 0 {
                    let e = errno();
                    if e != libc::EEXIST && libc::access(path.as_ptr(), libc::F_OK) != 0 {
                        fail(w, id, e);
                    }
                }
            }
            Op::Symlink { target, link } => {
                if libc::symlink(target.as_ptr(), link.as_ptr()) < 0 && errno() != libc::EEXIST {
                    fail(w, id, errno());
                }
            }
            Op::Bind { src, dst, attrs } => {
                let rc = libc::mount(
                    src.as_ptr(),
                    dst.as_ptr(),
                    nul,
                    libc::MS_BIND | libc::MS_REC,
                    nul.cast(),
                );
                check(w, id, rc.into());
                check(w, id, set_attrs(dst.as_ptr(), *attrs, true));
            }
            Op::Tmpfs { dst, data } => {
                let rc = libc::mount(
                    c"tmpfs".as_ptr(),
                    dst.as_ptr(),
                    c"tmpfs".as_ptr(),
                    libc::MS_NOSUID | libc::MS_NODEV,
                    data.as_ptr().cast(),
                );
                check(w, id, rc.into());
            }
            Op::Proc { dst } => {
                let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
                let rc = libc::mount(
                    c"proc".as_ptr(),
                    dst.as_ptr(),
                    c"proc".as_ptr(),
                    flags,
                    nul.cast(),
                );
                check(w, id, rc.into());
            }
            Op::Devpts { dst } => {
                let flags = libc::MS_NOSUID | libc::MS_NOEXEC;
                let data = c"newinstance,ptmxmode=0666,mode=620";
                let rc = libc::mount(
                    c"devpts".as_ptr(),
                    dst.as_ptr(),
                    c"devpts".as_ptr(),
                    flags,
                    data.as_ptr().cast(),
                );
                check(w, id, rc.into());
            }
            Op::RemountRo { dst } => {
                // A path this kernel's /proc lacks is skipped: the bind
                // fails with ENOENT (cheaper than asking first).
                let rc = libc::mount(
                    dst.as_ptr(),
                    dst.as_ptr(),
                    nul,
                    libc::MS_BIND | libc::MS_REC,
                    nul.cast(),
                );
                if rc < 0 && errno() == libc::ENOENT {
                    return;
                }
                check(w, id, rc.into());
                check(
                    w,
                    id,
                    set_attrs(dst.as_ptr(), ATTR_RDONLY | ATTR_NOSUID | ATTR_NODEV, true),
                );
            }
        }
    }
}

extern "C" fn forward(sig: c_int) {
    let pid = COMMAND_PID.load(Ordering::Relaxed);
    if pid > 0 {
        // SAFETY: kill is async-signal-safe.
        unsafe { libc::kill(pid, sig) };
    }
}

/// Pid 1: fork the command, forward signals, reap, report. Never returns.
unsafe fn pid_one(prep: &Prepared, spawn: &PerSpawn) -> ! {
    let w = spawn.setup_w;
    // SAFETY: raw calls; see the module comment.
    unsafe {
        // Nothing inside may read this process's memory through /proc/1/mem.
        libc::prctl(libc::PR_SET_DUMPABLE, 0);
        // Nor its command line, which is the caller's: blank every argument
        // after the program's name in this copy of the caller's memory.
        if let Some((start, len)) = prep.args_tail {
            std::ptr::write_bytes(start as *mut u8, 0, len);
        }
        let pid = spawn_command(prep, spawn);
        if pid < 0 {
            fail(w, step::FORK, errno());
        }
        COMMAND_PID.store(pid, Ordering::Relaxed);
        // Pid 1 ignores signals it has no handler for, even from outside the
        // namespace; forwarding makes `kill -TERM` reach the command.
        for sig in [
            libc::SIGTERM,
            libc::SIGINT,
            libc::SIGHUP,
            libc::SIGQUIT,
            libc::SIGUSR1,
            libc::SIGUSR2,
        ] {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = forward as extern "C" fn(c_int) as usize;
            sa.sa_flags = libc::SA_RESTART;
            libc::sigaction(sig, &raw const sa, std::ptr::null_mut());
        }
        // Our copies: the setup pipe must reach EOF when the command execs,
        // and stdio pipes when the command closes them.
        libc::close(w);
        for fd in 0..3 {
            libc::close(fd);
        }
        let mut status: c_int = 0;
        loop {
            let got = libc::waitpid(-1, &raw mut status, libc::__WALL);
            if got == pid {
                break;
            }
            if got < 0 && errno() == libc::ECHILD {
                status = 127 << 8;
                break;
            }
        }
        let bytes = status.to_ne_bytes();
        libc::write(spawn.status_w, bytes.as_ptr().cast(), bytes.len());
        libc::_exit(0)
    }
}

/// Stack of the command between its clone and its `execve`: the code in
/// [`command`] uses a few KiB; a guard page below catches the rest.
const COMMAND_STACK: usize = 128 * 1024;

/// What [`command_entry`] needs, on pid 1's stack while the command runs.
struct CommandArgs<'a> {
    prep: &'a Prepared,
    spawn: &'a PerSpawn,
}

extern "C" fn command_entry(arg: *mut libc::c_void) -> c_int {
    // SAFETY: `arg` points at pid 1's `CommandArgs`, alive while pid 1 is
    // suspended (CLONE_VFORK) until this process execs or exits.
    unsafe {
        let args = &*arg.cast::<CommandArgs<'_>>();
        command(args.prep, args.spawn)
    }
}

/// Starts the command the way `posix_spawn` does: in pid 1's memory
/// (`CLONE_VM`) on a stack of its own, pid 1 suspended (`CLONE_VFORK`)
/// until the command has executed or failed. A plain fork would copy pid
/// 1's page tables (the whole of the caller's address space), fault in a
/// copy of every page either side writes, and throw all of it away at the
/// `execve` a moment later. No sandboxed code ever runs in the shared
/// memory: only [`command`], ours, until its `execve` replaces it. The
/// command keeps its own descriptor table, signal handlers, credentials
/// and seccomp and landlock state (no `CLONE_FILES`, `CLONE_SIGHAND` or
/// `CLONE_THREAD`). Returns the pid, or -1 with errno set.
unsafe fn spawn_command(prep: &Prepared, spawn: &PerSpawn) -> i32 {
    let page = 4096;
    // SAFETY: raw calls on a fresh anonymous mapping.
    unsafe {
        let base = libc::mmap(
            std::ptr::null_mut(),
            COMMAND_STACK + page,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
            -1,
            0,
        );
        if base == libc::MAP_FAILED {
            return -1;
        }
        if libc::mprotect(base, page, libc::PROT_NONE) < 0 {
            return -1;
        }
        let top = base.cast::<u8>().add(COMMAND_STACK + page).cast();
        let mut args = CommandArgs { prep, spawn };
        libc::clone(
            command_entry,
            top,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            (&raw mut args).cast(),
        )
        // The stack stays mapped: pid 1 has nothing else to use it for,
        // and it goes with pid 1.
    }
}

const SECBIT_NOROOT: libc::c_ulong = 1 << 0;
const SECBIT_NOROOT_LOCKED: libc::c_ulong = 1 << 1;
const SECBIT_NO_SETUID_FIXUP: libc::c_ulong = 1 << 2;
const SECBIT_NO_SETUID_FIXUP_LOCKED: libc::c_ulong = 1 << 3;
const SECBIT_NO_CAP_AMBIENT_RAISE: libc::c_ulong = 1 << 6;
const SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED: libc::c_ulong = 1 << 7;
const PR_MDWE_REFUSE_EXEC_GAIN: libc::c_ulong = 1;

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: c_int,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

#[repr(C, packed)]
struct PathBeneath {
    allowed_access: u64,
    parent_fd: i32,
}

/// The kernel's `struct sigaction` (x86-64 and aarch64 layout).
#[repr(C)]
struct KernelSigaction {
    handler: usize,
    flags: libc::c_ulong,
    restorer: usize,
    mask: u64,
}

/// Sets `sig` to its default disposition with the raw system call: libc's
/// `sigaction` refuses the two real-time signals it keeps for itself (32
/// and 33 with glibc), and a caller may have ignored those too.
///
/// # Safety
/// Async-signal-safe: one system call on stack data.
unsafe fn default_disposition(sig: c_int) {
    let action = KernelSigaction {
        handler: libc::SIG_DFL,
        flags: 0,
        restorer: 0,
        mask: 0,
    };
    // SAFETY: rt_sigaction with a valid struct and the kernel's sigset size.
    unsafe {
        libc::syscall(
            libc::SYS_rt_sigaction,
            sig,
            &raw const action,
            std::ptr::null_mut::<KernelSigaction>(),
            8usize,
        );
    }
}

/// The command: session, limits, no capabilities, landlock, seccomp, exec.
/// Never returns.
unsafe fn command(prep: &Prepared, spawn: &PerSpawn) -> ! {
    let w = spawn.setup_w;
    // SAFETY: raw calls; see the module comment.
    unsafe {
        // Dispositions the caller ignored (Rust ignores SIGPIPE) survive
        // exec; the command starts with every signal at its default.
        for sig in 1..=64 {
            if spawn.reset_signals & (1 << (sig - 1)) != 0
                && sig != libc::SIGKILL
                && sig != libc::SIGSTOP
            {
                default_disposition(sig);
            }
        }
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&raw mut set);
        libc::sigprocmask(libc::SIG_SETMASK, &raw const set, std::ptr::null_mut());
        if spawn.namespaces {
            libc::close(spawn.status_w);
        }
        // A new session has no controlling terminal: TIOCSTI cannot reach
        // the person's.
        check(w, step::SETSID, libc::setsid().into());
        check(
            w,
            step::PDEATHSIG,
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL).into(),
        );
        for (res, soft, hard) in &prep.rlimits {
            let lim = libc::rlimit {
                rlim_cur: *soft,
                rlim_max: *hard,
            };
            check(
                w,
                step::RLIMIT,
                libc::setrlimit(*res, &raw const lim).into(),
            );
        }
        drop_caps(w);
        check(
            w,
            step::NNP,
            libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0).into(),
        );
        if let Some(fd) = spawn.landlock_fd {
            if spawn.namespaces {
                for r in &prep.layout.child_rules {
                    let pfd = libc::open(r.path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC);
                    if pfd < 0 {
                        continue;
                    }
                    let attr = PathBeneath {
                        allowed_access: r.access,
                        parent_fd: pfd,
                    };
                    libc::syscall(libc::SYS_landlock_add_rule, fd, 1u32, &raw const attr, 0u32);
                    libc::close(pfd);
                }
            }
            check(
                w,
                step::LANDLOCK,
                libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32),
            );
            libc::close(fd);
        }
        if !prep.jit {
            // Refuse turning a writable mapping executable; older kernels
            // lack it and the seccomp filter still refuses W|X requests.
            libc::prctl(libc::PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN, 0, 0, 0);
        }
        let cwd = if spawn.namespaces {
            &prep.layout.cwd
        } else {
            &prep.layout.cwd_degraded
        };
        check(w, step::CHDIR, libc::chdir(cwd.as_ptr()).into());
        let prog = &spawn.filter.program;
        let fprog = libc::sock_fprog {
            len: prog.len() as u16,
            filter: prog.as_ptr().cast_mut().cast(),
        };
        let rc = libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            0u32,
            &raw const fprog,
        );
        check(w, step::SECCOMP, rc);
        let mut last = libc::ENOENT;
        for cand in &spawn.candidates {
            libc::execve(cand.as_ptr(), spawn.argv.as_ptr(), spawn.envp.as_ptr());
            let e = errno();
            // Like execvp: keep looking past a missing or unusable entry,
            // but remember a permission problem over "not found".
            if e != libc::ENOENT && e != libc::ENOTDIR {
                last = e;
            }
        }
        fail(w, step::EXEC, last)
    }
}

unsafe fn drop_caps(w: c_int) {
    // SAFETY: prctl/capset with valid structs.
    unsafe {
        // Lock out regaining capabilities by running as uid 0 or a file
        // capability; fails harmlessly (EPERM) when we hold none to lose.
        let bits = SECBIT_NOROOT
            | SECBIT_NOROOT_LOCKED
            | SECBIT_NO_SETUID_FIXUP
            | SECBIT_NO_SETUID_FIXUP_LOCKED
            | SECBIT_NO_CAP_AMBIENT_RAISE
            | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
        libc::prctl(libc::PR_SET_SECUREBITS, bits);
        for cap in 0..64 {
            if libc::prctl(libc::PR_CAPBSET_DROP, cap) < 0 && errno() == libc::EINVAL {
                break;
            }
        }
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        );
        let mut hdr = CapHeader {
            version: 0x2008_0522,
            pid: 0,
        };
        let data = [CapData {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        let rc = libc::syscall(libc::SYS_capset, &raw mut hdr, data.as_ptr());
        check(w, step::CAPS, rc);
    }
}
