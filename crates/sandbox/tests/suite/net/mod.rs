//! The router's tests: the proxy on its own (no namespace), then the router
//! around a real sandbox with curl inside. Local servers only: test names
//! (`allowed.test`, ...) resolve to 127.0.0.1 through the proxy's override
//! map, and nothing here dials any address but loopback.

mod bench;
mod fake;
mod proxy;
mod router;
mod users;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chock_policy::{Policy, Sources, Verdict};
use chock_sandbox::net::{AskFn, Decider, PolicyDecider, Proxy, ProxyConfig};

/// A tokio runtime on a thread of its own, as `chock run` gives the proxy
/// one; tests hand it listeners to serve.
pub(crate) struct Rt {
    pub(crate) handle: tokio::runtime::Handle,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl Rt {
    pub(crate) fn new() -> Self {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let handle = rt.handle().clone();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        std::thread::spawn(move || {
            let _ = rt.block_on(rx);
        });
        Self { handle, _stop: tx }
    }

    /// Serves `proxy` on a fresh listener on the host's loopback.
    pub(crate) fn serve(&self, proxy: &Proxy) -> SocketAddr {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        l.set_nonblocking(true).unwrap();
        let p = proxy.clone();
        self.handle.spawn(async move {
            let l = tokio::net::TcpListener::from_std(l).unwrap();
            let _ = p.serve_tcp(l).await;
        });
        addr
    }
}

/// A policy from a project chock.zon holding `rules` (no org bundle, no
/// operator file).
pub(crate) fn policy(dir: &Path, rules: &[(&str, &str)]) -> Arc<Policy> {
    let mut text = String::from(".{ .policy = .{ .rules = .{\n");
    for (action, decision) in rules {
        text.push_str(&format!(
            "    .{{ .action = \"{action}\", .decision = .{decision} }},\n"
        ));
    }
    text.push_str("} } }\n");
    let file = dir.join("chock.zon");
    std::fs::write(&file, text).unwrap();
    Arc::new(
        Policy::load_from(&Sources {
            project: Some(file),
            ..Sources::default()
        })
        .unwrap(),
    )
}

/// The rules most tests use: two test names allowed, one denied, and
/// 127.0.0.1 named so the allowed names may reach local servers.
pub(crate) const RULES: &[(&str, &str)] = &[
    ("net.connect.test.allowed", "allow"),
    ("net.connect.test.other", "allow"),
    ("net.connect.test.denied", "deny"),
    ("net.connect.127.0.0.1", "allow"),
];

/// The override map: every test name is 127.0.0.1.
pub(crate) fn config() -> ProxyConfig {
    let lo = "127.0.0.1".parse().unwrap();
    ProxyConfig {
        resolve_overrides: vec![
            ("allowed.test".into(), lo),
            ("other.test".into(), lo),
            ("denied.test".into(), lo),
            ("asked.test".into(), lo),
            ("rebind.test".into(), lo),
        ],
        ..ProxyConfig::default()
    }
}

/// An ask callback that records the question and answers `yes`.
pub(crate) fn asker(yes: bool) -> (AskFn, Arc<std::sync::Mutex<Vec<String>>>) {
    let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
    let a = Arc::clone(&asked);
    let f: AskFn = Arc::new(move |v: Verdict| {
        a.lock().unwrap().push(v.action.clone());
        Box::pin(async move { yes })
    });
    (f, asked)
}

pub(crate) fn foreground(dir: &Path, ask: Option<AskFn>) -> Arc<dyn Decider> {
    Arc::new(PolicyDecider::foreground(policy(dir, RULES), ask))
}

/// A local HTTP server answering every request with `body`; serves until
/// the test process ends.
pub(crate) fn origin(body: &'static str) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 1024];
                while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut chunk) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
                let resp = format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = s.write_all(resp.as_bytes());
            });
        }
    });
    port
}

/// Sends `bytes` to `addr` and reads until the peer closes (or 10 s).
pub(crate) fn exchange(addr: SocketAddr, bytes: &[u8]) -> Vec<u8> {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(bytes).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    out
}

/// Polls `f` until it returns true or `limit` passes.
pub(crate) fn wait_for(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    f()
}

/// curl on the host with `args`: (exit code, stdout, stderr).
pub(crate) fn curl(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new("curl")
        .args(["-sS", "--max-time", "20"])
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
