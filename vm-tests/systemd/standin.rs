//! A minimal socket-activated stand-in for `chock daemon` and `chock serve`,
//! used to prove the systemd harness in vm-tests/systemd-units.sh before (or
//! without) the real binary. It does only what the unit files promise chock
//! will do: take its listener from LISTEN_FDS, send READY=1 to
//! NOTIFY_SOCKET, and log to stderr (the journal under systemd). As the
//! daemon it answers the control greeting, and `probe-userns`, which runs
//! `unshare` from inside the service to show the unit's hardening still lets
//! a child make user namespaces. As serve it answers any HTTP request 200 to
//! its own uid and 403 Forbidden to any other, as serve's peer check does.
//!
//! Built by the script with a bare `rustc`, std only; not a workspace member.

use std::io::{BufRead, BufReader, Write};
use std::os::fd::FromRawFd;
use std::os::unix::net::{UnixDatagram, UnixListener, UnixStream};
use std::process::Command;

const SD_LISTEN_FDS_START: i32 = 3;
const SOL_SOCKET: i32 = 1;
const SO_PEERCRED: i32 = 17;

#[repr(C)]
struct UCred {
    pid: i32,
    uid: u32,
    gid: u32,
}

unsafe extern "C" {
    fn getsockopt(fd: i32, level: i32, name: i32, value: *mut UCred, len: *mut u32) -> i32;
    fn getuid() -> u32;
}

/// The uid the kernel puts on a unix socket connection, if it names one.
fn peer_uid(stream: &UnixStream) -> Option<u32> {
    use std::os::fd::AsRawFd;
    let mut cred = UCred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<UCred>() as u32;
    // SAFETY: `cred` and `len` are valid for writes of the sizes given, and
    // the fd belongs to `stream`, which outlives the call.
    let rc = unsafe {
        getsockopt(
            stream.as_raw_fd(),
            SOL_SOCKET,
            SO_PEERCRED,
            &mut cred,
            &mut len,
        )
    };
    (rc == 0).then_some(cred.uid)
}

fn serve_http(stream: UnixStream) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut writer = stream;
    let mut line = String::new();
    // The request head ends at its first empty line.
    while reader.read_line(&mut line)? > 0 && !line.trim_end().is_empty() {
        line.clear();
    }
    // SAFETY: getuid cannot fail and touches no memory.
    let own = unsafe { getuid() };
    let (status, body) = match peer_uid(&writer) {
        Some(uid) if uid == own => ("200 OK", "chock serve stand-in\n".to_string()),
        Some(uid) => (
            "403 Forbidden",
            format!("uid {uid} is not this server's user\n"),
        ),
        None => (
            "403 Forbidden",
            "the kernel did not name the peer\n".to_string(),
        ),
    };
    log(&format!("answered {status}"));
    write!(
        writer,
        "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

fn log(line: &str) {
    eprintln!("chock-standin: {line}");
}

fn notify(state: &str) -> Result<(), String> {
    let Some(path) = std::env::var_os("NOTIFY_SOCKET") else {
        return Err("NOTIFY_SOCKET is not set".into());
    };
    let sock = UnixDatagram::unbound().map_err(|e| e.to_string())?;
    let path = path.to_string_lossy().into_owned();
    if let Some(name) = path.strip_prefix('@') {
        use std::os::linux::net::SocketAddrExt;
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())
            .map_err(|e| e.to_string())?;
        sock.send_to_addr(state.as_bytes(), &addr)
            .map_err(|e| e.to_string())?;
    } else {
        sock.send_to(state.as_bytes(), &path)
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn listener() -> Result<UnixListener, String> {
    let pid = std::env::var("LISTEN_PID").map_err(|_| "LISTEN_PID is not set".to_string())?;
    if pid != std::process::id().to_string() {
        return Err(format!("LISTEN_PID is {pid}, not this process"));
    }
    let fds: i32 = std::env::var("LISTEN_FDS")
        .map_err(|_| "LISTEN_FDS is not set".to_string())?
        .parse()
        .map_err(|_| "LISTEN_FDS is not a number".to_string())?;
    if fds != 1 {
        return Err(format!(
            "expected one inherited socket, got LISTEN_FDS={fds}"
        ));
    }
    // SAFETY: systemd passed fd 3 as a listening socket (checked above via
    // LISTEN_PID/LISTEN_FDS) and nothing else in this process owns it.
    Ok(unsafe { UnixListener::from_raw_fd(SD_LISTEN_FDS_START) })
}

fn probe_userns() -> String {
    let out = Command::new("unshare")
        .args([
            "--user",
            "--map-root-user",
            "--mount",
            "--pid",
            "--fork",
            "--ipc",
            "--uts",
            "--net",
        ])
        .args(["sh", "-c", "id -u"])
        .output();
    match out {
        Ok(o) if o.status.success() => {
            format!(
                "ok userns uid={}",
                String::from_utf8_lossy(&o.stdout).trim()
            )
        }
        Ok(o) => format!(
            "error userns: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        ),
        Err(e) => format!("error userns: {e}"),
    }
}

fn serve(stream: UnixStream) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut writer = stream;
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let Some(number) = line.trim_end().strip_prefix("hello chock-control ") else {
        writeln!(writer, "error you sent no greeting")?;
        return Ok(());
    };
    writeln!(writer, "ok chock-control {number}")?;
    log(&format!("greeted a client speaking chock-control {number}"));
    line.clear();
    if reader.read_line(&mut line)? > 0 && line.trim_end() == "probe-userns" {
        let answer = probe_userns();
        log(&answer);
        writeln!(writer, "{answer}")?;
    }
    Ok(())
}

fn main() {
    let verb = std::env::args().nth(1).unwrap_or_default();
    let handle: fn(UnixStream) -> std::io::Result<()> = match verb.as_str() {
        "daemon" => serve,
        "serve" => serve_http,
        _ => {
            log("usage: standin daemon | standin serve");
            std::process::exit(2);
        }
    };
    let listener = match listener() {
        Ok(l) => l,
        Err(e) => {
            log(&format!("no socket from systemd: {e}"));
            std::process::exit(1);
        }
    };
    let journal = if std::env::var_os("JOURNAL_STREAM").is_some() {
        "set"
    } else {
        "unset"
    };
    log(&format!(
        "{verb}: socket activation: one listener on fd 3; JOURNAL_STREAM {journal}"
    ));
    if let Err(e) = notify("READY=1\nSTATUS=serving") {
        log(&format!("sd-notify failed: {e}"));
        std::process::exit(1);
    }
    for stream in listener.incoming() {
        match stream {
            Ok(s) => {
                if let Err(e) = handle(s) {
                    log(&format!("connection failed: {e}"));
                }
            }
            Err(e) => log(&format!("accept failed: {e}")),
        }
    }
}
