//! The trust store a sandbox with a network is given: the host's own CA
//! bundle, copied in (so the command reads a file of the sandbox's root, not
//! a path into the host), `SSL_CERT_FILE` pointed at the copy, and the
//! conventional `/etc/ssl/certs/ca-certificates.crt` linked to it where the
//! host's `/etc/ssl` is not already bound there. A caller that sets
//! `SSL_CERT_FILE` itself keeps its own (see `SandboxSpec::with_router`).
//! Also the `/etc/resolv.conf` a sandbox with the fake resolver is given.

use std::path::{Path, PathBuf};

use crate::error::SpecError;
use crate::plan::{Builder, CONVENTIONAL_BUNDLE, Op, cstring};

/// Where the copy lives inside the sandbox.
pub const TRUST_STORE_PATH: &str = "/etc/chock/ca-certificates.crt";

/// Bundles tried in order: Debian and Ubuntu, Fedora and RHEL, NixOS,
/// openSUSE, Alpine's older path.
const CANDIDATES: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/static/ssl/certs/ca-certificates.crt",
    "/etc/ssl/ca-bundle.pem",
    "/etc/ssl/cert.pem",
];

/// The host's CA bundle: the host's own `SSL_CERT_FILE` when it names a
/// file, else the first of the usual paths that exists.
pub fn host_bundle() -> Option<PathBuf> {
    std::env::var_os("SSL_CERT_FILE")
        .map(PathBuf::from)
        .into_iter()
        .chain(CANDIDATES.iter().map(PathBuf::from))
        .find(|p| p.is_file())
}

/// Adds the copy (and, where `/etc/ssl` is not bound, the link) to `b`.
pub(crate) fn trust_ops(b: &mut Builder, bundle: &Path, ssl_bound: bool) -> Result<(), SpecError> {
    let contents = std::fs::read(bundle).map_err(|_| SpecError::PathMissing {
        what: "CA bundle for the trust store",
        path: bundle.to_path_buf(),
    })?;
    let dst = Path::new(TRUST_STORE_PATH);
    b.mkdirs(dst, false)?;
    b.push(
        Op::Copy {
            path: cstring(dst)?,
            contents,
            mode: 0o644,
        },
        "copy the trust store to {path}",
    );
    if !ssl_bound {
        let link = Path::new(CONVENTIONAL_BUNDLE);
        b.mkdirs(link, false)?;
        b.push(
            Op::Symlink {
                target: cstring(dst)?,
                link: cstring(link)?,
            },
            "link {path} -> {target}",
        );
    }
    Ok(())
}

/// Where the fake resolver's `resolv.conf` is written.
pub const RESOLV_CONF: &str = "/etc/resolv.conf";

/// `/etc/resolv.conf` for the fake resolver: its address only, no search
/// list (a name is asked for as written), short timeouts since the answer
/// is local.
pub(crate) fn resolv_conf_ops(b: &mut Builder) -> Result<(), SpecError> {
    let dst = Path::new(RESOLV_CONF);
    b.mkdirs(dst, false)?;
    let [a, b1, c, d] = super::inside::RESOLVER_ADDR;
    b.push(
        Op::Copy {
            path: cstring(dst)?,
            contents: format!("nameserver {a}.{b1}.{c}.{d}\noptions timeout:2 attempts:2\n")
                .into_bytes(),
            mode: 0o644,
        },
        "write {path} for the fake resolver",
    );
    Ok(())
}
