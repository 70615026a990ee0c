//! A smart-HTTP git server on 127.0.0.1 that wants HTTP basic auth, for
//! tests of pushes: every request without the right `Authorization` is
//! answered 401 with `WWW-Authenticate: Basic`, every request with it is
//! handed to the real `git http-backend` as a CGI program (receive-pack
//! enabled through `REMOTE_USER`). It serves the bare repositories under
//! one directory and records each request (method, path, whether it was
//! authorized), so a test can tell that a refused push never arrived.
//!
//! Like [`crate::Site`] it runs on OS threads with blocking sockets and
//! closes every connection after one answer; requests may come in origin
//! form or, through a proxy, in absolute form.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

/// One request the server saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitRequest {
    pub method: String,
    /// The path and query, e.g. `/repo.git/info/refs?service=git-receive-pack`.
    pub target: String,
    /// Whether it carried the expected credential.
    pub authorized: bool,
}

/// A running server; it stops accepting when the test process ends.
#[derive(Debug)]
pub struct GitServer {
    addr: SocketAddr,
    root: PathBuf,
    requests: Arc<Mutex<Vec<GitRequest>>>,
}

impl GitServer {
    /// Serves the repositories under `root`, admitting `user`:`password`.
    pub fn start(root: &Path, user: &str, password: &str) -> Self {
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&requests);
        let expected = format!("Basic {}", base64(format!("{user}:{password}").as_bytes()));
        let served = root.to_owned();
        let addr = crate::serve_on_loopback("test git server", move |stream| {
            answer(stream, &served, &expected, &seen);
        });
        Self {
            addr,
            root: root.to_owned(),
            requests,
        }
    }

    /// Makes an empty bare repository `name` (e.g. `repo.git`) under the root.
    pub fn create_repo(&self, name: &str) -> PathBuf {
        crate::git(&self.root, &["init", "-q", "--bare", name]);
        self.root.join(name)
    }

    /// The port the server listens on.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Every request so far, in order.
    pub fn requests(&self) -> Vec<GitRequest> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

struct Head {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
}

impl Head {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

fn read_head(reader: &mut impl BufRead) -> Option<Head> {
    let mut first = String::new();
    reader.read_line(&mut first).ok()?;
    let mut parts = first.split_whitespace();
    let method = parts.next()?.to_owned();
    let mut target = parts.next()?.to_owned();
    // Absolute form (through a proxy): keep the path and query.
    if let Some(rest) = target.strip_prefix("http://") {
        target = rest
            .find('/')
            .map_or_else(|| "/".to_owned(), |at| rest[at..].to_owned());
    }
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            headers.push((k.trim().to_owned(), v.trim().to_owned()));
        }
    }
    Some(Head {
        method,
        target,
        headers,
    })
}

fn read_body(reader: &mut impl BufRead, head: &Head) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    if head
        .header("Transfer-Encoding")
        .is_some_and(|v| v.eq_ignore_ascii_case("chunked"))
    {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).ok()?;
            let size = usize::from_str_radix(size.trim().split(';').next()?, 16).ok()?;
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk).ok()?;
            if size == 0 {
                return Some(body);
            }
            body.extend_from_slice(&chunk[..size]);
        }
    }
    let len: usize = head
        .header("Content-Length")
        .map_or(Some(0), |v| v.parse().ok())?;
    body.resize(len, 0);
    reader.read_exact(&mut body).ok()?;
    Some(body)
}

fn answer(stream: TcpStream, root: &Path, expected: &str, seen: &Mutex<Vec<GitRequest>>) {
    let mut reader = BufReader::new(&stream);
    let Some(head) = read_head(&mut reader) else {
        return;
    };
    if head
        .header("Expect")
        .is_some_and(|v| v.eq_ignore_ascii_case("100-continue"))
    {
        let _ = (&stream).write_all(b"HTTP/1.1 100 Continue\r\n\r\n");
    }
    let Some(body) = read_body(&mut reader, &head) else {
        return;
    };
    let authorized = head.header("Authorization") == Some(expected);
    if let Ok(mut seen) = seen.lock() {
        seen.push(GitRequest {
            method: head.method.clone(),
            target: head.target.clone(),
            authorized,
        });
    }
    let mut out = &stream;
    if !authorized {
        let _ = out.write_all(
            b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"git\"\r\n\
              Content-Length: 0\r\nConnection: close\r\n\r\n",
        );
        return;
    }
    let response = cgi(root, &head, &body).unwrap_or_else(|err| {
        format!("HTTP/1.1 500 Internal Server Error\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{err}", err.len())
            .into_bytes()
    });
    let _ = out.write_all(&response);
}

/// Runs `git http-backend` for one request; the whole HTTP response.
fn cgi(root: &Path, head: &Head, body: &[u8]) -> Result<Vec<u8>, String> {
    let (path, query) = head.target.split_once('?').unwrap_or((&head.target, ""));
    let mut child = Command::new("git")
        .arg("http-backend")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GIT_PROJECT_ROOT", root)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("REMOTE_USER", "pusher")
        .env("REQUEST_METHOD", &head.method)
        .env("PATH_INFO", path)
        .env("QUERY_STRING", query)
        .env(
            "CONTENT_TYPE",
            head.header("Content-Type").unwrap_or_default(),
        )
        .env("CONTENT_LENGTH", body.len().to_string())
        .env(
            "HTTP_CONTENT_ENCODING",
            head.header("Content-Encoding").unwrap_or_default(),
        )
        .env(
            "GIT_PROTOCOL",
            head.header("Git-Protocol").unwrap_or_default(),
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|err| format!("cannot run git http-backend: {err}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(body)
            .map_err(|err| format!("feeding git http-backend: {err}"))?;
    }
    let out = child
        .wait_with_output()
        .map_err(|err| format!("waiting for git http-backend: {err}"))?;
    let split = out
        .stdout
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|at| (at, 4))
        .or_else(|| {
            out.stdout
                .windows(2)
                .position(|w| w == b"\n\n")
                .map(|at| (at, 2))
        })
        .ok_or_else(|| {
            format!(
                "git http-backend wrote no headers: {}",
                String::from_utf8_lossy(&out.stderr)
            )
        })?;
    let (cgi_head, rest) = out.stdout.split_at(split.0);
    let content = &rest[split.1..];
    let mut status = "200 OK".to_owned();
    let mut response = Vec::new();
    let mut headers = String::new();
    for line in String::from_utf8_lossy(cgi_head).lines() {
        match line.split_once(':') {
            Some((k, v)) if k.eq_ignore_ascii_case("Status") => status = v.trim().to_owned(),
            Some(_) => headers.push_str(&format!("{}\r\n", line.trim_end())),
            None => {}
        }
    }
    response.extend_from_slice(
        format!(
            "HTTP/1.1 {status}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n",
            content.len()
        )
        .as_bytes(),
    );
    response.extend_from_slice(content);
    Ok(response)
}

/// Standard base64 with padding.
pub(crate) fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_standard_vectors() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
        ] {
            assert_eq!(base64(plain.as_bytes()), coded);
        }
    }
}
