//! A minimal HTTP/1.1 server: just enough to read one request per
//! connection and answer it, streamed with chunked transfer encoding so
//! that a cut stream is distinguishable from a finished one (a body that
//! ends without its final zero-length chunk is an error to every client).
//! Every response says `Connection: close`, which keeps the server free of
//! keep-alive bookkeeping; clients simply open a new connection.

use std::time::Instant;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

use super::{RecordedRequest, Reply, Shared, Turn, Wire, anthropic, lock, openai, responses};

const MAX_HEAD: usize = 1 << 20;

pub(super) fn serve(
    listener: std::net::TcpListener,
    shared: Shared,
    stopped: oneshot::Receiver<()>,
) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => panic!("fake model cannot build its runtime: {err}"),
    };
    runtime.block_on(async move {
        let listener = match TcpListener::from_std(listener) {
            Ok(listener) => listener,
            Err(err) => panic!("fake model cannot register its listener: {err}"),
        };
        let mut stopped = stopped;
        loop {
            tokio::select! {
                _ = &mut stopped => return,
                accepted = listener.accept() => {
                    if let Ok((stream, _)) = accepted {
                        tokio::spawn(answer(stream, shared.clone()));
                    }
                }
            }
        }
    });
}

struct Request {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: String,
}

async fn read_request(stream: &mut TcpStream) -> Option<Request> {
    let mut buf = Vec::new();
    let head_end = loop {
        if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos;
        }
        if buf.len() > MAX_HEAD {
            return None;
        }
        let mut chunk = [0u8; 8192];
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next()?.split(' ');
    let method = request_line.next()?.to_owned();
    let path = request_line.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        let mut chunk = [0u8; 8192];
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some(Request {
        method,
        path,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

async fn answer(mut stream: TcpStream, shared: Shared) {
    let Some(request) = read_request(&mut stream).await else {
        return;
    };
    let wire = match (request.method.as_str(), request.path.as_str()) {
        ("POST", "/v1/chat/completions") => Some(Wire::OpenAi),
        ("POST", "/v1/responses") => Some(Wire::Responses),
        ("POST", "/v1/messages") => Some(Wire::Anthropic),
        _ => None,
    };
    let counting =
        (request.method.as_str(), request.path.as_str()) == ("POST", "/v1/messages/count_tokens");
    let parsed: serde_json::Value = serde_json::from_str(&request.body).unwrap_or_default();
    let (reply, billed) = {
        let mut state = lock(&shared);
        let number = state.requests.len();
        state.requests.push(RecordedRequest {
            method: request.method.clone(),
            path: request.path.clone(),
            headers: request.headers.clone(),
            body: request.body.clone(),
            at: Instant::now(),
        });
        if let Some((dir, prefix)) = &state.record {
            let record =
                serde_json::json!({"path": request.path, "body": request.body, "test": prefix});
            let _ = std::fs::write(
                dir.join(format!("{prefix}-{number:04}.json")),
                record.to_string(),
            );
        }
        if counting {
            (None, None)
        } else if let Some(wire) = wire {
            let reply = state.replies.pop_front();
            let billed = match (&reply, state.accounting.as_mut()) {
                (Some(Reply::Turn(_) | Reply::Cut { .. }), Some(accounts)) => {
                    Some(accounts.bill(wire, &parsed))
                }
                _ => None,
            };
            (reply, billed)
        } else {
            (None, None)
        }
    };
    if counting {
        let counted = serde_json::json!({"input_tokens": count(&parsed)}).to_string();
        let _ = write_whole(
            &mut stream,
            200,
            "application/json",
            counted.as_bytes(),
            None,
        )
        .await;
        return;
    }
    let (wire, reply) = match (wire, reply) {
        (Some(wire), Some(reply)) => (wire, reply),
        (None, _) => return refuse(&mut stream, 404, "no endpoint", &request).await,
        (Some(_), None) => {
            // 501, which no client retries: a test that ran out of replies
            // ends at once.
            return refuse(&mut stream, 501, "no scripted reply left for", &request).await;
        }
    };
    if let Some(refusal) = refused(wire, &parsed) {
        let _ = write_whole(
            &mut stream,
            400,
            "application/json",
            refusal.as_bytes(),
            None,
        )
        .await;
        return;
    }
    let reply = match (reply, billed) {
        (Reply::Turn(mut turn), Some(billed)) => {
            bill(&mut turn, billed);
            Reply::Turn(turn)
        }
        (Reply::Cut { mut turn, after }, Some(billed)) => {
            bill(&mut turn, billed);
            Reply::Cut { turn, after }
        }
        (reply, _) => reply,
    };
    let options = Options {
        model: parsed["model"].as_str().unwrap_or("fake").to_owned(),
        stream: parsed["stream"].as_bool().unwrap_or(false),
        include_usage: parsed["stream_options"]["include_usage"]
            .as_bool()
            .unwrap_or(false),
    };
    let _ = send(&mut stream, wire, &options, reply).await;
}

const STREAM_HEAD: &str = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\
    Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n";

pub(super) struct Options {
    pub(super) model: String,
    pub(super) stream: bool,
    pub(super) include_usage: bool,
}

async fn send(
    stream: &mut TcpStream,
    wire: Wire,
    options: &Options,
    reply: Reply,
) -> std::io::Result<()> {
    let (turn, after, raw) = match reply {
        Reply::Error { status, body } => {
            return write_whole(stream, status, "application/json", body.as_bytes(), None).await;
        }
        Reply::Refuse {
            status,
            headers,
            body,
        } => {
            let extra: String = headers
                .iter()
                .map(|(name, value)| format!("{name}: {value}\r\n"))
                .collect();
            let head = format!(
                "HTTP/1.1 {status} {}\r\nContent-Type: application/json\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n",
                reason(status),
                body.len()
            );
            stream.write_all(head.as_bytes()).await?;
            stream.write_all(body.as_bytes()).await?;
            stream.flush().await?;
            return stream.shutdown().await;
        }
        Reply::Reset => {
            // Not a byte of answer: the connection ends before the first.
            return stream.shutdown().await;
        }
        Reply::Turn(turn) => (turn, None, None),
        Reply::Cut { turn, after } => (turn, Some(after), None),
        Reply::Malformed { turn, after, raw } => (turn, Some(after), Some(raw)),
        Reply::Frames(frames) => {
            stream.write_all(STREAM_HEAD.as_bytes()).await?;
            for frame in frames {
                write_chunk(stream, frame.as_bytes()).await?;
            }
            return finish(stream).await;
        }
    };
    if !options.stream {
        return send_whole(stream, wire, options, &turn, after, raw).await;
    }
    let frames = match wire {
        Wire::OpenAi => openai::frames(&turn, options),
        Wire::Responses => responses::frames(&turn, options),
        Wire::Anthropic => anthropic::frames(&turn, options),
    };
    stream.write_all(STREAM_HEAD.as_bytes()).await?;
    stream.flush().await?;
    let limit = after.unwrap_or(frames.len()).min(frames.len());
    for frame in &frames[..limit] {
        pause(&turn).await;
        write_chunk(stream, frame.as_bytes()).await?;
    }
    match (after, raw) {
        (Some(_), None) => {
            // Cut: close without the terminating chunk.
            stream.shutdown().await
        }
        (_, Some(raw)) => {
            pause(&turn).await;
            let frame = match wire {
                Wire::OpenAi | Wire::Responses => format!("data: {raw}\n\n"),
                Wire::Anthropic => format!("event: content_block_delta\ndata: {raw}\n\n"),
            };
            write_chunk(stream, frame.as_bytes()).await?;
            finish(stream).await
        }
        (None, None) => finish(stream).await,
    }
}

async fn send_whole(
    stream: &mut TcpStream,
    wire: Wire,
    options: &Options,
    turn: &Turn,
    after: Option<usize>,
    raw: Option<String>,
) -> std::io::Result<()> {
    pause(turn).await;
    if let Some(raw) = raw {
        return write_whole(stream, 200, "application/json", raw.as_bytes(), None).await;
    }
    let body = match wire {
        Wire::OpenAi => openai::whole(turn, options),
        Wire::Responses => responses::whole(turn, options),
        Wire::Anthropic => anthropic::whole(turn, options),
    }
    .to_string();
    // A cut whole body: promise the full length, send half of it.
    let cut = after.map(|_| body.len() / 2);
    write_whole(stream, 200, "application/json", body.as_bytes(), cut).await
}

/// The tokens `count_tokens` reports: every piece of the prompt, counted
/// as the accounting counts it.
fn count(body: &serde_json::Value) -> u64 {
    let mut accounts = super::accounting::Accounts::default();
    accounts.bill(Wire::Anthropic, body).prompt()
}

/// A turn's input usage as the accounting billed it.
fn bill(turn: &mut Turn, billed: super::Billing) {
    turn.input_tokens = billed.prompt();
    turn.cache_read = billed.cache_read;
    turn.cache_write = billed.cache_write;
}

/// The error a real API gives a request it refuses for its shape, in the
/// cases the fake checks: Anthropic with thinking on refuses an assistant
/// message with tool use that does not start with its thinking.
fn refused(wire: Wire, body: &serde_json::Value) -> Option<String> {
    if wire != Wire::Anthropic || body["thinking"]["type"] != "enabled" {
        return None;
    }
    let messages = body["messages"].as_array()?;
    let last_assistant = messages.iter().rev().find(|m| m["role"] == "assistant")?;
    let blocks = last_assistant["content"].as_array()?;
    let uses_tools = blocks.iter().any(|b| b["type"] == "tool_use");
    let first = blocks.first()?["type"].as_str()?;
    if uses_tools && first != "thinking" && first != "redacted_thinking" {
        let message = "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `text`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks).";
        return Some(
            serde_json::json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}})
                .to_string(),
        );
    }
    None
}

async fn pause(turn: &Turn) {
    if !turn.delay.is_zero() {
        tokio::time::sleep(turn.delay).await;
    }
}

async fn write_chunk(stream: &mut TcpStream, data: &[u8]) -> std::io::Result<()> {
    let mut out = format!("{:x}\r\n", data.len()).into_bytes();
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
    stream.write_all(&out).await?;
    stream.flush().await
}

async fn finish(stream: &mut TcpStream) -> std::io::Result<()> {
    stream.write_all(b"0\r\n\r\n").await?;
    stream.flush().await?;
    stream.shutdown().await
}

/// Answers `status` with a plain-text `reason`, naming the request.
async fn refuse(stream: &mut TcpStream, status: u16, reason: &str, request: &Request) {
    let body = format!("fake model: {reason} {} {}", request.method, request.path);
    let _ = write_whole(stream, status, "text/plain", body.as_bytes(), None).await;
}

async fn write_whole(
    stream: &mut TcpStream,
    status: u16,
    content_type: &str,
    body: &[u8],
    cut_at: Option<usize>,
) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        reason(status),
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    let end = cut_at.unwrap_or(body.len()).min(body.len());
    stream.write_all(&body[..end]).await?;
    stream.flush().await?;
    stream.shutdown().await
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        501 => "Not Implemented",
        503 => "Service Unavailable",
        529 => "Overloaded",
        _ => "Status",
    }
}
