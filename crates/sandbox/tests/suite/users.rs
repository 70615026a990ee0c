//! The escape suite again as an unprivileged user: run as root, this test
//! copies the test binary and the probe where `chocktest` can read them and
//! reruns every `suite::escape` test under that user. Run unprivileged, the
//! suite already is the unprivileged half.

use super::probe_bin;

#[test]
fn the_escape_suite_holds_for_an_unprivileged_user() {
    let rerun = match chock_testkit::Rerun::prepare() {
        Ok(rerun) => rerun,
        Err(why) => return println!("{why}"),
    };
    let probe = rerun.copy(&probe_bin(), "chock-sandbox-probe", 0o755);
    // A root-owned setuid copy: outside it makes the user root, inside not.
    let suid = rerun.copy(&probe_bin(), "suid-probe", 0o4755);
    let (passed, shown) = rerun.run(
        &[
            ("CHOCK_SANDBOX_PROBE", probe.display().to_string()),
            ("CHOCK_SANDBOX_SUID_PROBE", suid.display().to_string()),
        ],
        &["suite::escape::", "--test-threads=2"],
    );
    println!("{shown}");
    assert!(passed >= 40, "only {passed} attempts ran as chocktest");
}
