//! serve.sock answers every uid but serve's own with 403 Forbidden, checked
//! with the kernel's credential on the connection. The second user is real:
//! `chocktest`, which `.ci/run` creates.

use std::os::unix::fs::PermissionsExt;

use pretty_assertions::assert_eq;

use super::Harness;

const GET: &str = r#"
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b"GET /api/status HTTP/1.1\r\nHost: serve\r\nConnection: close\r\n\r\n")
data = b""
while True:
    chunk = s.recv(4096)
    if not chunk:
        break
    data += chunk
sys.stdout.write(data.decode())
"#;

#[tokio::test(flavor = "multi_thread")]
async fn another_user_is_answered_403_forbidden() {
    let uid = std::process::Command::new("id")
        .args(["-u", "chocktest"])
        .output()
        .unwrap();
    assert!(
        uid.status.success(),
        "this test needs the user 'chocktest' (useradd --system chocktest; .ci/run creates it)"
    );
    let theirs = String::from_utf8(uid.stdout).unwrap().trim().to_owned();
    let h = Harness::boot().await;
    // Open what the mode would otherwise close, so the uid check is what is
    // tested.
    std::fs::set_permissions(h.state.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(h.serve_socket(), std::fs::Permissions::from_mode(0o666)).unwrap();
    let socket = h.serve_socket();
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new("runuser")
            .args(["-u", "chocktest", "--", "/usr/bin/python3", "-c", GET])
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
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{text}");
    let ours = rustix::process::geteuid().as_raw();
    assert!(
        text.ends_with(&format!(
            "\r\n\r\n403 Forbidden: refused: uid {theirs} is not uid {ours}, the user chock serve \
             runs as; connect as that user, or run the proxy in front of this socket as that \
             user (see docs/serve.md)\n"
        )),
        "{text}"
    );
    // Its own user is still served.
    assert_eq!(h.get("/api/status").await.status.as_u16(), 200);
}
