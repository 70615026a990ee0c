//! A tiny web site on 127.0.0.1 for tests of the tools that read the web
//! (fetch_url, web_search): fixed pages by path, each with a status, headers,
//! a body and an optional delay before the answer, and a record of every
//! path asked for.
//!
//! It runs on its own OS thread with blocking sockets, so a test process
//! whose code under test runs on a `current_thread` runtime (or a separate
//! `chock` process) reaches it the same way. Every answer closes its
//! connection, which keeps the server a loop of accept, read, write.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One page of a [`Site`].
#[derive(Debug, Clone)]
pub struct Page {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// How long the server waits before it answers.
    pub delay: Duration,
}

impl Page {
    /// A 200 page with this content type.
    pub fn new(content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        Self {
            status: 200,
            headers: vec![("Content-Type".to_owned(), content_type.to_owned())],
            body: body.into(),
            delay: Duration::ZERO,
        }
    }

    /// A 200 `text/html` page.
    pub fn html(body: &str) -> Self {
        Self::new("text/html; charset=utf-8", body)
    }

    /// A 200 `text/plain` page.
    pub fn text(body: &str) -> Self {
        Self::new("text/plain; charset=utf-8", body)
    }

    /// A 302 to `location`.
    pub fn redirect(location: &str) -> Self {
        Self {
            status: 302,
            headers: vec![("Location".to_owned(), location.to_owned())],
            body: Vec::new(),
            delay: Duration::ZERO,
        }
    }

    /// An empty page with this status.
    pub fn status(status: u16) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: Vec::new(),
            delay: Duration::ZERO,
        }
    }

    /// The same page, answered after `delay`.
    pub fn after(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }
}

/// A running site; it stops accepting when the test process ends.
#[derive(Debug)]
pub struct Site {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<String>>>,
}

impl Site {
    /// Serves `pages` (keyed by path and query, e.g. `/a?b=c`; a path not
    /// listed answers 404). A key of just the path matches any query.
    pub fn start(pages: impl IntoIterator<Item = (&'static str, Page)>) -> Self {
        let pages: HashMap<String, Page> = pages
            .into_iter()
            .map(|(path, page)| (path.to_owned(), page))
            .collect();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&requests);
        // One thread per connection, so a slow page does not hold up
        // robots.txt or another page.
        let addr = crate::serve_on_loopback("test site", move |stream| {
            answer(stream, &pages, &seen);
        });
        Self { addr, requests }
    }

    /// `http://127.0.0.1:<port>`, with no trailing slash.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The port the site listens on.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Every path (with its query) asked for so far, in order.
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

fn answer(stream: TcpStream, pages: &HashMap<String, Page>, seen: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(&stream);
    let mut first = String::new();
    if reader.read_line(&mut first).is_err() {
        return;
    }
    // Read the rest of the head; the tools under test send no body.
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) if line == "\r\n" || line == "\n" => break,
            Ok(_) => {}
        }
    }
    let target = first.split_whitespace().nth(1).unwrap_or("/").to_owned();
    if let Ok(mut seen) = seen.lock() {
        seen.push(target.clone());
    }
    let path = target.split('?').next().unwrap_or("/");
    let page = pages
        .get(&target)
        .or_else(|| pages.get(path))
        .cloned()
        .unwrap_or_else(|| Page::status(404));
    std::thread::sleep(page.delay);
    let mut head = format!("HTTP/1.1 {} X\r\n", page.status);
    for (name, value) in &page.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        page.body.len()
    ));
    let mut stream = stream;
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(&page.body);
    let _ = stream.flush();
}
