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
use std::time::Duration;

use chock_policy::{Policy, Sources, Verdict};
use chock_sandbox::SandboxChild;
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
        self.serve_on(l, proxy.clone());
        addr
    }

    /// Serves `proxy` on `listener` (a router link's, say) until the task
    /// is aborted or the runtime ends.
    pub(crate) fn serve_on(
        &self,
        listener: TcpListener,
        proxy: Proxy,
    ) -> tokio::task::JoinHandle<()> {
        listener.set_nonblocking(true).unwrap();
        self.handle.spawn(async move {
            let l = tokio::net::TcpListener::from_std(listener).unwrap();
            let _ = proxy.serve_tcp(l).await;
        })
    }
}

/// Waits for a sandboxed child with piped output: its stdout, its stderr
/// and its exit code (-1 for a signal).
pub(crate) fn output_of(mut child: SandboxChild) -> (String, String, i32) {
    let mut out = String::new();
    let mut err = String::new();
    std::fs::File::from(child.stdout.take().unwrap())
        .read_to_string(&mut out)
        .unwrap();
    std::fs::File::from(child.stderr.take().unwrap())
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    (out, err, status.code().unwrap_or(-1))
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
    http_server(move |_head, s| {
        let resp = format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = s.write_all(resp.as_bytes());
    })
}

/// A local HTTP server that reads the head of each request, on a thread of
/// its own, and lets `respond` answer it; serves until the test process
/// ends. Its port.
pub(crate) fn http_server(respond: impl Fn(&[u8], &mut TcpStream) + Send + Sync + 'static) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let respond = Arc::new(respond);
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            let respond = Arc::clone(&respond);
            std::thread::spawn(move || {
                let mut head = Vec::new();
                let mut chunk = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut chunk) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&chunk[..n]),
                    }
                }
                respond(&head, &mut s);
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

/// curl on the host fetching `url` through the HTTP proxy at `proxy`:
/// (exit code, stdout, stderr).
pub(crate) fn curl_via(proxy: SocketAddr, url: &str) -> (i32, String, String) {
    curl(&["-x", &format!("http://{proxy}"), url])
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
