//! The page and its assets: embedded, served with their types, and the
//! status route that tells the page whether the daemon is there.

use pretty_assertions::assert_eq;

use super::Harness;

#[tokio::test(flavor = "multi_thread")]
async fn the_page_and_its_assets_are_served_from_the_binary() {
    let h = Harness::boot().await;
    let page = h.get("/").await;
    assert_eq!(page.status.as_u16(), 200);
    assert_eq!(page.content_type, "text/html; charset=utf-8");
    assert!(
        page.body
            .contains(r#"<script src="app.js" defer></script>"#)
    );
    assert!(
        page.body.contains(r#"name="viewport""#),
        "readable on a phone"
    );
    let script = h.get("/app.js").await;
    assert_eq!(script.status.as_u16(), 200);
    assert_eq!(script.content_type, "text/javascript; charset=utf-8");
    assert!(script.body.contains("new EventSource("));
    assert!(
        page.body
            .contains(r#"<script src="render.js" defer></script>"#)
    );
    let render = h.get("/render.js").await;
    assert_eq!(render.status.as_u16(), 200);
    assert_eq!(render.content_type, "text/javascript; charset=utf-8");
    assert!(render.body.contains("function markdown("));
    let style = h.get("/style.css").await;
    assert_eq!(style.content_type, "text/css; charset=utf-8");
    assert_eq!(
        page.body.len() + script.body.len() + render.body.len() + style.body.len(),
        chock_serve::page::FIRST_LOAD_BYTES
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_script_never_writes_log_text_as_markup() {
    let h = Harness::boot().await;
    for asset in ["/app.js", "/render.js"] {
        let script = h.get(asset).await.body;
        for sink in [
            "innerHTML",
            "outerHTML",
            "insertAdjacentHTML",
            "document.write",
            "DOMParser",
            "createContextualFragment",
            "eval(",
            "new Function",
        ] {
            assert!(!script.contains(sink), "{asset} uses {sink}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn status_names_the_daemon_and_the_protocol() {
    let h = Harness::boot().await;
    let reply = h.get("/api/status").await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.body);
    assert_eq!(
        reply.json(),
        serde_json::json!({"daemon": h.daemon.to_string(), "protocol": 1})
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_route_is_a_json_404() {
    let h = Harness::boot().await;
    h.get("/nope")
        .await
        .assert_error(404, "not_found", "no route /nope");
    h.request("DELETE", "/api/sessions", &[], None)
        .await
        .assert_error(405, "bad_request", "/api/sessions does not take DELETE");
    // A cross-site script's preflight is never granted.
    let preflight = super::send(
        &h.serve_socket(),
        "OPTIONS",
        "/api/sessions",
        &[
            ("origin", "http://elsewhere.example"),
            ("access-control-request-method", "POST"),
        ],
        None,
    )
    .await;
    assert_eq!(preflight.status().as_u16(), 405);
    assert!(
        !preflight
            .headers()
            .contains_key("access-control-allow-origin")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn serve_listens_on_tcp_when_a_host_is_named() {
    let mut h = Harness::boot().await;
    let address = h.start_serve(Some("127.0.0.1")).await;
    let chock_control::Address::Tcp { port, .. } = address else {
        panic!("{address}")
    };
    assert_ne!(port, 0);
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    stream
        .write_all(b"GET /api/status HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).await.unwrap();
    assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_socket_is_private_to_its_user() {
    use std::os::unix::fs::PermissionsExt;
    let h = Harness::boot().await;
    let mode = std::fs::metadata(h.serve_socket())
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}
