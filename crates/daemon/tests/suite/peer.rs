//! The unix socket refuses every uid but the daemon's own, checked with the
//! kernel's credential on the connection. The second user is real:
//! `chocktest`, which `.ci/run` creates.

use std::os::unix::fs::PermissionsExt;

use pretty_assertions::assert_eq;

use super::Harness;

const CONNECT: &str = r#"
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b"hello chock-control 1\n")
data = b""
while True:
    chunk = s.recv(4096)
    if not chunk:
        break
    data += chunk
sys.stdout.write(data.decode())
"#;

#[tokio::test(flavor = "multi_thread")]
async fn another_user_is_refused_on_the_unix_socket() {
    let uid = std::process::Command::new("id")
        .args(["-u", "chocktest"])
        .output()
        .unwrap();
    assert!(
        uid.status.success(),
        "this test needs the user 'chocktest' (useradd --system chocktest; .ci/run creates it)"
    );
    let theirs = String::from_utf8(uid.stdout).unwrap().trim().to_owned();
    let h = Harness::boot("finish").await;
    // Open the way the mode would otherwise close, so the uid check is what
    // is tested.
    std::fs::set_permissions(h.state.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(h.socket(), std::fs::Permissions::from_mode(0o666)).unwrap();
    let socket = h.socket();
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new("runuser")
            .args(["-u", "chocktest", "--", "/usr/bin/python3", "-c", CONNECT])
            .arg(&socket)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ours = rustix::process::geteuid().as_raw();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!(
            "error refused: uid {theirs} is not uid {ours}, the user this daemon runs as; \
             connect as that user or put a proxy running as that user in front\n"
        )
    );
    // Its own user is still served.
    h.client().ping().await.unwrap();
}
