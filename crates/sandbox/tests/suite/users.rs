//! The escape suite again as an unprivileged user: run as root, this test
//! copies the test binary and the probe where `chocktest` can read them and
//! reruns every `suite::escape` test under that user. Run unprivileged, the
//! suite already is the unprivileged half.

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use super::{is_root, probe_bin};

const USER: &str = "chocktest";

#[test]
fn the_escape_suite_holds_for_an_unprivileged_user() {
    if !is_root() {
        println!("running unprivileged already: this run is the unprivileged half");
        return;
    }
    let exists = Command::new("id")
        .arg("-u")
        .arg(USER)
        .output()
        .unwrap()
        .status
        .success();
    if !exists {
        assert!(
            std::env::var_os("CI").is_none(),
            "user {USER} is missing: .ci/run creates it"
        );
        println!("skipped: user {USER} does not exist (useradd {USER}); .ci/run creates it");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let exe = dir.path().join("suite");
    let probe = dir.path().join("chock-sandbox-probe");
    std::fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
    std::fs::copy(probe_bin(), &probe).unwrap();
    for p in [&exe, &probe] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    // A root-owned setuid copy: outside it makes the user root, inside not.
    let suid = dir.path().join("suid-probe");
    std::fs::copy(probe_bin(), &suid).unwrap();
    std::fs::set_permissions(&suid, std::fs::Permissions::from_mode(0o4755)).unwrap();

    let out = Command::new("runuser")
        .args(["-u", USER, "--", "env"])
        .arg(format!("CHOCK_SANDBOX_PROBE={}", probe.display()))
        .arg(format!("CHOCK_SANDBOX_SUID_PROBE={}", suid.display()))
        .arg("TMPDIR=/tmp")
        .arg(&exe)
        .args(["suite::escape::", "--test-threads=2"])
        .current_dir("/tmp")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the escape suite failed as {USER}");
    assert!(stdout.contains("test result: ok"), "no tests ran as {USER}");
    let passed: usize = stdout
        .lines()
        .find_map(|l| {
            l.strip_prefix("test result: ok. ")
                .and_then(|r| r.split(' ').next())
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0);
    assert!(passed >= 40, "only {passed} attempts ran as {USER}");
}
