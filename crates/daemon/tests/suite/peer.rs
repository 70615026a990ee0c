//! The unix socket refuses every uid but the daemon's own, checked with the
//! kernel's credential on the connection. The second user is real:
//! `chocktest`, which `.ci/run` creates.

use std::os::unix::fs::PermissionsExt;

use pretty_assertions::assert_eq;

use super::{HasTestDirs, StandIn, TestDaemon};

#[tokio::test(flavor = "multi_thread")]
async fn another_user_is_refused_on_the_unix_socket() {
    let theirs = chock_testkit::other_uid();
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    // Open the way the mode would otherwise close, so the uid check is what
    // is tested.
    std::fs::set_permissions(h.state(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(h.socket(), std::fs::Permissions::from_mode(0o666)).unwrap();
    let socket = h.socket();
    let text = tokio::task::spawn_blocking(move || {
        chock_testkit::exchange_as_other_user(&socket, "hello chock-control 1\n")
    })
    .await
    .unwrap();
    let ours = rustix::process::geteuid().as_raw();
    assert_eq!(
        text,
        format!(
            "error refused: uid {theirs} is not uid {ours}, the user this daemon runs as; \
             connect as that user or put a proxy running as that user in front\n"
        )
    );
    // Its own user is still served.
    h.client().ping().await.unwrap();
}
