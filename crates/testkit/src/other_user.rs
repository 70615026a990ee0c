//! A second, real user on the machine: `chocktest`, which `.ci/run`
//! creates. Tests that a socket refuses a foreign peer connect as this user,
//! so the refusal is the kernel's credential check and not a stand-in.

use std::path::Path;
use std::process::Command;

/// The user the peer tests connect as.
pub const OTHER_USER: &str = "chocktest";

const CONNECT: &str = r#"
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
try:
    s.sendall(sys.argv[2].encode())
except BrokenPipeError:
    pass  # refused before reading: the refusal is still there to read
data = b""
while True:
    chunk = s.recv(4096)
    if not chunk:
        break
    data += chunk
sys.stdout.write(data.decode())
"#;

/// [`OTHER_USER`]'s uid; panics, naming how to create the user, when the
/// machine has none.
pub fn other_uid() -> u32 {
    let out = Command::new("id")
        .args(["-u", OTHER_USER])
        .output()
        .unwrap_or_else(|err| panic!("cannot run id: {err}"));
    let uid = String::from_utf8_lossy(&out.stdout).trim().parse().ok();
    match uid.filter(|_| out.status.success()) {
        Some(uid) => uid,
        None => panic!(
            "this test needs the user '{OTHER_USER}' (useradd --system {OTHER_USER}; .ci/run creates it)"
        ),
    }
}

/// Connects to the unix socket at `socket` as [`OTHER_USER`], sends `text`
/// and returns everything that came back before the close. Blocking: call
/// it from `spawn_blocking` in an async test.
pub fn exchange_as_other_user(socket: &Path, text: &str) -> String {
    other_uid();
    crate::stdout_of(
        Command::new("runuser")
            .args(["-u", OTHER_USER, "--", "/usr/bin/python3", "-c", CONNECT])
            .arg(socket)
            .arg(text),
        &format!("runuser to connect as {OTHER_USER}"),
    )
}
