//! serve.sock answers every uid but serve's own with 403 Forbidden, checked
//! with the kernel's credential on the connection. The second user is real:
//! `chocktest`, which `.ci/run` creates.

use std::os::unix::fs::PermissionsExt;

use pretty_assertions::assert_eq;

use super::{Harness, HasTestDirs};

#[tokio::test(flavor = "multi_thread")]
async fn another_user_is_answered_403_forbidden() {
    let theirs = chock_testkit::other_uid();
    let h = Harness::boot().await;
    // Open what the mode would otherwise close, so the uid check is what is
    // tested.
    std::fs::set_permissions(h.state(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(h.serve_socket(), std::fs::Permissions::from_mode(0o666)).unwrap();
    let socket = h.serve_socket();
    let text = tokio::task::spawn_blocking(move || {
        chock_testkit::exchange_as_other_user(
            &socket,
            "GET /api/status HTTP/1.1\r\nHost: serve\r\nConnection: close\r\n\r\n",
        )
    })
    .await
    .unwrap();
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
