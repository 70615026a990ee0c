//! `chock ssh-connect`: the `ProxyCommand` of an approved push to an ssh
//! remote. ssh does not read proxy variables, and the sandbox's only way
//! out is the router on its own loopback, so ssh is given this as the
//! program that makes its connection: it asks the router for a tunnel
//! (`CONNECT host:port`, as an https client would), and then carries bytes
//! between ssh (its stdin and stdout) and the tunnel. The router decides
//! the host at `net.connect.<host>` like any other connection; a refusal
//! comes back as the router's own sentence, printed on stderr, which ssh
//! and git pass on to the agent.
//!
//! The host and port are pinned when the command is written (`--only`),
//! on the host, from the remote the push names: ssh's `%h %p` must match
//! them, so the call's ssh reaches exactly that remote.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::time::Duration;

use super::ssh::authority;

/// How long the router may take to answer the CONNECT (it may be asking
/// the person).
const ANSWER_TIMEOUT: Duration = Duration::from_secs(600);
/// Longest answer head (and refusal body) read from the router.
const MAX_HEAD: u64 = 16 * 1024;

/// Why no tunnel was made.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error(
        "ssh asked for {asked}, but this push may reach only {only}; the remote's address is fixed when the push is approved"
    )]
    NotTheRemote { asked: String, only: String },
    #[error(
        "cannot reach the session's network router at {router}: {error}; ssh from a push works only inside a session with the network router"
    )]
    Router {
        router: SocketAddr,
        error: std::io::Error,
    },
    #[error("the router refused {target}: {text}")]
    Refused { target: String, text: String },
    #[error("talking to the router failed: {0}")]
    Io(std::io::Error),
}

/// A failed exchange with the router; its message says the cause, so the
/// cause is not its `source()` as well.
impl From<std::io::Error> for ConnectError {
    fn from(error: std::io::Error) -> Self {
        ConnectError::Io(error)
    }
}

/// Makes the tunnel to `host:port` through `router` (after checking it is
/// `only`) and carries `input` into it and its bytes to `output` until
/// both directions end.
pub fn run(
    router: SocketAddr,
    only: &str,
    host: &str,
    port: u16,
    input: impl Read + Send + 'static,
    output: impl Write,
) -> Result<(), ConnectError> {
    let asked = authority(&host.to_ascii_lowercase(), port);
    if !asked.eq_ignore_ascii_case(only) {
        return Err(ConnectError::NotTheRemote {
            asked,
            only: only.to_owned(),
        });
    }
    let stream =
        TcpStream::connect(router).map_err(|error| ConnectError::Router { router, error })?;
    let mut reader = BufReader::new(stream.try_clone()?);
    (&stream).write_all(format!("CONNECT {asked} HTTP/1.1\r\nHost: {asked}\r\n\r\n").as_bytes())?;
    stream.set_read_timeout(Some(ANSWER_TIMEOUT))?;
    let status = read_head(&mut reader)?;
    stream.set_read_timeout(None)?;
    if status.code != 200 {
        let mut body = String::new();
        let _ = (&mut reader)
            .take(status.length.unwrap_or(MAX_HEAD).min(MAX_HEAD))
            .read_to_string(&mut body);
        let text = body.trim().trim_start_matches("chock: ").to_owned();
        let text = if text.is_empty() { status.line } else { text };
        return Err(ConnectError::Refused {
            target: asked,
            text,
        });
    }
    carry(stream, reader, input, output)
}

struct Status {
    line: String,
    code: u16,
    length: Option<u64>,
}

/// The status line and `Content-Length` of the router's answer.
fn read_head(reader: &mut impl BufRead) -> std::io::Result<Status> {
    let mut limited = reader.take(MAX_HEAD);
    let mut line = String::new();
    limited.read_line(&mut line)?;
    let line = line.trim_end().to_owned();
    let code = line
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("the router answered {line:?}, not an HTTP status"),
            )
        })?;
    let mut length = None;
    loop {
        let mut header = String::new();
        if limited.read_line(&mut header)? == 0 || header.trim_end().is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().ok();
        }
    }
    Ok(Status { line, code, length })
}

/// Carries bytes both ways: `input` to the tunnel on a thread of its own
/// (ending the tunnel's write side at its end), the tunnel (what `reader`
/// buffered first) to `output` here.
fn carry(
    stream: TcpStream,
    mut reader: BufReader<TcpStream>,
    mut input: impl Read + Send + 'static,
    mut output: impl Write,
) -> Result<(), ConnectError> {
    let mut up = stream.try_clone()?;
    let sender = std::thread::spawn(move || {
        let _ = std::io::copy(&mut input, &mut up);
        let _ = up.shutdown(Shutdown::Write);
    });
    let mut buf = [0u8; 32 * 1024];
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err.into()),
        };
        output.write_all(&buf[..n])?;
        output.flush()?;
    }
    // The server is done: ssh sees the end on its side and exits, closing
    // our stdin; the sender is not waited for, it would block on stdin.
    drop(sender);
    let _ = stream.shutdown(Shutdown::Both);
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::net::TcpListener;

    use super::*;

    /// A one-connection stand-in for the router: reads the CONNECT head,
    /// writes `answer`, then echoes what follows.
    fn router(answer: &'static str) -> (SocketAddr, std::thread::JoinHandle<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let handle = std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut head = String::new();
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                head.push_str(&line);
                if line == "\r\n" || line.is_empty() {
                    break;
                }
            }
            (&stream).write_all(answer.as_bytes()).unwrap();
            if answer.starts_with("HTTP/1.1 200") {
                let mut rest = Vec::new();
                reader.read_to_end(&mut rest).unwrap();
                (&stream).write_all(&rest).unwrap();
            }
            head
        });
        (addr, handle)
    }

    #[test]
    fn a_tunnel_carries_bytes_both_ways() {
        let (addr, router) = router("HTTP/1.1 200 Connection Established\r\n\r\n");
        let mut out = Vec::new();
        run(
            addr,
            "allowed.test:2222",
            "Allowed.Test",
            2222,
            std::io::Cursor::new(b"SSH-2.0-test\r\n".to_vec()),
            &mut out,
        )
        .unwrap();
        assert_eq!(out, b"SSH-2.0-test\r\n");
        assert!(
            router
                .join()
                .unwrap()
                .starts_with("CONNECT allowed.test:2222 HTTP/1.1\r\n")
        );
    }

    #[test]
    fn a_refusal_carries_the_routers_sentence() {
        let body = "chock: net.connect.test.denied refused: denied by rule 2\n";
        let answer: &'static str = Box::leak(
            format!(
                "HTTP/1.1 403 Forbidden\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
            .into_boxed_str(),
        );
        let (addr, _router) = router(answer);
        let err = run(
            addr,
            "denied.test:22",
            "denied.test",
            22,
            std::io::empty(),
            Vec::new(),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "the router refused denied.test:22: net.connect.test.denied refused: denied by rule 2"
        );
    }

    #[test]
    fn another_host_or_port_than_the_remotes_is_not_dialled() {
        let addr: SocketAddr = "127.0.0.1:9".parse().unwrap();
        for (host, port) in [("elsewhere.test", 2222), ("allowed.test", 22)] {
            let err = run(
                addr,
                "allowed.test:2222",
                host,
                port,
                std::io::empty(),
                Vec::new(),
            )
            .unwrap_err();
            assert!(matches!(err, ConnectError::NotTheRemote { .. }), "{err}");
        }
    }
}
