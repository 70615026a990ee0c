//! The degraded modes: without user namespaces the command runs under
//! landlock and seccomp alone, and says so; without landlock too it is
//! refused. Forced with `Sandbox::force_missing`, as `CHOCK_SANDBOX_FORCE`
//! does for `chock sandbox`.

use std::net::TcpListener;
use std::process::Command;

use chock_sandbox::{Sandbox, SpawnError};

use super::Fx;

fn degraded(fx: &Fx) -> Sandbox {
    let mut s = fx.sandbox();
    s.force_missing(true, false);
    s
}

#[test]
fn without_user_namespaces_the_report_says_so() {
    let fx = Fx::new();
    let child = degraded(&fx)
        .spawn(&[fx.probe.to_str().unwrap(), "euid"])
        .unwrap();
    let r = child.report().clone();
    assert!(!r.namespaces);
    assert!(
        r.degraded
            .iter()
            .any(|d| d.contains("user namespaces unavailable")),
        "{r}"
    );
}

#[test]
fn without_user_namespaces_landlock_still_guards_files() {
    let fx = Fx::new();
    let s = degraded(&fx);
    assert_eq!(
        fx.inside_of(&s, &["write", "/usr/x"]),
        Err(libc::EACCES).or(Err(libc::EROFS)).or(Err(libc::EACCES))
    );
    assert_eq!(
        fx.inside_of(&s, &["read", &fx.p(&fx.outside.join("secret.txt"))]),
        Err(libc::EACCES)
    );
    assert_eq!(
        fx.inside_of(&s, &["write", &fx.p(&fx.ro.join("x"))]),
        Err(libc::EACCES)
    );
    assert_eq!(
        fx.inside_of(&s, &["write", &fx.p(&fx.ws.join("x"))]),
        Ok(String::new())
    );
}

#[test]
fn without_user_namespaces_seccomp_keeps_the_network_out() {
    let fx = Fx::new();
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    assert_eq!(fx.outside(&["tcp", &addr]), Ok(String::new()));
    assert_eq!(
        fx.inside_of(&degraded(&fx), &["tcp", &addr]),
        Err(libc::EAFNOSUPPORT)
    );
    assert_eq!(
        fx.inside_of(&degraded(&fx), &["ptrace-child"]),
        Err(libc::EPERM)
    );
    assert_eq!(
        fx.inside_of(&degraded(&fx), &["mmap-rwx"]),
        Err(libc::EACCES)
    );
}

#[test]
fn without_user_namespaces_host_processes_cannot_be_signalled() {
    let fx = Fx::new();
    let mut victim = Command::new("sleep").arg("60").spawn().unwrap();
    assert_eq!(
        fx.inside_of(&degraded(&fx), &["kill", &victim.id().to_string()]),
        Err(libc::EPERM)
    );
    assert!(victim.try_wait().unwrap().is_none());
    victim.kill().unwrap();
    victim.wait().unwrap();
}

#[test]
fn without_namespaces_or_landlock_it_refuses_to_run() {
    let fx = Fx::new();
    let mut s = fx.sandbox();
    s.force_missing(true, true);
    let err = s.spawn(&["true"]).unwrap_err();
    assert!(matches!(err, SpawnError::NoIsolation { .. }), "{err:?}");
    assert!(err.to_string().contains("landlock"), "{err}");
}

#[test]
fn without_landlock_namespaces_still_run_and_say_so() {
    let fx = Fx::new();
    let mut s = fx.sandbox();
    s.force_missing(false, true);
    let child = s.spawn(&["true"]).unwrap();
    assert!(
        child
            .report()
            .degraded
            .iter()
            .any(|d| d.contains("landlock unavailable"))
    );
}
