//! The router's tests again as the unprivileged user `chocktest`, the way
//! `suite::users` reruns the escape suite: as root, copy this test binary
//! where that user can run it and rerun every `suite::net::` test.

#[test]
fn the_router_works_for_an_unprivileged_user() {
    let rerun = match chock_testkit::Rerun::prepare() {
        Ok(rerun) => rerun,
        Err(why) => return println!("{why}"),
    };
    let (passed, shown) = rerun.run(
        &[("HOME", "/tmp".to_owned())],
        &["suite::net::", "--test-threads=2"],
    );
    println!("{shown}");
    assert!(passed >= 14, "only {passed} router tests ran as chocktest");
}
