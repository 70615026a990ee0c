//! The escape probe: one attempt per subcommand, run by the escape suite
//! both inside a sandbox and outside it (the positive control).
//!
//! It prints `ok[ <detail>]` and exits 0 when the attempt worked, or
//! `err <errno> <description>` and exits 1 when the kernel refused it; 2 is
//! a usage error. The suite compares the two runs.
#![expect(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a probe reports on stdout"
)]

use std::ffi::CString;
use std::io::Write;
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::os::unix::net::UnixStream;
use std::process::ExitCode;
use std::time::Duration;

type Res = Result<String, i32>;

fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

fn rc(r: libc::c_long) -> Res {
    if r < 0 {
        Err(errno())
    } else {
        Ok(String::new())
    }
}

fn io(e: &std::io::Error) -> i32 {
    e.raw_os_error().unwrap_or(libc::EIO)
}

fn cs(s: &str) -> CString {
    CString::new(s).unwrap_or_default()
}

fn arg(args: &[String], i: usize) -> &str {
    args.get(i).map_or("", String::as_str)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let name = arg(&args, 0).to_owned();
    let result = run(&name, &args);
    match result {
        Ok(detail) if detail.is_empty() => {
            println!("ok");
            ExitCode::SUCCESS
        }
        Ok(detail) => {
            println!("ok {detail}");
            ExitCode::SUCCESS
        }
        Err(-1) => {
            eprintln!("usage: chock-sandbox-probe <attempt> [args]");
            ExitCode::from(2)
        }
        Err(e) => {
            println!("err {e} {}", std::io::Error::from_raw_os_error(e));
            ExitCode::from(1)
        }
    }
}

fn run(name: &str, a: &[String]) -> Res {
    match name {
        "write" => std::fs::write(arg(a, 1), b"escaped")
            .map(|()| String::new())
            .map_err(|e| io(&e)),
        "read" => std::fs::read(arg(a, 1))
            .map(|b| b.len().to_string())
            .map_err(|e| io(&e)),
        "readdir" => std::fs::read_dir(arg(a, 1))
            .map(|d| d.count().to_string())
            .map_err(|e| io(&e)),
        "link" => std::fs::hard_link(arg(a, 1), arg(a, 2))
            .map(|()| String::new())
            .map_err(|e| io(&e)),
        "rename" => std::fs::rename(arg(a, 1), arg(a, 2))
            .map(|()| String::new())
            .map_err(|e| io(&e)),
        "truncate" => std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(arg(a, 1))
            .map(|_| String::new())
            .map_err(|e| io(&e)),
        "chmod" => {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(arg(a, 1), std::fs::Permissions::from_mode(0o777))
                .map(|()| String::new())
                .map_err(|e| io(&e))
        }
        "fd-read" => fd_read(arg(a, 1), arg(a, 2)),
        "ptrace-child" => {
            with_child(|pid| unsafe { rc(libc::ptrace(libc::PTRACE_ATTACH, pid, 0, 0)) })
        }
        "vm-read-child" => with_child(|pid| {
            let mut buf = [0u8; 8];
            let local = libc::iovec {
                iov_base: buf.as_mut_ptr().cast(),
                iov_len: 8,
            };
            let remote = libc::iovec {
                iov_base: (&raw const buf).cast_mut().cast(),
                iov_len: 8,
            };
            unsafe {
                rc(
                    libc::process_vm_readv(pid, &raw const local, 1, &raw const remote, 1, 0)
                        as libc::c_long,
                )
            }
        }),
        "kill" => unsafe { rc(libc::kill(arg(a, 1).parse().unwrap_or(0), libc::SIGKILL).into()) },
        "tiocsti" => tiocsti(libc::TIOCSTI),
        "tiocsti-high" => tiocsti(libc::TIOCSTI | (1 << 32)),
        "tioclinux" => tiocsti(libc::TIOCLINUX),
        "unshare-user" => unsafe { rc(libc::unshare(libc::CLONE_NEWUSER).into()) },
        "clone-newuser" => clone_flags(libc::CLONE_NEWUSER as u64),
        "clone3" => clone3(),
        "euid" => Ok(unsafe { libc::geteuid() }.to_string()),
        "status" => status_field(arg(a, 1)),
        "io-uring" => {
            let mut params = [0u8; 120];
            unsafe {
                rc(libc::syscall(
                    libc::SYS_io_uring_setup,
                    4u32,
                    params.as_mut_ptr(),
                ))
            }
        }
        "mmap-rwx" => {
            mmap(libc::PROT_READ | libc::PROT_WRITE | libc::PROT_EXEC).map(|_| String::new())
        }
        "mprotect-exec" => {
            let p = mmap(libc::PROT_READ | libc::PROT_WRITE)?;
            unsafe { rc(libc::mprotect(p, 4096, libc::PROT_READ | libc::PROT_EXEC).into()) }
        }
        "pkey-mprotect" => {
            let p = mmap(libc::PROT_READ)?;
            let prot = libc::PROT_READ | libc::PROT_WRITE | libc::PROT_EXEC;
            unsafe {
                rc(libc::syscall(
                    libc::SYS_pkey_mprotect,
                    p,
                    4096usize,
                    prot,
                    -1,
                ))
            }
        }
        "personality-mmap" => personality_mmap(),
        "memfd-double-map" => memfd_double_map(),
        "daemon" => daemon(arg(a, 1)),
        "sleep" => loop {
            unsafe { libc::pause() };
        },
        "spawn-sandboxed" => spawn_sandboxed(arg(a, 1), arg(a, 2)),
        "spawn-plain" => spawn_plain(arg(a, 1)),
        "netns" => netns(),
        "tcp" => tcp(arg(a, 1), true),
        "tcp-leaves" => tcp(arg(a, 1), false),
        "udp" => udp(arg(a, 1)),
        "dns" => dns(arg(a, 1)),
        "unix" => UnixStream::connect(arg(a, 1))
            .map(|_| String::new())
            .map_err(|e| io(&e)),
        "abstract" => abstract_connect(arg(a, 1)),
        "socket" => socket(arg(a, 1)),
        "keyctl" => {
            let (t, d, p) = (cs("user"), cs("chock-probe"), b"x");
            unsafe {
                rc(libc::syscall(
                    libc::SYS_add_key,
                    t.as_ptr(),
                    d.as_ptr(),
                    p.as_ptr(),
                    1usize,
                    -2,
                ))
            }
        }
        "bpf" => bpf(),
        "perf" => perf(),
        "userfaultfd" => unsafe { rc(libc::syscall(libc::SYS_userfaultfd, libc::O_CLOEXEC | 1)) },
        "finit-module" => {
            let f = std::fs::File::open("/dev/null").map_err(|e| io(&e))?;
            let empty = cs("");
            use std::os::fd::AsRawFd;
            unsafe {
                rc(libc::syscall(
                    libc::SYS_finit_module,
                    f.as_raw_fd(),
                    empty.as_ptr(),
                    0,
                ))
            }
        }
        "kexec" => unsafe {
            rc(libc::syscall(
                libc::SYS_kexec_file_load,
                -1,
                -1,
                0usize,
                cs("").as_ptr(),
                0usize,
            ))
        },
        "open-by-handle" => open_by_handle(arg(a, 1)),
        "iopl" => unsafe {
            let r = rc(libc::syscall(libc::SYS_iopl, 3));
            libc::syscall(libc::SYS_iopl, 0);
            r
        },
        "mount-tmpfs" => unsafe {
            let (src, dst) = (cs("tmpfs"), cs(arg(a, 1)));
            let r = rc(libc::mount(
                src.as_ptr(),
                dst.as_ptr(),
                src.as_ptr(),
                0,
                std::ptr::null(),
            )
            .into());
            if r.is_ok() {
                libc::umount2(dst.as_ptr(), libc::MNT_DETACH);
            }
            r
        },
        "chroot" => unsafe { rc(libc::chroot(cs(arg(a, 1)).as_ptr()).into()) },
        "setns-uts" => {
            let f = std::fs::File::open("/proc/self/ns/uts").map_err(|e| io(&e))?;
            use std::os::fd::AsRawFd;
            unsafe { rc(libc::setns(f.as_raw_fd(), libc::CLONE_NEWUTS).into()) }
        }
        "pid-visible" => {
            if std::path::Path::new(&format!("/proc/{}", arg(a, 1))).exists() {
                Ok(String::new())
            } else {
                Err(libc::ESRCH)
            }
        }
        "pids" => pids(),
        "env" => std::env::var(arg(a, 1))
            .map(|_| String::new())
            .map_err(|_| libc::ENOENT),
        "rlimit-core" => {
            let mut lim = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            unsafe { libc::getrlimit(libc::RLIMIT_CORE, &raw mut lim) };
            if lim.rlim_cur == 0 && lim.rlim_max == 0 {
                Err(libc::EPERM)
            } else {
                Ok(lim.rlim_cur.to_string())
            }
        }
        "ctty" => std::fs::File::open("/dev/tty")
            .map(|_| String::new())
            .map_err(|e| io(&e)),
        "hostname" => {
            let h = cs("chock-probe");
            unsafe { rc(libc::sethostname(h.as_ptr(), 11).into()) }
        }
        _ => Err(-1),
    }
}

fn fd_read(fd: &str, name: &str) -> Res {
    let fd: i32 = fd.parse().map_err(|_| -1)?;
    let n = cs(name);
    let f = unsafe { libc::openat(fd, n.as_ptr(), libc::O_RDONLY) };
    if f < 0 {
        return Err(errno());
    }
    unsafe { libc::close(f) };
    Ok(String::new())
}

/// Forks a child that waits, runs `f` on it, then kills it.
fn with_child(f: impl FnOnce(i32) -> Res) -> Res {
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(errno());
    }
    if pid == 0 {
        loop {
            unsafe { libc::pause() };
        }
    }
    let r = f(pid);
    unsafe {
        libc::kill(pid, libc::SIGKILL);
        libc::waitpid(pid, std::ptr::null_mut(), 0);
    }
    r
}

/// Opens a fresh pty in a new session so it becomes the controlling
/// terminal, then pushes a byte into its input with `request`.
fn tiocsti(request: u64) -> Res {
    unsafe {
        let pid = libc::fork();
        if pid == 0 {
            libc::setsid();
            let m = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
            if m < 0 || libc::grantpt(m) < 0 || libc::unlockpt(m) < 0 {
                libc::_exit(200);
            }
            let name = libc::ptsname(m);
            let s = libc::open(name, libc::O_RDWR);
            if s < 0 {
                libc::_exit(201);
            }
            let c: u8 = b'x';
            let r = libc::syscall(libc::SYS_ioctl, s, request, &raw const c);
            libc::_exit(if r < 0 { errno().clamp(1, 199) } else { 0 });
        }
        let mut st = 0;
        libc::waitpid(pid, &raw mut st, 0);
        match libc::WEXITSTATUS(st) {
            0 => Ok(String::new()),
            e @ 200.. => Err(if e == 200 { libc::ENXIO } else { libc::ENOENT }),
            e => Err(e),
        }
    }
}

fn clone_flags(flags: u64) -> Res {
    let pid = unsafe {
        libc::syscall(
            libc::SYS_clone,
            flags | libc::SIGCHLD as u64,
            0usize,
            0usize,
            0usize,
            0usize,
        )
    };
    reap(pid)
}

/// After a raw clone: the child exits at once and the parent waits for it;
/// an error when there is no child.
fn reap(pid: libc::c_long) -> Res {
    if pid < 0 {
        return Err(errno());
    }
    if pid == 0 {
        unsafe { libc::_exit(0) };
    }
    unsafe { libc::waitpid(pid as i32, std::ptr::null_mut(), 0) };
    Ok(String::new())
}

fn clone3() -> Res {
    let mut args = [0u64; 11];
    if let Some(sig) = args.get_mut(4) {
        *sig = libc::SIGCHLD as u64;
    }
    let pid = unsafe { libc::syscall(libc::SYS_clone3, args.as_mut_ptr(), size_of_val(&args)) };
    reap(pid)
}

fn status_field(field: &str) -> Res {
    let s = std::fs::read_to_string("/proc/self/status").map_err(|e| io(&e))?;
    s.lines()
        .find_map(|l| l.strip_prefix(field).and_then(|r| r.strip_prefix(':')))
        .map(|v| v.trim().to_owned())
        .ok_or(libc::ENOENT)
}

fn mmap(prot: i32) -> Result<*mut libc::c_void, i32> {
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            4096,
            prot,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        Err(errno())
    } else {
        Ok(p)
    }
}

fn personality_mmap() -> Res {
    const READ_IMPLIES_EXEC: libc::c_ulong = 0x0040_0000;
    let r = unsafe { libc::personality(READ_IMPLIES_EXEC) };
    if r < 0 {
        return Err(errno());
    }
    let p = mmap(libc::PROT_READ | libc::PROT_WRITE)?;
    let maps = std::fs::read_to_string("/proc/self/maps").map_err(|e| io(&e))?;
    let start = format!("{:x}-", p as usize);
    let line = maps
        .lines()
        .find(|l| l.starts_with(&start))
        .unwrap_or_default();
    if line.contains("rwx") {
        Ok("rwx mapping".into())
    } else {
        Err(libc::EACCES)
    }
}

/// The documented way past W^X: one memfd mapped writable and executable
/// at two addresses. Not an escape: shows the limit of the rule.
fn memfd_double_map() -> Res {
    let name = cs("chock");
    let fd = unsafe { libc::memfd_create(name.as_ptr(), 0) };
    if fd < 0 {
        return Err(errno());
    }
    unsafe {
        libc::ftruncate(fd, 4096);
        let w = libc::mmap(
            std::ptr::null_mut(),
            4096,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd,
            0,
        );
        let x = libc::mmap(
            std::ptr::null_mut(),
            4096,
            libc::PROT_READ | libc::PROT_EXEC,
            libc::MAP_SHARED,
            fd,
            0,
        );
        if w == libc::MAP_FAILED || x == libc::MAP_FAILED {
            return Err(errno());
        }
    }
    Ok(String::new())
}

/// Double-forks a process that sleeps with `marker` in its argv, then exits.
fn daemon(marker: &str) -> Res {
    unsafe {
        let pid = libc::fork();
        if pid == 0 {
            libc::setsid();
            if libc::fork() == 0 {
                // Let go of the caller's pipes, as a daemon does.
                let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
                for fd in 0..3 {
                    libc::dup2(null, fd);
                }
                let exe = cs("/proc/self/exe");
                let (a0, a1, a2) = (cs("chock-sandbox-probe"), cs("sleep"), cs(marker));
                let argv = [a0.as_ptr(), a1.as_ptr(), a2.as_ptr(), std::ptr::null()];
                libc::execv(exe.as_ptr(), argv.as_ptr());
            }
            libc::_exit(0);
        }
        libc::waitpid(pid, std::ptr::null_mut(), 0);
    }
    Ok(String::new())
}

fn spawn_sandboxed(workspace: &str, marker: &str) -> Res {
    let probe = format!("{workspace}/chock-sandbox-probe");
    let sandbox = chock_sandbox::Sandbox::new(chock_sandbox::SandboxSpec::new(workspace))
        .map_err(|_| libc::EINVAL)?;
    let mut child = sandbox
        .spawn(&[probe.as_str(), "sleep", marker])
        .map_err(|_| libc::EINVAL)?;
    println!("spawned");
    let _ = std::io::stdout().flush();
    let _ = child.wait();
    Ok(String::new())
}

fn spawn_plain(marker: &str) -> Res {
    let mut child = std::process::Command::new("/proc/self/exe")
        .args(["sleep", marker])
        .spawn()
        .map_err(|e| io(&e))?;
    println!("spawned");
    let _ = std::io::stdout().flush();
    let _ = child.wait();
    Ok(String::new())
}

/// The processes this one can see in /proc, in order, and its own pid:
/// `1 3 (self 3)`.
fn pids() -> Res {
    let mut pids: Vec<u32> = std::fs::read_dir("/proc")
        .map_err(|e| io(&e))?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    pids.sort_unstable();
    let list: Vec<String> = pids.iter().map(u32::to_string).collect();
    Ok(format!("{} (self {})", list.join(" "), std::process::id()))
}

/// This network namespace's identity, once its own loopback has carried a
/// connection.
fn netns() -> Res {
    let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| io(&e))?;
    let addr = l.local_addr().map_err(|e| io(&e))?;
    TcpStream::connect_timeout(&addr, Duration::from_secs(2)).map_err(|e| io(&e))?;
    std::fs::read_link("/proc/self/ns/net")
        .map(|p| p.to_string_lossy().into_owned())
        .map_err(|e| io(&e))
}

fn tcp(addr: &str, full: bool) -> Res {
    let addr: SocketAddr = addr.parse().map_err(|_| -1)?;
    match TcpStream::connect_timeout(&addr, Duration::from_secs(2)) {
        Ok(_) => Ok(String::new()),
        // A timeout means a SYN left this network namespace: a route exists.
        Err(e) if !full && e.kind() == std::io::ErrorKind::TimedOut => {
            Ok("timed out (a route exists)".into())
        }
        Err(e) => Err(e.raw_os_error().unwrap_or(libc::ETIMEDOUT)),
    }
}

fn udp(addr: &str) -> Res {
    let s = UdpSocket::bind("0.0.0.0:0").map_err(|e| io(&e))?;
    s.set_read_timeout(Some(Duration::from_secs(3)))
        .map_err(|e| io(&e))?;
    s.send_to(b"ping", addr).map_err(|e| io(&e))?;
    let mut buf = [0u8; 16];
    s.recv(&mut buf)
        .map(|_| String::new())
        .map_err(|e| e.raw_os_error().unwrap_or(libc::ETIMEDOUT))
}

fn dns(name: &str) -> Res {
    use std::net::ToSocketAddrs;
    match (name, 80).to_socket_addrs() {
        Ok(mut it) => it.next().map(|a| a.ip().to_string()).ok_or(libc::ENOENT),
        Err(_) => Err(libc::EHOSTUNREACH),
    }
}

fn abstract_connect(name: &str) -> Res {
    use std::os::linux::net::SocketAddrExt;
    let addr =
        std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).map_err(|e| io(&e))?;
    UnixStream::connect_addr(&addr)
        .map(|_| String::new())
        .map_err(|e| io(&e))
}

fn socket(kind: &str) -> Res {
    let (family, ty, proto) = match kind {
        "netlink" => (libc::AF_NETLINK, libc::SOCK_RAW, libc::NETLINK_ROUTE),
        "packet" => (libc::AF_PACKET, libc::SOCK_RAW, 0),
        "alg" => (libc::AF_ALG, libc::SOCK_SEQPACKET, 0),
        "vsock" => (libc::AF_VSOCK, libc::SOCK_STREAM, 0),
        "inet" => (libc::AF_INET, libc::SOCK_STREAM, 0),
        "raw" => (libc::AF_INET, libc::SOCK_RAW, libc::IPPROTO_ICMP),
        _ => return Err(-1),
    };
    let fd = unsafe { libc::socket(family, ty | libc::SOCK_CLOEXEC, proto) };
    if fd < 0 {
        return Err(errno());
    }
    unsafe { libc::close(fd) };
    Ok(String::new())
}

fn bpf() -> Res {
    // BPF_MAP_CREATE of a one-entry array.
    let mut attr = [0u32; 30];
    attr[0] = 2; // BPF_MAP_TYPE_ARRAY
    attr[1] = 4;
    attr[2] = 4;
    attr[3] = 1;
    let fd = unsafe { libc::syscall(libc::SYS_bpf, 0, attr.as_mut_ptr(), size_of_val(&attr)) };
    if fd < 0 {
        return Err(errno());
    }
    unsafe { libc::close(fd as i32) };
    Ok(String::new())
}

fn perf() -> Res {
    // A software clock counter on ourselves, user space only: allowed at
    // perf_event_paranoid 2.
    let mut attr = [0u8; 128];
    attr[0..4].copy_from_slice(&1u32.to_ne_bytes()); // PERF_TYPE_SOFTWARE
    attr[4..8].copy_from_slice(&128u32.to_ne_bytes()); // size
    // config = PERF_COUNT_SW_CPU_CLOCK (0); flags: disabled | exclude_kernel | exclude_hv
    let flags: u64 = 1 | (1 << 5) | (1 << 6);
    attr[40..48].copy_from_slice(&flags.to_ne_bytes());
    let fd = unsafe { libc::syscall(libc::SYS_perf_event_open, attr.as_ptr(), 0, -1, -1, 0) };
    if fd < 0 {
        return Err(errno());
    }
    unsafe { libc::close(fd as i32) };
    Ok(String::new())
}

fn open_by_handle(path: &str) -> Res {
    let p = cs(path);
    let mut buf = [0u8; 8 + 128];
    buf[0..4].copy_from_slice(&128u32.to_ne_bytes());
    let mut mount_id = 0;
    unsafe {
        let r = libc::syscall(
            libc::SYS_name_to_handle_at,
            libc::AT_FDCWD,
            p.as_ptr(),
            buf.as_mut_ptr(),
            &raw mut mount_id,
            0,
        );
        if r < 0 {
            return Err(errno());
        }
        let root = cs("/");
        let mfd = libc::open(root.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY);
        let fd = libc::syscall(
            libc::SYS_open_by_handle_at,
            mfd,
            buf.as_mut_ptr(),
            libc::O_RDONLY,
        );
        if fd < 0 {
            return Err(errno());
        }
        libc::close(fd as i32);
    }
    Ok(String::new())
}
