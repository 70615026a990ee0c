//! Clients that hold serve up (silent, slowloris, a body that never comes,
//! a declared body far past its bound, more connections than the cap) are
//! cut or refused by a bound, and everyone else is still served; and the
//! Host and Origin checks and the headers every response carries.

use std::time::{Duration, Instant};

use chock_control::Address;
use pretty_assertions::assert_eq;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::{Harness, HasTestDirs, S1};

/// Serve on TCP (127.0.0.1, a free port) with its config adjusted.
async fn tcp_serve(h: &mut Harness, adjust: impl FnOnce(&mut chock_serve::Config)) -> String {
    match h.start_serve_with(Some("127.0.0.1"), adjust).await {
        Address::Tcp { host, port } => format!("{host}:{port}"),
        Address::Unix(_) => unreachable!(),
    }
}

/// Everything serve sends on a connection until it closes it, or what came
/// within `patience` (then the second value is false: still open).
async fn until_closed(stream: &mut TcpStream, patience: Duration) -> (String, bool) {
    let mut bytes = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + patience;
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
            Ok(Ok(0) | Err(_)) => return (String::from_utf8_lossy(&bytes).into_owned(), true),
            Ok(Ok(n)) => bytes.extend_from_slice(&buf[..n]),
            Err(_) => return (String::from_utf8_lossy(&bytes).into_owned(), false),
        }
    }
}

/// One raw request on a fresh connection; the whole answer.
async fn raw(addr: &str, request: &str) -> String {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let (text, closed) = until_closed(&mut stream, Duration::from_secs(10)).await;
    assert!(closed || !text.is_empty(), "serve answered: {text}");
    text
}

fn get(addr: &str, path: &str, host: &str) -> String {
    let _ = addr;
    format!("GET {path} HTTP/1.1\r\nhost: {host}\r\nconnection: close\r\n\r\n")
}

#[tokio::test(flavor = "multi_thread")]
async fn silent_and_slowloris_clients_are_cut_at_the_header_timeout() {
    let mut h = Harness::boot().await;
    let addr = tcp_serve(&mut h, |c| c.header_timeout = Duration::from_millis(600)).await;
    let started = Instant::now();
    let mut silent = TcpStream::connect(&addr).await.unwrap();
    let mut slow = TcpStream::connect(&addr).await.unwrap();
    let drip = async {
        for byte in b"GET /api/status HTTP/1.1\r\nhost: 127.0.0.1\r\nx-slow: " {
            if slow.write_all(&[*byte]).await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        until_closed(&mut slow, Duration::from_secs(5)).await
    };
    let quiet = until_closed(&mut silent, Duration::from_secs(5));
    // Meanwhile another client is served at once.
    let served = async {
        let t = Instant::now();
        let text = raw(&addr, &get(&addr, "/api/status", "127.0.0.1")).await;
        (text, t.elapsed())
    };
    let ((_, slow_closed), (_, silent_closed), (text, took)) = tokio::join!(drip, quiet, served);
    assert!(silent_closed, "a silent client is cut");
    assert!(slow_closed, "a slowloris client is cut");
    assert!(started.elapsed() < Duration::from_secs(4));
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert!(took < Duration::from_secs(2), "served within {took:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_declared_body_past_its_bound_is_refused_at_once_and_the_connection_closed() {
    let mut h = Harness::boot().await;
    let addr = tcp_serve(&mut h, |_| {}).await;
    for (method, path) in [("POST", "/api/sessions"), ("GET", "/api/status")] {
        let mut stream = TcpStream::connect(&addr).await.unwrap();
        let head = format!(
            "{method} {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 999999999\r\n\r\n{{"
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        let (text, closed) = until_closed(&mut stream, Duration::from_secs(5)).await;
        assert!(text.starts_with("HTTP/1.1 413"), "{text}");
        assert!(text.contains("the request's body is too large"), "{text}");
        assert!(
            closed,
            "{method} {path}: the connection is closed, not held open"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_body_that_never_arrives_is_cut_at_the_body_timeout() {
    let mut h = Harness::boot().await;
    let addr = tcp_serve(&mut h, |c| c.body_timeout = Duration::from_millis(500)).await;
    let mut stream = TcpStream::connect(&addr).await.unwrap();
    let head = "POST /api/sessions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{\"proj";
    stream.write_all(head.as_bytes()).await.unwrap();
    let (text, closed) = until_closed(&mut stream, Duration::from_secs(5)).await;
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(closed);
}

#[tokio::test(flavor = "multi_thread")]
async fn connections_past_the_cap_are_refused_with_503_and_the_rest_served() {
    let mut h = Harness::boot().await;
    let addr = tcp_serve(&mut h, |c| c.max_connections = 3).await;
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(TcpStream::connect(&addr).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let text = raw(&addr, &get(&addr, "/api/status", "127.0.0.1")).await;
    assert!(text.starts_with("HTTP/1.1 503"), "{text}");
    assert!(text.contains("3 connections open, its limit"), "{text}");
    held.pop();
    let served = super::eventually("a freed place serves again", || {
        let addr = addr.clone();
        async move {
            let text = raw(&addr, &get(&addr, "/api/status", "127.0.0.1")).await;
            text.starts_with("HTTP/1.1 200").then_some(())
        }
    });
    served.await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_host_serve_was_not_started_for_is_refused() {
    let mut h = Harness::boot().await;
    let addr = tcp_serve(&mut h, |c| c.allow_hosts = vec!["chock.example".to_owned()]).await;
    let port = addr.rsplit(':').next().unwrap();
    for host in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        "chock.example".to_owned(),
    ] {
        let text = raw(&addr, &get(&addr, "/api/status", &host)).await;
        assert!(text.starts_with("HTTP/1.1 200"), "{host}: {text}");
    }
    for host in [format!("rebound.example:{port}"), String::new()] {
        let text = raw(&addr, &get(&addr, "/api/status", &host)).await;
        assert!(text.starts_with("HTTP/1.1 403"), "{host}: {text}");
        assert!(text.contains("refused_host"), "{text}");
        assert!(
            text.contains("is not a name this chock serve was started for (127.0.0.1, localhost, chock.example)"),
            "{text}"
        );
    }
    // The page itself too: a rebound page cannot even load serve's script.
    let text = raw(&addr, &get(&addr, "/", "rebound.example")).await;
    assert!(text.starts_with("HTTP/1.1 403"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_request_that_acts_from_another_origin_is_refused() {
    let mut h = Harness::boot().await;
    let addr = tcp_serve(&mut h, |_| {}).await;
    let body =
        serde_json::json!({"project": h.project_text(), "message": "behave:quiet"}).to_string();
    let post = |origin: &str| {
        format!(
            "POST /api/sessions HTTP/1.1\r\nhost: {addr}\r\norigin: {origin}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
    };
    for origin in ["http://evil.example", "null", "http://127.0.0.1:1"] {
        let text = raw(&addr, &post(origin)).await;
        assert!(text.starts_with("HTTP/1.1 403"), "{origin}: {text}");
        assert!(text.contains("refused_origin"), "{text}");
    }
    let text = raw(&addr, &post(&format!("http://{addr}"))).await;
    assert!(
        text.starts_with("HTTP/1.1 201"),
        "its own page may act: {text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn every_control_route_refuses_another_origin_before_the_daemon_hears_of_it() {
    let mut h = Harness::boot().await;
    let addr = tcp_serve(&mut h, |_| {}).await;
    let mut log = h.live_log(S1);
    log.say("hello");
    let project = h.project_text();
    let routes = [
        (
            format!("/api/sessions/{S1}/continue"),
            serde_json::json!({"project": project, "message": "go on"}),
        ),
        (
            format!("/api/sessions/{S1}/interrupt"),
            serde_json::json!({"project": project}),
        ),
        (
            format!("/api/sessions/{S1}/detach"),
            serde_json::json!({"project": project}),
        ),
        (
            format!("/api/sessions/{S1}/apply"),
            serde_json::json!({"project": project}),
        ),
        (
            format!("/api/sessions/{S1}/discard"),
            serde_json::json!({"project": project}),
        ),
        (
            "/api/stop".to_owned(),
            serde_json::json!({"project": project, "reason": "x"}),
        ),
    ];
    for (path, body) in &routes {
        let body = body.to_string();
        let request = format!(
            "POST {path} HTTP/1.1\r\nhost: {addr}\r\norigin: http://evil.example\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        let text = raw(&addr, &request).await;
        assert!(text.starts_with("HTTP/1.1 403"), "{path}: {text}");
        assert!(text.contains("refused_origin"), "{path}: {text}");
    }
    // Nothing reached the session or the repository.
    assert!(!h.project().join(".chock/stop.json").exists());
    assert_eq!(log.say("still here"), 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn every_response_says_nosniff_and_no_referrer_and_the_api_no_store() {
    let mut h = Harness::boot().await;
    let addr = tcp_serve(&mut h, |_| {}).await;
    let head = |text: &str| text.split("\r\n\r\n").next().unwrap().to_ascii_lowercase();
    let page = head(&raw(&addr, &get(&addr, "/", "127.0.0.1")).await);
    assert!(page.contains("x-content-type-options: nosniff"), "{page}");
    assert!(page.contains("referrer-policy: no-referrer"), "{page}");
    assert!(!page.contains("cache-control: no-store"), "{page}");
    for path in ["/api/status", "/api/sessions/x/nothing"] {
        let api = head(&raw(&addr, &get(&addr, path, "127.0.0.1")).await);
        assert!(api.contains("x-content-type-options: nosniff"), "{api}");
        assert!(api.contains("referrer-policy: no-referrer"), "{api}");
        assert!(api.contains("cache-control: no-store"), "{api}");
    }
    let refused = head(&raw(&addr, &get(&addr, "/api/status", "rebound.example")).await);
    assert!(refused.contains("cache-control: no-store"), "{refused}");
    assert_eq!(refused.lines().next(), Some("http/1.1 403 forbidden"));
}
