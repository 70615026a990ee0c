//! The escape suite: each test makes one attempt from inside the sandbox and
//! the same attempt outside it (the positive control), so a refusal inside
//! means the sandbox refused it, not that it could never work here.
//! Attempts whose control needs root say so and check only the refusal when
//! run unprivileged.

use std::io::{Read, Write};
use std::net::{TcpListener, UdpSocket};
use std::os::unix::net::UnixListener;
use std::process::{Command, Stdio};
use std::time::Duration;

use super::{Fx, Res, is_root, marker, pids_with, retry_busy, wait_for};

const EPERM: i32 = libc::EPERM;

/// What the control run outside must show.
#[derive(Clone, Copy)]
enum Control {
    /// The attempt succeeds.
    Works,
    /// The kernel handles the call: anything but this errno (the one the
    /// sandbox answers with).
    Reaches(i32),
    /// Works, but only root can show it.
    RootWorks,
    /// Reaches, but only root can show it.
    RootReaches(i32),
}

fn control(fx: &Fx, args: &[&str], c: Control) {
    let got = fx.outside(args);
    let (ok, root) = match c {
        Control::Works => (got.is_ok(), false),
        Control::Reaches(e) => (got != Err(e), false),
        Control::RootWorks => (got.is_ok(), true),
        Control::RootReaches(e) => (got != Err(e), true),
    };
    if root && !is_root() {
        println!("control for {args:?} needs root; checking only the refusal inside");
        return;
    }
    assert!(
        ok,
        "control: {args:?} should work outside the sandbox, got {got:?}"
    );
}

/// Control outside, then the attempt inside must be refused with `errno`.
fn refused(fx: &Fx, args: &[&str], c: Control, errno: i32) {
    control(fx, args, c);
    let got = fx.inside(args);
    assert_eq!(
        got,
        Err(errno),
        "inside: {args:?} should be refused with errno {errno}"
    );
}

/// Control outside, then the attempt inside must fail (any errno).
fn fails(fx: &Fx, args: &[&str], c: Control) -> Res {
    control(fx, args, c);
    let got = fx.inside(args);
    assert!(got.is_err(), "inside: {args:?} should fail, got {got:?}");
    got
}

// ---- file system ----

#[test]
fn write_outside_the_workspace() {
    let fx = Fx::new();
    let target = fx.p(&fx.outside.join("new.txt"));
    control(&fx, &["write", &target], Control::Works);
    std::fs::remove_file(&target).unwrap();
    assert_eq!(fx.inside(&["write", &target]), Err(libc::ENOENT));
    assert!(!fx.outside.join("new.txt").exists());
}

#[test]
fn write_into_a_read_only_bind() {
    let fx = Fx::new();
    let target = fx.p(&fx.ro.join("new.txt"));
    control(&fx, &["write", &target], Control::Works);
    std::fs::remove_file(&target).unwrap();
    assert_eq!(fx.inside(&["write", &target]), Err(libc::EROFS));
    assert!(!fx.ro.join("new.txt").exists());
}

#[test]
fn write_into_a_system_directory() {
    let fx = Fx::new();
    let target = format!("/usr/{}", marker("usr"));
    control(&fx, &["write", &target], Control::RootWorks);
    let _ = std::fs::remove_file(&target);
    assert_eq!(fx.inside(&["write", &target]), Err(libc::EROFS));
}

#[test]
fn write_at_the_new_root() {
    let fx = Fx::new();
    let target = format!("/{}", marker("root"));
    control(&fx, &["write", &target], Control::RootWorks);
    let _ = std::fs::remove_file(&target);
    assert_eq!(fx.inside(&["write", &target]), Err(libc::EROFS));
}

#[test]
fn read_etc_shadow() {
    let fx = Fx::new();
    refused(
        &fx,
        &["read", "/etc/shadow"],
        Control::RootWorks,
        libc::ENOENT,
    );
}

#[test]
fn read_an_ssh_key_in_home() {
    let fx = Fx::new();
    let key = fx.p(&fx.home.join(".ssh/id_ed25519"));
    refused(&fx, &["read", &key], Control::Works, libc::ENOENT);
}

#[test]
fn read_through_a_symlink_out_of_the_workspace() {
    let fx = Fx::new();
    let link = fx.ws.join("link");
    std::os::unix::fs::symlink(fx.outside.join("secret.txt"), &link).unwrap();
    refused(&fx, &["read", &fx.p(&link)], Control::Works, libc::ENOENT);
}

#[test]
fn write_through_a_symlink_into_a_read_only_bind() {
    let fx = Fx::new();
    let link = fx.ws.join("rolink");
    std::os::unix::fs::symlink(fx.ro.join("file.txt"), &link).unwrap();
    control(&fx, &["read", &fx.p(&link)], Control::Works);
    assert_eq!(fx.inside(&["write", &fx.p(&link)]), Err(libc::EROFS));
    assert_eq!(
        std::fs::read_to_string(fx.ro.join("file.txt")).unwrap(),
        "read-only"
    );
}

#[test]
fn hardlink_a_read_only_file_into_the_workspace() {
    let fx = Fx::new();
    let (src, dst) = (fx.p(&fx.ro.join("file.txt")), fx.p(&fx.ws.join("hl")));
    control(&fx, &["link", &src, &dst], Control::Works);
    std::fs::remove_file(&dst).unwrap();
    assert_eq!(fx.inside(&["link", &src, &dst]), Err(libc::EXDEV));
}

#[test]
fn hardlink_an_outside_file_into_the_workspace() {
    let fx = Fx::new();
    let (src, dst) = (
        fx.p(&fx.outside.join("secret.txt")),
        fx.p(&fx.ws.join("hl")),
    );
    control(&fx, &["link", &src, &dst], Control::Works);
    std::fs::remove_file(&dst).unwrap();
    assert_eq!(fx.inside(&["link", &src, &dst]), Err(libc::ENOENT));
}

#[test]
fn rename_a_read_only_file_into_the_workspace() {
    let fx = Fx::new();
    let (src, dst) = (fx.p(&fx.ro.join("file.txt")), fx.p(&fx.ws.join("moved")));
    control(&fx, &["rename", &src, &dst], Control::Works);
    std::fs::rename(&dst, &src).unwrap();
    assert!(fx.inside(&["rename", &src, &dst]).is_err());
    assert!(fx.ro.join("file.txt").exists());
}

#[test]
fn rename_a_workspace_file_out_of_the_workspace() {
    let fx = Fx::new();
    let (src, dst) = (fx.p(&fx.ws.join("file.txt")), fx.p(&fx.ro.join("moved")));
    control(&fx, &["rename", &src, &dst], Control::Works);
    std::fs::rename(&dst, &src).unwrap();
    assert!(fx.inside(&["rename", &src, &dst]).is_err());
    assert!(!fx.ro.join("moved").exists());
}

#[test]
fn proc_self_root() {
    let fx = Fx::new();
    let path = format!("/proc/self/root{}", fx.p(&fx.outside.join("secret.txt")));
    refused(&fx, &["read", &path], Control::Works, libc::ENOENT);
}

#[test]
fn proc_1_root() {
    // Inside, pid 1 is the sandbox's own init, whose root is the sandbox's;
    // the control reads through the root of a host process we own.
    let fx = Fx::new();
    let secret = fx.p(&fx.outside.join("secret.txt"));
    let mut sleeper = Command::new("sleep").arg("60").spawn().unwrap();
    let got = fx.outside(&["read", &format!("/proc/{}/root{secret}", sleeper.id())]);
    sleeper.kill().unwrap();
    sleeper.wait().unwrap();
    assert!(got.is_ok(), "control: {got:?}");
    assert!(
        fx.inside(&["read", &format!("/proc/1/root{secret}")])
            .is_err()
    );
}

#[test]
fn proc_root_of_a_host_process() {
    let fx = Fx::new();
    let mut sleeper = Command::new("sleep").arg("60").spawn().unwrap();
    let path = format!(
        "/proc/{}/root{}",
        sleeper.id(),
        fx.p(&fx.outside.join("secret.txt"))
    );
    let got = fails(&fx, &["read", &path], Control::Works);
    sleeper.kill().unwrap();
    sleeper.wait().unwrap();
    assert!(
        got == Err(libc::ENOENT) || got == Err(libc::EACCES),
        "{got:?}"
    );
}

#[test]
fn an_inherited_file_descriptor() {
    let fx = Fx::new();
    let dir = std::fs::File::open(&fx.outside).unwrap();
    use std::os::fd::AsRawFd;
    let fd = dir.as_raw_fd();
    // Clear close-on-exec, as a careless caller might leave it.
    unsafe { libc::fcntl(fd, libc::F_SETFD, 0) };
    refused(
        &fx,
        &["fd-read", &fd.to_string(), "secret.txt"],
        Control::Works,
        libc::EBADF,
    );
}

#[test]
fn truncate_a_read_only_file() {
    let fx = Fx::new();
    let copy = fx.ro.join("copy.txt");
    std::fs::write(&copy, "keep me").unwrap();
    control(&fx, &["truncate", &fx.p(&copy)], Control::Works);
    std::fs::write(&copy, "keep me").unwrap();
    assert_eq!(fx.inside(&["truncate", &fx.p(&copy)]), Err(libc::EROFS));
    assert_eq!(std::fs::read_to_string(&copy).unwrap(), "keep me");
}

#[test]
fn chmod_a_read_only_file() {
    let fx = Fx::new();
    refused(
        &fx,
        &["chmod", &fx.p(&fx.ro.join("file.txt"))],
        Control::Works,
        libc::EROFS,
    );
}

#[test]
fn sysfs_is_not_there() {
    let fx = Fx::new();
    refused(
        &fx,
        &["readdir", "/sys/class/net"],
        Control::Works,
        libc::ENOENT,
    );
}

// ---- processes ----

#[test]
fn ptrace_a_child() {
    refused(&Fx::new(), &["ptrace-child"], Control::Works, EPERM);
}

#[test]
fn process_vm_readv_a_child() {
    refused(&Fx::new(), &["vm-read-child"], Control::Works, EPERM);
}

#[test]
fn kill_a_host_process() {
    let fx = Fx::new();
    let mut victim = Command::new("sleep").arg("60").spawn().unwrap();
    let mut control_victim = Command::new("sleep").arg("60").spawn().unwrap();
    assert_eq!(
        fx.outside(&["kill", &control_victim.id().to_string()]),
        Ok(String::new())
    );
    control_victim.wait().unwrap();
    assert_eq!(
        fx.inside(&["kill", &victim.id().to_string()]),
        Err(libc::ESRCH)
    );
    assert!(
        victim.try_wait().unwrap().is_none(),
        "the host process must still run"
    );
    victim.kill().unwrap();
    victim.wait().unwrap();
}

#[test]
fn host_processes_are_invisible() {
    let fx = Fx::new();
    let me = std::process::id().to_string();
    refused(&fx, &["pid-visible", &me], Control::Works, libc::ESRCH);
}

#[test]
fn tiocsti() {
    refused(&Fx::new(), &["tiocsti"], Control::Works, EPERM);
}

#[test]
fn tiocsti_with_high_bits_set() {
    refused(&Fx::new(), &["tiocsti-high"], Control::Works, EPERM);
}

#[test]
fn tioclinux() {
    refused(&Fx::new(), &["tioclinux"], Control::Reaches(EPERM), EPERM);
}

#[test]
fn nested_user_namespace_by_syscall() {
    refused(&Fx::new(), &["unshare-user"], Control::Works, EPERM);
}

#[test]
fn nested_user_namespace_with_the_unshare_program() {
    let fx = Fx::new();
    let out = Command::new("unshare")
        .args(["-U", "true"])
        .status()
        .unwrap();
    assert!(out.success(), "control: unshare -U true works outside");
    let sandbox = fx.sandbox();
    let status = sandbox
        .spawn(&["unshare", "-U", "true"])
        .unwrap()
        .wait()
        .unwrap();
    assert_eq!(status.code(), Some(1), "{status}");
}

#[test]
fn nested_user_namespace_by_clone() {
    refused(&Fx::new(), &["clone-newuser"], Control::Works, EPERM);
}

#[test]
fn clone3_answers_enosys() {
    refused(&Fx::new(), &["clone3"], Control::Works, libc::ENOSYS);
}

#[test]
fn no_new_privs_is_set() {
    let fx = Fx::new();
    assert_eq!(fx.outside(&["status", "NoNewPrivs"]), Ok("0".into()));
    assert_eq!(fx.inside(&["status", "NoNewPrivs"]), Ok("1".into()));
}

#[test]
fn seccomp_is_in_filter_mode() {
    let fx = Fx::new();
    assert_eq!(fx.outside(&["status", "Seccomp"]), Ok("0".into()));
    assert_eq!(fx.inside(&["status", "Seccomp"]), Ok("2".into()));
}

#[test]
fn no_capabilities_even_in_the_bounding_set() {
    let fx = Fx::new();
    assert_ne!(
        fx.outside(&["status", "CapBnd"]),
        Ok("0000000000000000".into())
    );
    assert_eq!(
        fx.inside(&["status", "CapBnd"]),
        Ok("0000000000000000".into())
    );
    assert_eq!(
        fx.inside(&["status", "CapEff"]),
        Ok("0000000000000000".into())
    );
}

#[test]
fn io_uring() {
    refused(&Fx::new(), &["io-uring"], Control::Works, EPERM);
}

#[test]
fn mmap_writable_and_executable() {
    refused(&Fx::new(), &["mmap-rwx"], Control::Works, libc::EACCES);
}

#[test]
fn mprotect_writable_to_executable() {
    refused(&Fx::new(), &["mprotect-exec"], Control::Works, libc::EACCES);
}

#[test]
fn pkey_mprotect_writable_and_executable() {
    refused(&Fx::new(), &["pkey-mprotect"], Control::Works, libc::EACCES);
}

#[test]
fn personality_read_implies_exec_then_mmap() {
    refused(&Fx::new(), &["personality-mmap"], Control::Works, EPERM);
}

#[test]
fn a_daemon_does_not_outlive_the_command() {
    let fx = Fx::new();
    let m = marker("daemon-out");
    assert_eq!(fx.outside(&["daemon", &m]), Ok(String::new()));
    wait_for("the control daemon", Duration::from_secs(5), || {
        !pids_with(&m).is_empty()
    });
    for pid in pids_with(&m) {
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    let m = marker("daemon-in");
    assert_eq!(fx.inside(&["daemon", &m]), Ok(String::new()));
    wait_for("no sandboxed daemon left", Duration::from_secs(5), || {
        pids_with(&m).is_empty()
    });
}

fn spawn_and_kill_parent(fx: &Fx, args: &[&str]) {
    // A probe copied a moment ago may still be open for writing in a child
    // another test forked (ETXTBSY): tried again, as every probe start is.
    let mut parent = retry_busy(|| {
        match Command::new(&fx.probe)
            .args(args)
            .stdout(Stdio::piped())
            .spawn()
        {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) => None,
            other => Some(other.unwrap()),
        }
    });
    let mut line = [0u8; 8];
    parent
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut line)
        .unwrap();
    assert_eq!(&line, b"spawned\n");
    parent.kill().unwrap();
    parent.wait().unwrap();
}

#[test]
fn a_command_does_not_outlive_its_parent() {
    let fx = Fx::new();
    let m = marker("parent-out");
    spawn_and_kill_parent(&fx, &["spawn-plain", &m]);
    wait_for("the control child", Duration::from_secs(5), || {
        !pids_with(&m).is_empty()
    });
    for pid in pids_with(&m) {
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    let m = marker("parent-in");
    spawn_and_kill_parent(&fx, &["spawn-sandboxed", &fx.p(&fx.ws), &m]);
    wait_for(
        "the sandboxed child to die with its parent",
        Duration::from_secs(5),
        || pids_with(&m).is_empty(),
    );
}

#[test]
fn a_setuid_binary_gains_nothing() {
    let fx = Fx::new();
    let Some(path) = std::env::var_os("CHOCK_SANDBOX_SUID_PROBE")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            is_root().then(|| {
                // Root's control: a binary setuid to nobody changes root's euid.
                let p = fx.ro.join("suid-probe");
                std::fs::copy(&fx.probe, &p).unwrap();
                std::os::unix::fs::chown(&p, Some(65534), Some(65534)).unwrap();
                std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o4755))
                    .unwrap();
                p
            })
        })
    else {
        println!("skipped: needs root, or CHOCK_SANDBOX_SUID_PROBE prepared by root");
        return;
    };
    let me = unsafe { libc::geteuid() }.to_string();
    let out = retry_busy(|| match Command::new(&path).arg("euid").output() {
        Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) => None,
        other => Some(other.unwrap()),
    });
    let outside = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    assert_ne!(
        outside,
        format!("ok {me}"),
        "control: the setuid bit changes the euid outside"
    );
    let mut spec = fx.spec();
    spec.read_only.push(path.parent().unwrap().to_path_buf());
    let sandbox = chock_sandbox::Sandbox::new(spec).unwrap();
    let mut child = sandbox.spawn(&[path.to_str().unwrap(), "euid"]).unwrap();
    let mut s = String::new();
    std::fs::File::from(child.stdout.take().unwrap())
        .read_to_string(&mut s)
        .unwrap();
    child.wait().unwrap();
    assert_eq!(
        s.trim(),
        format!("ok {me}"),
        "inside, the setuid bit is ignored"
    );
}

#[test]
fn the_environment_is_scrubbed() {
    let fx = Fx::new();
    let Some(var) = ["CARGO_PKG_NAME", "CARGO_MANIFEST_DIR", "HOSTNAME", "SHELL"]
        .into_iter()
        .find(|v| std::env::var_os(v).is_some())
    else {
        println!("skipped: no non-allowlisted variable in this environment");
        return;
    };
    refused(&fx, &["env", var], Control::Works, libc::ENOENT);
}

#[test]
fn no_core_dumps() {
    let fx = Fx::new();
    let mut cmd = Command::new(&fx.probe);
    cmd.arg("rlimit-core");
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 1 << 20,
                rlim_max: libc::RLIM_INFINITY,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &raw const lim);
            Ok(())
        });
    }
    let out = retry_busy(|| match cmd.output() {
        Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) => None,
        other => Some(other.unwrap()),
    });
    let out = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.starts_with("ok"),
        "control: core dumps allowed outside: {out}"
    );
    assert_eq!(fx.inside(&["rlimit-core"]), Err(EPERM));
}

#[test]
fn keyctl_add_key() {
    refused(&Fx::new(), &["keyctl"], Control::Works, EPERM);
}

#[test]
fn bpf_map_create() {
    refused(&Fx::new(), &["bpf"], Control::RootWorks, EPERM);
}

#[test]
fn perf_event_open() {
    refused(&Fx::new(), &["perf"], Control::Reaches(EPERM), EPERM);
}

#[test]
fn userfaultfd() {
    refused(&Fx::new(), &["userfaultfd"], Control::Works, EPERM);
}

#[test]
fn finit_module() {
    refused(
        &Fx::new(),
        &["finit-module"],
        Control::RootReaches(EPERM),
        EPERM,
    );
}

#[test]
fn kexec_file_load() {
    refused(&Fx::new(), &["kexec"], Control::RootReaches(EPERM), EPERM);
}

#[test]
fn open_by_handle_at() {
    let fx = Fx::new();
    refused(
        &fx,
        &["open-by-handle", &fx.p(&fx.ws.join("file.txt"))],
        Control::RootWorks,
        EPERM,
    );
}

#[test]
fn iopl() {
    refused(&Fx::new(), &["iopl"], Control::RootReaches(EPERM), EPERM);
}

#[test]
fn mount_a_tmpfs() {
    let fx = Fx::new();
    refused(
        &fx,
        &["mount-tmpfs", &fx.p(&fx.ws)],
        Control::RootWorks,
        EPERM,
    );
}

#[test]
fn chroot() {
    refused(&Fx::new(), &["chroot", "/"], Control::RootWorks, EPERM);
}

#[test]
fn setns() {
    refused(&Fx::new(), &["setns-uts"], Control::RootWorks, EPERM);
}

// ---- network ----

#[test]
fn connect_to_a_listener_on_the_hosts_loopback() {
    let fx = Fx::new();
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    refused(&fx, &["tcp", &addr], Control::Works, libc::ECONNREFUSED);
}

#[test]
fn connect_to_192_0_2_1() {
    let fx = Fx::new();
    // Outside, a SYN leaves (an answer or a timeout); inside there is no route.
    let got = fx.outside(&["tcp-leaves", "192.0.2.1:80"]);
    assert!(
        got.is_ok() || got == Err(libc::ECONNREFUSED),
        "control: {got:?}"
    );
    assert_eq!(
        fx.inside(&["tcp-leaves", "192.0.2.1:80"]),
        Err(libc::ENETUNREACH)
    );
}

#[test]
fn udp_to_the_hosts_loopback() {
    let fx = Fx::new();
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = sock.local_addr().unwrap().to_string();
    let echo = std::thread::spawn(move || {
        let mut buf = [0u8; 16];
        sock.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        while let Ok((n, from)) = sock.recv_from(&mut buf) {
            sock.send_to(&buf[..n], from).unwrap();
        }
    });
    let got = fails(&fx, &["udp", &addr], Control::Works);
    assert!(
        got == Err(libc::EAGAIN) || got == Err(libc::ECONNREFUSED),
        "{got:?}"
    );
    drop(echo);
}

#[test]
fn dns_lookup() {
    let fx = Fx::new();
    let name = "deb.debian.org";
    if fx.outside(&["dns", name]).is_err() {
        println!("skipped: this host cannot resolve {name} either");
        return;
    }
    assert!(fx.inside(&["dns", name]).is_err());
}

#[test]
fn localhost_still_resolves_without_netlink() {
    // glibc asks netlink which address families exist; refused, it assumes
    // both, and names in /etc/hosts still resolve.
    let fx = Fx::new();
    assert_eq!(fx.inside(&["dns", "localhost"]), Ok("127.0.0.1".into()));
}

#[test]
fn a_host_unix_socket_by_path() {
    let fx = Fx::new();
    let path = fx.outside.join("sock");
    let _l = UnixListener::bind(&path).unwrap();
    refused(&fx, &["unix", &fx.p(&path)], Control::Works, libc::ENOENT);
}

#[test]
fn an_abstract_unix_socket() {
    use std::os::linux::net::SocketAddrExt;
    let fx = Fx::new();
    let name = marker("abstract");
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let _l = UnixListener::bind_addr(&addr).unwrap();
    refused(
        &fx,
        &["abstract", &name],
        Control::Works,
        libc::ECONNREFUSED,
    );
}

#[test]
fn a_netlink_socket() {
    refused(
        &Fx::new(),
        &["socket", "netlink"],
        Control::Works,
        libc::EAFNOSUPPORT,
    );
}

#[test]
fn a_packet_socket() {
    refused(
        &Fx::new(),
        &["socket", "packet"],
        Control::RootWorks,
        libc::EAFNOSUPPORT,
    );
}

#[test]
fn a_vsock_socket() {
    refused(
        &Fx::new(),
        &["socket", "vsock"],
        Control::Reaches(libc::EAFNOSUPPORT),
        libc::EAFNOSUPPORT,
    );
}

#[test]
fn a_raw_inet_socket() {
    refused(&Fx::new(), &["socket", "raw"], Control::RootWorks, EPERM);
}

#[test]
fn the_ip_program_fails_cleanly() {
    let fx = Fx::new();
    let mut spec = fx.spec();
    spec.stderr = chock_sandbox::Stdio::Piped;
    let sandbox = chock_sandbox::Sandbox::new(spec).unwrap();
    let mut child = sandbox.spawn(&["ip", "link"]).unwrap();
    let mut err = String::new();
    std::fs::File::from(child.stderr.take().unwrap())
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success());
    assert!(err.contains("netlink"), "{err}");
    let _ = std::io::stdout().flush();
}
