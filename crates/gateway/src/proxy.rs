//! The moving parts: the server process, one task per direction, and one
//! writer that owns the client's stdout so forwarded messages and the
//! gateway's own answers never interleave within a line.

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout, Command};
use tokio::sync::mpsc;

use crate::filter::{self, ERROR_SERVER_GONE, FromClient, Session};
use crate::{Config, GatewayError};

/// How long the server may take to exit once the client has closed its side.
const EXIT_GRACE: Duration = Duration::from_secs(10);

type Out = mpsc::UnboundedSender<Vec<u8>>;

pub(crate) async fn serve(config: Config) -> Result<u8, GatewayError> {
    let (program, args) = config
        .command
        .split_first()
        .ok_or(GatewayError::NoCommand)?;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|source| GatewayError::Spawn {
            command: program.to_string_lossy().into_owned(),
            error: source,
        })?;
    let (Some(server_in), Some(server_out)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(GatewayError::Server(
            "the MCP server's stdin or stdout could not be opened".into(),
        ));
    };
    let config = Arc::new(config);
    let session = Arc::new(Mutex::new(Session::default()));
    let (out_tx, mut out_rx) = mpsc::unbounded_channel::<Vec<u8>>();
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(bytes) = out_rx.recv().await {
            if stdout.write_all(&bytes).await.is_err() || stdout.flush().await.is_err() {
                break;
            }
        }
    });
    let mut from_server = tokio::spawn(server_to_client(
        server_out,
        config.clone(),
        session.clone(),
        out_tx.clone(),
    ));
    let mut from_client = tokio::spawn(client_to_server(
        server_in,
        config.clone(),
        session.clone(),
        out_tx.clone(),
    ));

    let outcome = tokio::select! {
        ended = &mut from_server => {
            // The server's output ended first: it died or misbehaved while the
            // client was still talking.
            from_client.abort();
            let status = tokio::time::timeout(EXIT_GRACE, child.wait()).await;
            let problem = match ended {
                Ok(Err(garbage)) => garbage,
                _ => match status {
                    Ok(Ok(status)) => format!("the MCP server exited ({status}) while the client was still connected"),
                    _ => "the MCP server closed its output while the client was still connected".to_owned(),
                },
            };
            Err(problem)
        }
        _ = &mut from_client => {
            // The client is done; the server's stdin is closed. Let it finish.
            match tokio::time::timeout(EXIT_GRACE, &mut from_server).await {
                Ok(Ok(Err(garbage))) => Err(garbage),
                Ok(_) => match tokio::time::timeout(EXIT_GRACE, child.wait()).await {
                    Ok(Ok(status)) if status.success() => Ok(()),
                    Ok(Ok(status)) => Err(format!("the MCP server exited ({status})")),
                    Ok(Err(err)) => Err(format!("cannot wait for the MCP server: {err}")),
                    Err(_) => Err(format!("the MCP server did not exit within {}s after its input closed; killed it", EXIT_GRACE.as_secs())),
                },
                Err(_) => Err(format!("the MCP server did not exit within {}s after its input closed; killed it", EXIT_GRACE.as_secs())),
            }
        }
    };
    let code = match outcome {
        Ok(()) => 0,
        Err(problem) => {
            let _ = child.start_kill();
            answer_pending(&session, &out_tx, &problem);
            tracing_free_report(&problem);
            1
        }
    };
    drop(out_tx);
    // Both direction tasks may already be done (a finished handle must not be
    // awaited again); aborting drops their senders so the writer drains and ends.
    from_server.abort();
    from_client.abort();
    let _ = writer.await;
    Ok(code)
}

/// The gateway reports on its own stderr, which the client shows as the
/// server's stderr. Library crates do not print, so this writes bytes.
fn tracing_free_report(problem: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "chock gateway: {problem}");
}

/// Every request still in flight gets an error instead of silence.
fn answer_pending(session: &Mutex<Session>, out: &Out, problem: &str) {
    let pending = match session.lock() {
        Ok(mut session) => std::mem::take(&mut session.pending),
        Err(poisoned) => std::mem::take(&mut poisoned.into_inner().pending),
    };
    for (_, (id, method)) in pending {
        let response =
            filter::error_response(&id, ERROR_SERVER_GONE, problem, json!({"method": method}));
        send(out, &response);
    }
}

fn send(out: &Out, value: &Value) {
    let mut bytes = serde_json::to_vec(value).unwrap_or_default();
    bytes.push(b'\n');
    let _ = out.send(bytes);
}

async fn client_to_server(
    mut server_in: ChildStdin,
    config: Arc<Config>,
    session: Arc<Mutex<Session>>,
    out: Out,
) {
    let mut lines = BufReader::new(tokio::io::stdin()).split(b'\n');
    while let Ok(Some(line)) = lines.next_segment().await {
        let trimmed = line.trim_ascii();
        if trimmed.is_empty() {
            continue;
        }
        let forward = match serde_json::from_slice::<Value>(trimmed) {
            Err(err) => {
                // Never forward what could not be read: it might be a call.
                let response = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": format!("parse error: {err}")}});
                send(&out, &response);
                None
            }
            Ok(Value::Array(batch)) => {
                let mut kept = Vec::new();
                for message in batch {
                    match decide(&config, &session, &message) {
                        FromClient::Forward => kept.push(message),
                        FromClient::Refuse(answer) => answer.iter().for_each(|a| send(&out, a)),
                    }
                }
                (!kept.is_empty())
                    .then(|| serde_json::to_vec(&Value::Array(kept)).unwrap_or_default())
            }
            Ok(message) => match decide(&config, &session, &message) {
                FromClient::Forward => Some(trimmed.to_vec()),
                FromClient::Refuse(answer) => {
                    answer.iter().for_each(|a| send(&out, a));
                    None
                }
            },
        };
        if let Some(mut bytes) = forward {
            bytes.push(b'\n');
            if server_in.write_all(&bytes).await.is_err() || server_in.flush().await.is_err() {
                break;
            }
        }
    }
    // Dropping stdin closes the server's input: its signal to exit.
    drop(server_in);
}

fn decide(config: &Config, session: &Mutex<Session>, message: &Value) -> FromClient {
    match session.lock() {
        Ok(mut session) => filter::from_client(config, &mut session, message),
        Err(poisoned) => filter::from_client(config, &mut poisoned.into_inner(), message),
    }
}

/// `Err` carries the report when the server wrote something that is not JSON-RPC.
async fn server_to_client(
    server_out: ChildStdout,
    config: Arc<Config>,
    session: Arc<Mutex<Session>>,
    out: Out,
) -> Result<(), String> {
    let mut lines = BufReader::new(server_out).split(b'\n');
    loop {
        let line = match lines.next_segment().await {
            Ok(Some(line)) => line,
            Ok(None) => return Ok(()),
            Err(err) => return Err(format!("cannot read the MCP server's output: {err}")),
        };
        let trimmed = line.trim_ascii();
        if trimmed.is_empty() {
            continue;
        }
        let garbage = || {
            let shown: String = String::from_utf8_lossy(trimmed).chars().take(200).collect();
            format!("the MCP server wrote a line that is not JSON-RPC: {shown:?}")
        };
        let value: Value = serde_json::from_slice(trimmed).map_err(|_| garbage())?;
        let replaced = match &value {
            Value::Object(_) => with_session(&session, |s| filter::from_server(&config, s, &value)),
            Value::Array(batch) => {
                let mut changed = false;
                let items: Vec<Value> = batch
                    .iter()
                    .map(
                        |m| match with_session(&session, |s| filter::from_server(&config, s, m)) {
                            Some(new) => {
                                changed = true;
                                new
                            }
                            None => m.clone(),
                        },
                    )
                    .collect();
                changed.then_some(Value::Array(items))
            }
            _ => return Err(garbage()),
        };
        let mut bytes = match replaced {
            Some(new) => serde_json::to_vec(&new).unwrap_or_default(),
            None => trimmed.to_vec(),
        };
        bytes.push(b'\n');
        if out.send(bytes).is_err() {
            return Ok(());
        }
    }
}

fn with_session<T>(session: &Mutex<Session>, f: impl FnOnce(&mut Session) -> T) -> T {
    match session.lock() {
        Ok(mut session) => f(&mut session),
        Err(poisoned) => f(&mut poisoned.into_inner()),
    }
}
