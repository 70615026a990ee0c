//! The router around a real sandbox: curl inside, the proxy on the host,
//! published ports, the trust store.

use std::io::Read;
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

use chock_sandbox::net::{
    MAX_PUBLISHED, Proxy, PublishError, Published, RouterLink, TRUST_STORE_PATH,
};
use chock_sandbox::{Sandbox, SandboxChild, SandboxSpec, Stdio};

use super::{Rt, config, foreground, origin, output_of};
use crate::suite::wait_for;

fn spec(ws: &std::path::Path) -> SandboxSpec {
    let mut spec = SandboxSpec::new(ws).with_router();
    spec.stdin = Stdio::Null;
    spec.stdout = Stdio::Piped;
    spec.stderr = Stdio::Piped;
    spec
}

/// Spawns `argv` with the router, serving its listener with a proxy
/// deciding from the test rules.
fn run(
    rt: &Rt,
    ws: &std::path::Path,
    spec: SandboxSpec,
    argv: &[&str],
) -> (SandboxChild, Arc<RouterLink>) {
    let sandbox = Sandbox::new(spec).unwrap();
    let mut child = sandbox.spawn(argv).unwrap();
    let link = Arc::new(child.take_router().unwrap());
    let proxy = Proxy::new(foreground(ws, None), config());
    rt.serve_on(link.listener().unwrap(), proxy);
    (child, link)
}

fn curl_inside(args: &[String]) -> Vec<String> {
    let mut v: Vec<String> = ["curl", "-sS", "--max-time", "20"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    v.extend(args.iter().cloned());
    v
}

fn sandboxed_curl(args: &[String]) -> (String, String, i32) {
    let ws = tempfile::tempdir().unwrap();
    let rt = Rt::new();
    let argv = curl_inside(args);
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let (child, _link) = run(&rt, ws.path(), spec(ws.path()), &argv);
    output_of(child)
}

#[test]
fn curl_inside_reaches_an_allowed_name_through_the_router() {
    let port = origin("through the router");
    for extra in [vec![], vec!["-p".to_owned()]] {
        let mut args = extra;
        args.push(format!("http://allowed.test:{port}/"));
        let (out, err, code) = sandboxed_curl(&args);
        assert_eq!(
            (code, out.as_str()),
            (0, "through the router"),
            "{args:?}: {err}"
        );
    }
    // ALL_PROXY is SOCKS5 with remote names.
    let (out, err, code) = sandboxed_curl(&[
        "--proxy".into(),
        "socks5h://127.0.0.1:3128".into(),
        format!("http://allowed.test:{port}/"),
    ]);
    assert_eq!((code, out.as_str()), (0, "through the router"), "{err}");
}

#[test]
fn curl_inside_is_refused_a_denied_name_with_the_rule_named() {
    let port = origin("never");
    let (out, _, _) = sandboxed_curl(&[format!("http://denied.test:{port}/")]);
    assert!(out.contains("net.connect.test.denied refused"), "{out}");
    assert!(out.contains(".decision = .allow"), "{out}");
    let (_, err, code) = sandboxed_curl(&["-p".into(), format!("http://denied.test:{port}/")]);
    assert_ne!(code, 0);
    assert!(err.contains("403"), "{err}");
}

#[test]
fn a_direct_connection_without_the_proxy_reaches_nothing() {
    let port = origin("host loopback");
    // The host's 127.0.0.1 is not the sandbox's: nothing listens there.
    let (out, err, code) = sandboxed_curl(&[
        "--noproxy".into(),
        "*".into(),
        format!("http://127.0.0.1:{port}/"),
    ]);
    assert_ne!(code, 0, "{out}");
    assert!(
        err.contains("Couldn't connect") || err.contains("Failed to connect"),
        "{err}"
    );
    // Through the proxy (NO_PROXY lists loopback, so it is overridden), the
    // same address goes through the decision, and the test rules name it.
    let (out, _, code) = sandboxed_curl(&[
        "--noproxy".into(),
        String::new(),
        format!("http://127.0.0.1:{port}/"),
    ]);
    assert_eq!((code, out.as_str()), (0, "host loopback"));
}

#[test]
fn the_proxy_variables_and_the_trust_store_are_set() {
    let (out, err, code) = sandboxed_curl(&["--version".into()]);
    assert_eq!(code, 0, "{out}{err}");
    let ws = tempfile::tempdir().unwrap();
    let rt = Rt::new();
    let script = format!(
        "echo $HTTP_PROXY $https_proxy $ALL_PROXY $SSL_CERT_FILE; cmp $SSL_CERT_FILE {} && echo same; test -s /etc/ssl/certs/ca-certificates.crt && echo conventional",
        chock_sandbox::net::host_bundle().unwrap().display()
    );
    let (child, _l) = run(&rt, ws.path(), spec(ws.path()), &["sh", "-c", &script]);
    let (out, err, _) = output_of(child);
    assert_eq!(
        out,
        format!(
            "http://127.0.0.1:3128 http://127.0.0.1:3128 socks5h://127.0.0.1:3128 {TRUST_STORE_PATH}\nsame\nconventional\n"
        ),
        "{err}"
    );
    // A project's own SSL_CERT_FILE is kept.
    let mut own = SandboxSpec::new(ws.path())
        .env("SSL_CERT_FILE", "/workspace/ca.pem")
        .with_router();
    own.stdout = Stdio::Piped;
    own.stderr = Stdio::Piped;
    let (child, _l) = run(&rt, ws.path(), own, &["sh", "-c", "echo $SSL_CERT_FILE"]);
    assert_eq!(output_of(child).0, "/workspace/ca.pem\n");
}

/// A free port on the host's loopback, above 1024.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn a_published_port_is_reachable_from_the_host_on_127_0_0_1_only() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("index.html"), "served from the sandbox").unwrap();
    let rt = Rt::new();
    let port = free_port();
    let mut s = spec(ws.path());
    s.stdout = Stdio::Null;
    s.stderr = Stdio::Null;
    let (mut child, link) = run(
        &rt,
        ws.path(),
        s,
        &[
            "python3",
            "-m",
            "http.server",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
        ],
    );
    let mut published = Published::new(Arc::clone(&link));
    {
        let _guard = rt.handle.enter();
        published.publish(port).unwrap();
    }
    let fetch = |host: &str| {
        let mut s = TcpStream::connect((host, port)).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
        std::io::Write::write_all(&mut s, b"GET /index.html HTTP/1.0\r\n\r\n").ok()?;
        let mut out = String::new();
        s.read_to_string(&mut out).ok()?;
        Some(out)
    };
    wait_for(
        "the published port to answer",
        Duration::from_secs(20),
        || fetch("127.0.0.1").is_some_and(|o| o.ends_with("served from the sandbox")),
    );
    // Another loopback address of the host is not it: the listener is on
    // 127.0.0.1 alone.
    assert!(TcpStream::connect(("127.0.0.2", port)).is_err());
    assert_eq!(published.ports(), vec![port]);
    child.kill().unwrap();
    let _ = child.wait();
}

#[test]
fn publishing_reports_a_low_port_a_taken_port_and_too_many() {
    let ws = tempfile::tempdir().unwrap();
    let rt = Rt::new();
    let mut s = spec(ws.path());
    s.stdout = Stdio::Null;
    s.stderr = Stdio::Null;
    let (mut child, link) = run(&rt, ws.path(), s, &["sleep", "30"]);
    let _guard = rt.handle.enter();
    let mut published = Published::new(link);
    let e = published.publish(80).unwrap_err();
    assert!(matches!(e, PublishError::Privileged { port: 80 }), "{e}");
    assert!(e.to_string().contains("under 1024"));
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let tport = taken.local_addr().unwrap().port();
    let e = published.publish(tport).unwrap_err();
    assert!(matches!(e, PublishError::InUse { .. }), "{e}");
    assert!(
        e.to_string()
            .contains(&format!("already listens on 127.0.0.1:{tport}"))
    );
    let mut holders = Vec::new();
    while published.ports().len() < MAX_PUBLISHED {
        let p = free_port();
        if published.publish(p).is_ok() {
            holders.push(p);
        }
    }
    let extra = free_port();
    let e = published.publish(extra).unwrap_err();
    assert!(matches!(e, PublishError::TooMany { .. }), "{e}");
    assert!(
        e.to_string()
            .contains(&format!("already publishes {MAX_PUBLISHED} ports"))
    );
    drop(published);
    child.kill().unwrap();
    let _ = child.wait();
}
