//! The client against a server over in-memory pipes.

use super::*;
use tokio::io::{AsyncWriteExt, DuplexStream};

/// The server's side of a pair of in-memory pipes.
struct Other {
    from: BufReader<DuplexStream>,
    to: DuplexStream,
}

impl Other {
    async fn read(&mut self) -> Value {
        let body = frame::read(&mut self.from).await.unwrap().unwrap();
        serde_json::from_slice(&body).unwrap()
    }

    async fn send(&mut self, message: Value) {
        frame::write(&mut self.to, &serde_json::to_vec(&message).unwrap())
            .await
            .unwrap();
    }
}

fn bounds() -> Bounds {
    Bounds {
        start: Duration::from_secs(5),
        wait: Duration::from_secs(5),
    }
}

/// A client connected to a server that answers `initialize` with
/// `capabilities`.
async fn connected(capabilities: Value) -> (Server, Other) {
    let (client_to, server_from) = tokio::io::duplex(1 << 16);
    let (server_to, client_from) = tokio::io::duplex(1 << 16);
    let mut other = Other {
        from: BufReader::new(server_from),
        to: server_to,
    };
    let server = tokio::spawn(async move {
        let init = other.read().await;
        assert_eq!(init["method"], "initialize");
        assert_eq!(init["params"]["rootUri"], "file:///workspace");
        other
            .send(json!({"jsonrpc": "2.0", "id": init["id"], "result": {"capabilities": capabilities}}))
            .await;
        assert_eq!(other.read().await["method"], "initialized");
        other
    });
    let client = Server::connect(client_from, client_to, "/workspace", None, bounds())
        .await
        .unwrap();
    (client, server.await.unwrap())
}

#[tokio::test]
async fn a_change_waits_for_the_publish_of_its_version_and_the_server_s_requests_are_answered() {
    let (client, mut other) =
        connected(json!({"textDocumentSync": {"change": 1, "save": true}})).await;
    let uri = file_uri("/workspace/a.py").unwrap();
    let server = tokio::spawn(async move {
        let open = other.read().await;
        assert_eq!(open["method"], "textDocument/didOpen");
        assert_eq!(open["params"]["textDocument"]["text"], "x = 1\n");
        assert_eq!(other.read().await["method"], "textDocument/didSave");
        // A request of its own, which it needs answered to carry on.
        other
            .send(json!({"jsonrpc": "2.0", "id": 7, "method": "workspace/configuration", "params": {"items": [{}, {}]}}))
            .await;
        let answer = other.read().await;
        assert_eq!(answer["id"], 7);
        assert_eq!(answer["result"], json!([null, null]));
        // A stale publish for an older version is not the answer.
        other
            .send(json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": {"uri": "file:///workspace/a.py", "version": 0, "diagnostics": []}}))
            .await;
        other
            .send(json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": {"uri": "file:///workspace/a.py", "version": 1, "diagnostics": [
                {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}, "message": "bad", "severity": 1}
            ]}}))
            .await;
        other
    });
    let said = client
        .changed(&uri, "python", "x = 1\n")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(said.len(), 1);
    assert_eq!(said[0].message, "bad");
    assert!(client.is_open(&uri));
    let mut other = server.await.unwrap();
    // Dropping its end is the server ending: said as a failure.
    other.to.shutdown().await.unwrap();
    drop(other);
    let err = client.changed(&uri, "python", "x = 2\n").await.unwrap_err();
    assert!(err.to_string().contains("ended its output"), "{err}");
    assert!(client.failed().is_some());
}

#[test]
fn a_path_becomes_a_file_uri_with_its_odd_bytes_encoded() {
    assert_eq!(
        file_uri("/workspace/a.py").unwrap().as_str(),
        "file:///workspace/a.py"
    );
    assert_eq!(
        file_uri("/workspace/a b/ü.py").unwrap().as_str(),
        "file:///workspace/a%20b/%C3%BC.py"
    );
}
