//! Devices passed in: a real character device (a pseudo-terminal's
//! node, opened here) bound at a name of the caller's choosing beneath
//! `/dev`, reachable inside, while every other device node of the host
//! stays out of reach.

use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::PathBuf;

use chock_sandbox::{DeviceNode, Sandbox, SpecError};

use super::Fx;

/// A pseudo-terminal: the master, and the path of its node.
fn pty() -> (std::fs::File, PathBuf) {
    unsafe {
        let master = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        assert!(
            master >= 0,
            "posix_openpt: {}",
            std::io::Error::last_os_error()
        );
        assert_eq!(libc::grantpt(master), 0);
        assert_eq!(libc::unlockpt(master), 0);
        let mut name = [0 as libc::c_char; 128];
        assert_eq!(libc::ptsname_r(master, name.as_mut_ptr(), name.len()), 0);
        let path = std::ffi::CStr::from_ptr(name.as_ptr())
            .to_string_lossy()
            .into_owned();
        (
            std::fs::File::from(OwnedFd::from_raw_fd(master)),
            PathBuf::from(path),
        )
    }
}

#[test]
fn a_passed_in_device_is_reachable_at_its_name_and_no_other_node_is() {
    let fx = Fx::new();
    let (mut master, node) = pty();
    let (_other, other_node) = pty();
    // The positive control: the host's node takes a write.
    assert!(fx.outside(&["write", node.to_str().unwrap()]).is_ok());
    let mut spec = fx.spec();
    spec.devices.push(DeviceNode {
        host: node.clone(),
        at: "/dev/ttyUSB0".into(),
    });
    let sandbox = Sandbox::new(spec).unwrap();
    let mut got = [0u8; 64];
    let n = master.read(&mut got).unwrap();
    assert!(n > 0);
    assert_eq!(
        fx.inside_of(&sandbox, &["write", "/dev/ttyUSB0"]),
        Ok(String::new())
    );
    let n = master.read(&mut got).unwrap();
    assert_eq!(&got[..n], b"escaped");
    // The host's names for it and for another terminal are not there: the
    // sandbox's /dev/pts is a devpts of its own.
    for path in [&node, &other_node] {
        assert!(fx.outside(&["write", path.to_str().unwrap()]).is_ok());
        let got = fx.inside_of(&sandbox, &["write", path.to_str().unwrap()]);
        assert!(got.is_err(), "{}: {got:?}", path.display());
    }
    let unnamed = fx.inside_of(&sandbox, &["write", "/dev/ttyUSB1"]);
    assert!(unnamed.is_err(), "{unnamed:?}");
}

#[test]
fn a_device_placed_outside_dev_or_missing_is_refused_when_the_sandbox_is_built() {
    let fx = Fx::new();
    for at in ["/workspace/tty", "/dev/pts/9", "/dev/shm/x", "/dev"] {
        let mut spec = fx.spec();
        spec.devices.push(DeviceNode {
            host: "/dev/null".into(),
            at: at.into(),
        });
        assert!(
            matches!(Sandbox::new(spec), Err(SpecError::DeviceAt { .. })),
            "{at}"
        );
    }
    let mut spec = fx.spec();
    spec.devices.push(DeviceNode {
        host: "/dev/chock-no-such-node".into(),
        at: "/dev/ttyUSB0".into(),
    });
    let err = Sandbox::new(spec).unwrap_err();
    assert!(
        err.to_string()
            .contains("device node /dev/chock-no-such-node does not exist"),
        "{err}"
    );
}

#[test]
fn without_user_namespaces_only_the_passed_in_node_is_reachable_at_its_host_path() {
    let fx = Fx::new();
    let (mut master, node) = pty();
    let (_other, other_node) = pty();
    let mut spec = fx.spec();
    spec.devices.push(DeviceNode {
        host: node.clone(),
        at: "/dev/ttyUSB0".into(),
    });
    let mut sandbox = Sandbox::new(spec).unwrap();
    sandbox.force_missing(true, false);
    // No new root: the command sees the host's /dev, and landlock grants
    // the passed-in node alone beside the six every command gets.
    assert_eq!(
        fx.inside_of(&sandbox, &["write", node.to_str().unwrap()]),
        Ok(String::new())
    );
    let mut got = [0u8; 64];
    let n = master.read(&mut got).unwrap();
    assert_eq!(&got[..n], b"escaped");
    assert!(fx.outside(&["write", other_node.to_str().unwrap()]).is_ok());
    assert_eq!(
        fx.inside_of(&sandbox, &["write", other_node.to_str().unwrap()]),
        Err(libc::EACCES)
    );
}
