//! The proxy alone, on the host's loopback: each protocol, each refusal and
//! the bad inputs the router must survive.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

use chock_sandbox::net::{PolicyDecider, Proxy, ProxyConfig};

use super::{RULES, Rt, asker, config, curl, curl_via, exchange, foreground, origin, policy};
use crate::suite::wait_for;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn an_allowed_name_is_reached_by_connect_plain_http_and_socks5() {
    let dir = tempfile::tempdir().unwrap();
    let rt = Rt::new();
    let proxy = Proxy::new(foreground(dir.path(), None), config());
    let p = rt.serve(&proxy).to_string();
    let port = origin("hello from origin");
    let url = format!("http://allowed.test:{port}/x");
    let http = format!("http://{p}");
    for args in [
        vec!["-x", http.as_str(), url.as_str()],
        vec!["-p", "-x", http.as_str(), url.as_str()],
        vec!["--socks5-hostname", p.as_str(), url.as_str()],
    ] {
        let (code, out, err) = curl(&args);
        assert_eq!(
            (code, out.as_str()),
            (0, "hello from origin"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn a_denied_name_is_refused_with_the_rule_to_add() {
    let dir = tempfile::tempdir().unwrap();
    let rt = Rt::new();
    let proxy = Proxy::new(foreground(dir.path(), None), config());
    let p = rt.serve(&proxy);
    let port = origin("secret");
    let resp = text(&exchange(
        p,
        format!("CONNECT denied.test:{port} HTTP/1.1\r\nHost: denied.test\r\n\r\n").as_bytes(),
    ));
    assert!(resp.starts_with("HTTP/1.1 403 "), "{resp}");
    assert!(resp.contains("net.connect.test.denied refused"), "{resp}");
    assert!(resp.contains(".decision = .allow"), "{resp}");
    assert!(!resp.contains("secret"), "{resp}");
    // Plain HTTP shows the same text as the body curl prints.
    let (_, out, _) = curl_via(p, &format!("http://denied.test:{port}/"));
    assert!(out.contains("net.connect.test.denied"), "{out}");
    // SOCKS5 gets "not allowed by ruleset".
    let (code, _, err) = curl(&[
        "--socks5-hostname",
        &p.to_string(),
        &format!("http://denied.test:{port}/"),
    ]);
    assert_ne!(code, 0, "{err}");
    // curl 7.88 prints the reply code: 2 is "connection not allowed by ruleset".
    assert!(err.contains("(2)") || err.contains("not allowed"), "{err}");
}

#[test]
fn a_name_rebound_to_loopback_is_refused_unless_a_rule_names_the_address() {
    let dir = tempfile::tempdir().unwrap();
    let rt = Rt::new();
    let port = origin("inside the person's machine");
    let url = format!("http://rebind.test:{port}/");
    // The name is allowed; the address it resolves to is named by no rule.
    let decider = Arc::new(PolicyDecider::foreground(
        policy(dir.path(), &[("net.connect.test.rebind", "allow")]),
        None,
    ));
    let p = rt.serve(&Proxy::new(decider, config()));
    let (_, out, _) = curl_via(p, &url);
    assert!(
        out.contains("resolves to 127.0.0.1, an internal address"),
        "{out}"
    );
    assert!(out.contains("net.connect.127.0.0.1"), "{out}");
    // Naming the address is what lets it through.
    let decider = Arc::new(PolicyDecider::foreground(
        policy(
            dir.path(),
            &[
                ("net.connect.test.rebind", "allow"),
                ("net.connect.127.0.0.1", "allow"),
            ],
        ),
        None,
    ));
    let p = rt.serve(&Proxy::new(decider, config()));
    let (_, out, _) = curl_via(p, &url);
    assert_eq!(out, "inside the person's machine");
}

#[test]
fn an_ask_reaches_the_callback_and_its_answer_decides() {
    let dir = tempfile::tempdir().unwrap();
    let rt = Rt::new();
    let port = origin("asked and answered");
    let url = format!("http://asked.test:{port}/");
    let (no, asked_no) = asker(false);
    let p = rt.serve(&Proxy::new(foreground(dir.path(), Some(no)), config()));
    let (_, out, _) = curl_via(p, &url);
    assert!(out.contains("a person answered no"), "{out}");
    assert!(out.contains("net.connect.test.asked"), "{out}");
    assert_eq!(
        *asked_no.lock().unwrap(),
        vec!["net.connect.test.asked".to_owned()]
    );

    let (yes, asked_yes) = asker(true);
    let p = rt.serve(&Proxy::new(foreground(dir.path(), Some(yes)), config()));
    let (_, out, _) = curl_via(p, &url);
    assert_eq!(out, "asked and answered");
    assert_eq!(asked_yes.lock().unwrap().len(), 1);
}

#[test]
fn a_background_command_is_refused_where_the_foreground_would_have_asked() {
    let dir = tempfile::tempdir().unwrap();
    let rt = Rt::new();
    let port = origin("foreground only");
    let url = format!("http://asked.test:{port}/");
    let bg = Arc::new(PolicyDecider::background(policy(dir.path(), RULES)));
    let p = rt.serve(&Proxy::new(bg, config()));
    let (_, out, _) = curl_via(p, &url);
    assert!(
        out.contains("a background command gets only what is allowed outright"),
        "{out}"
    );
    assert!(out.contains("net.connect.test.asked"), "{out}");
    // The same host, allowed outright, reaches a background command too.
    let (_, out, _) = curl_via(p, &format!("http://allowed.test:{port}/"));
    assert_eq!(out, "foreground only");
}

#[test]
fn a_malformed_connect_host_is_refused_and_the_proxy_keeps_serving() {
    let dir = tempfile::tempdir().unwrap();
    let rt = Rt::new();
    let p = rt.serve(&Proxy::new(foreground(dir.path(), None), config()));
    let port = origin("still here");
    for bad in [
        "CONNECT exa mple.com:443 HTTP/1.1\r\n\r\n",
        "CONNECT allowed.test HTTP/1.1\r\n\r\n",
        "CONNECT allowed.test:99999 HTTP/1.1\r\n\r\n",
        "CONNECT a/b:80 HTTP/1.1\r\n\r\n",
        "CONNECT ..:80 HTTP/1.1\r\n\r\n",
        "GET /relative HTTP/1.1\r\n\r\n",
        "garbage\r\n\r\n",
    ] {
        let resp = text(&exchange(p, bad.as_bytes()));
        assert!(
            resp.starts_with("HTTP/1.1 400 ") || resp.starts_with("HTTP/1.1 403 "),
            "{bad:?} -> {resp}"
        );
    }
    let (_, out, _) = curl_via(p, &format!("http://allowed.test:{port}/"));
    assert_eq!(out, "still here");
}

#[test]
fn an_unsupported_socks_command_gets_command_not_supported() {
    let dir = tempfile::tempdir().unwrap();
    let rt = Rt::new();
    let p = rt.serve(&Proxy::new(foreground(dir.path(), None), config()));
    for cmd in [2u8, 3, 9] {
        let mut s = TcpStream::connect(p).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(&[5, 1, 0]).unwrap();
        let mut m = [0u8; 2];
        s.read_exact(&mut m).unwrap();
        assert_eq!(m, [5, 0]);
        s.write_all(&[5, cmd, 0, 1, 127, 0, 0, 1, 0, 80]).unwrap();
        let mut r = [0u8; 10];
        s.read_exact(&mut r).unwrap();
        assert_eq!(r[1], 7, "command {cmd}");
    }
    // An unknown address type, and SOCKS4.
    let mut s = TcpStream::connect(p).unwrap();
    s.write_all(&[5, 1, 0, 5, 1, 0, 9, 0, 0]).unwrap();
    let mut r = [0u8; 12];
    s.read_exact(&mut r).unwrap();
    assert_eq!(r[3], 8);
    let resp = exchange(p, &[4, 1, 0, 80, 127, 0, 0, 1, 0]);
    assert_eq!(resp.get(1), Some(&0x5b));
    let port = origin("after socks");
    let (_, out, _) = curl(&[
        "--socks5-hostname",
        &p.to_string(),
        &format!("http://allowed.test:{port}/"),
    ]);
    assert_eq!(out, "after socks");
}

#[test]
fn a_thousand_connections_from_one_client_are_bounded_and_service_resumes() {
    // Both ends of 1,000 connections live in this process: lift the soft
    // descriptor limit (1,024 for a plain user) to the hard one.
    unsafe {
        let mut lim: libc::rlimit = std::mem::zeroed();
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim);
        lim.rlim_cur = lim.rlim_max;
        libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
    }
    let dir = tempfile::tempdir().unwrap();
    let rt = Rt::new();
    let cfg = ProxyConfig {
        max_connections: 64,
        ..config()
    };
    let proxy = Proxy::new(foreground(dir.path(), None), cfg);
    let p = rt.serve(&proxy);
    let port = origin("one of many");
    // One tunnel opened before the flood keeps working through it.
    let mut tunnel = TcpStream::connect(p).unwrap();
    tunnel
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    tunnel
        .write_all(format!("CONNECT allowed.test:{port} HTTP/1.1\r\n\r\n").as_bytes())
        .unwrap();
    let mut established = [0u8; 39];
    tunnel.read_exact(&mut established).unwrap();
    assert!(
        text(&established).starts_with("HTTP/1.1 200"),
        "{}",
        text(&established)
    );

    let flood: Vec<TcpStream> = (0..1000).map(|_| TcpStream::connect(p).unwrap()).collect();
    let mut last = flood.last().unwrap().try_clone().unwrap();
    last.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut refused = String::new();
    let _ = last.read_to_string(&mut refused);
    assert!(refused.starts_with("HTTP/1.1 503 "), "{refused}");
    assert!(refused.contains("64 connections, its limit"), "{refused}");

    tunnel
        .write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut got = String::new();
    let _ = tunnel.read_to_string(&mut got);
    assert!(got.ends_with("one of many"), "{got}");

    drop(flood);
    drop(tunnel);
    wait_for(
        "every proxied connection to close",
        Duration::from_secs(60),
        || proxy.active() == 0,
    );
    let (_, out, _) = curl_via(p, &format!("http://allowed.test:{port}/"));
    assert_eq!(out, "one of many");
}

#[test]
fn the_proxy_serves_a_unix_socket() {
    let dir = tempfile::tempdir().unwrap();
    let rt = Rt::new();
    let proxy = Proxy::new(foreground(dir.path(), None), config());
    let path = dir.path().join("proxy.sock");
    let l = std::os::unix::net::UnixListener::bind(&path).unwrap();
    l.set_nonblocking(true).unwrap();
    rt.handle.spawn(async move {
        let l = tokio::net::UnixListener::from_std(l).unwrap();
        let _ = proxy.serve_unix(l).await;
    });
    let port = origin("over unix");
    let mut s = std::os::unix::net::UnixStream::connect(&path).unwrap();
    s.write_all(
        format!("GET http://allowed.test:{port}/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n")
            .as_bytes(),
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    assert!(
        out.starts_with("HTTP/1.1 200 ") && out.ends_with("over unix"),
        "{out}"
    );
}
