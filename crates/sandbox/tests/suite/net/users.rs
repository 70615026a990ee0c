//! The router's tests again as the unprivileged user `chocktest`, the way
//! `suite::users` reruns the escape suite: as root, copy this test binary
//! where that user can run it and rerun every `suite::net::` test.

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use crate::suite::is_root;

#[test]
fn the_router_works_for_an_unprivileged_user() {
    if !is_root() {
        println!("running unprivileged already: this run is the unprivileged half");
        return;
    }
    let exists = Command::new("id")
        .args(["-u", "chocktest"])
        .output()
        .unwrap();
    if !exists.status.success() {
        assert!(
            std::env::var_os("CI").is_none(),
            "user chocktest is missing: .ci/run creates it"
        );
        println!("skipped: user chocktest does not exist; .ci/run creates it");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let exe = dir.path().join("suite");
    std::fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = Command::new("runuser")
        .args(["-u", "chocktest", "--", "env", "TMPDIR=/tmp", "HOME=/tmp"])
        .arg(&exe)
        .args(["suite::net::", "--test-threads=2"])
        .current_dir("/tmp")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        out.status.success(),
        "the router's tests failed as chocktest"
    );
    let passed: usize = stdout
        .lines()
        .find_map(|l| {
            l.strip_prefix("test result: ok. ")
                .and_then(|r| r.split(' ').next())
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0);
    assert!(passed >= 14, "only {passed} router tests ran as chocktest");
}
