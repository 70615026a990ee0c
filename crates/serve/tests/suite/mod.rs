//! The harness: a real daemon and a real serve, both in-process, in a
//! temporary state directory; an HTTP/1.1 client over serve's unix socket;
//! a reader of server-sent events; logs written with chock-log's writer.

mod bad_input;
mod browser;
mod limits;
mod pages;
mod peer;
mod perf;
mod sessions;
mod watch;

use std::path::{Path, PathBuf};
use std::time::Duration;

use chock_control::Address;
use chock_serve::{Config, Serve};
pub(crate) use chock_testkit::{HasTestDirs, S1, S2, eventually};
use chock_testkit::{RunningDaemon, Serving, StandIn, TestDirs, serve_in_background};
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::UnixStream;

pub(crate) struct Harness {
    dirs: TestDirs,
    pub(crate) daemon: Address,
    pub(crate) serve: Address,
    /// The daemon serve stands in front of, when the harness booted one.
    _daemon: Option<RunningDaemon>,
    serving: Vec<Serving>,
}

impl Harness {
    /// A daemon whose sessions run the stand-in `chock run` (each asks one
    /// question and ends once it is answered), and serve in front of it on
    /// serve.sock in the same state directory.
    pub(crate) async fn boot() -> Harness {
        let dirs = TestDirs::new();
        let daemon = dirs.start_daemon(StandIn::EndsOnAnswer, |_| {}).await;
        let address = daemon.address().clone();
        Harness::in_front_of(dirs, address, Some(daemon)).await
    }

    /// Serve in front of an address where no daemon need be listening.
    pub(crate) async fn boot_serve_only(daemon: Address) -> Harness {
        Harness::in_front_of(TestDirs::new(), daemon, None).await
    }

    async fn in_front_of(
        dirs: TestDirs,
        address: Address,
        daemon: Option<RunningDaemon>,
    ) -> Harness {
        let mut h = Harness {
            serve: Address::Unix(dirs.state().join("serve.sock")),
            dirs,
            daemon: address,
            _daemon: daemon,
            serving: Vec::new(),
        };
        h.serve = h.start_serve(None).await;
        h
    }

    /// Starts serve on its socket, or on TCP when `tcp` names a host.
    pub(crate) async fn start_serve(&mut self, tcp: Option<&str>) -> Address {
        self.start_serve_with(tcp, |_| {}).await
    }

    /// [`Harness::start_serve`] with its configuration adjusted first.
    pub(crate) async fn start_serve_with(
        &mut self,
        tcp: Option<&str>,
        adjust: impl FnOnce(&mut Config),
    ) -> Address {
        let mut config = Config::new(self.daemon.clone(), self.state().join("serve.sock"));
        config.socket_activation = false;
        config.daemon_timeout = Duration::from_secs(10);
        config.tcp = tcp.map(|host| (host.to_owned(), 0));
        adjust(&mut config);
        let serve = Serve::bind(config).await.unwrap();
        let address = serve.addresses().remove(0);
        self.serving
            .push(serve_in_background(|stopped| serve.serve(stopped)));
        address
    }

    pub(crate) fn serve_socket(&self) -> PathBuf {
        match &self.serve {
            Address::Unix(path) => path.clone(),
            Address::Tcp { .. } => unreachable!("the harness's serve listens on a unix socket"),
        }
    }

    /// `?project=<this project>`, encoded.
    pub(crate) fn pq(&self) -> String {
        format!("project={}", encode(&self.project_text()))
    }

    pub(crate) async fn get(&self, path: &str) -> Reply {
        self.request("GET", path, &[], None).await
    }

    pub(crate) async fn post(&self, path: &str, json: &str) -> Reply {
        self.request(
            "POST",
            path,
            &[("content-type", "application/json")],
            Some(json),
        )
        .await
    }

    /// Answers `request` of `session` with `answer` (`yes`, `no`, or
    /// whatever the test means to send) through the answer route.
    pub(crate) async fn answer(&self, session: &str, request: &str, answer: &str) -> Reply {
        let body = serde_json::json!({"project": self.project_text(), "request": request, "answer": answer});
        self.post(
            &format!("/api/sessions/{session}/answer"),
            &body.to_string(),
        )
        .await
    }

    pub(crate) async fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&str>,
    ) -> Reply {
        let response = send(&self.serve_socket(), method, path, headers, body).await;
        let status = response.status();
        let content_type = response
            .headers()
            .get("content-type")
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default();
        let bytes = tokio::time::timeout(Duration::from_secs(30), response.into_body().collect())
            .await
            .expect("serve finishes a reply")
            .unwrap()
            .to_bytes();
        Reply {
            status,
            content_type,
            body: String::from_utf8(bytes.to_vec()).unwrap(),
        }
    }

    /// The watch route of `session` in this project, from after `after`.
    pub(crate) fn watch_path(&self, session: &str, after: u64) -> String {
        format!("/api/sessions/{session}/watch?{}&after={after}", self.pq())
    }

    /// Opens the watch of `session` from after `after`.
    pub(crate) async fn watch(&self, session: &str, after: u64) -> Sse {
        self.sse(&self.watch_path(session, after), None).await
    }

    /// The session's row, as its route gives it.
    pub(crate) async fn row(&self, session: &str) -> serde_json::Value {
        self.get(&format!("/api/sessions/{session}?{}", self.pq()))
            .await
            .json()
    }

    /// Opens a watch and returns its event stream.
    pub(crate) async fn sse(&self, path: &str, last_event_id: Option<u64>) -> Sse {
        let id = last_event_id.map(|id| id.to_string());
        let mut headers = vec![("accept", "text/event-stream")];
        if let Some(id) = &id {
            headers.push(("last-event-id", id));
        }
        let response = send(&self.serve_socket(), "GET", path, &headers, None).await;
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(
            response.headers()["content-type"].to_str().unwrap(),
            "text/event-stream"
        );
        Sse {
            body: response.into_body(),
            buffer: String::new(),
        }
    }
}

impl HasTestDirs for Harness {
    fn test_dirs(&self) -> &TestDirs {
        &self.dirs
    }
}

/// One HTTP/1.1 exchange over a fresh connection to a unix socket.
pub(crate) async fn send(
    socket: &Path,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> Response<Incoming> {
    let stream = UnixStream::connect(socket).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    let mut request = Request::builder()
        .method(method)
        .uri(path)
        .header("host", "serve");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request
        .body(Full::new(Bytes::from(body.unwrap_or("").to_owned())))
        .unwrap();
    tokio::time::timeout(Duration::from_secs(30), sender.send_request(request))
        .await
        .expect("serve answers")
        .unwrap()
}

#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: StatusCode,
    pub(crate) content_type: String,
    pub(crate) body: String,
}

impl Reply {
    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }

    /// Asserts an error reply: its status, its kind, and a message that
    /// contains `says`.
    #[track_caller]
    pub(crate) fn assert_error(&self, status: u16, kind: &str, says: &str) {
        assert_eq!(self.status.as_u16(), status, "{}", self.body);
        assert_eq!(self.content_type, "application/json");
        let json = self.json();
        assert_eq!(json["kind"], kind, "{}", self.body);
        let error = json["error"].as_str().unwrap();
        assert!(error.contains(says), "{error:?} should contain {says:?}");
    }
}

/// One server-sent event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    pub(crate) event: String,
    pub(crate) id: Option<u64>,
    pub(crate) data: String,
}

pub(crate) struct Sse {
    body: Incoming,
    buffer: String,
}

impl Sse {
    /// The next event (keep-alive comments skipped), or `None` at the end of
    /// the stream; bounded so a silent stream fails the test.
    pub(crate) async fn next(&mut self) -> Option<SseEvent> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut event = SseEvent {
                    event: "message".into(),
                    id: None,
                    data: String::new(),
                };
                let mut any = false;
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("event:") {
                        event.event = v.trim().to_owned();
                        any = true;
                    } else if let Some(v) = line.strip_prefix("id:") {
                        event.id = Some(v.trim().parse().unwrap());
                    } else if let Some(v) = line.strip_prefix("data:") {
                        event.data.push_str(v.strip_prefix(' ').unwrap_or(v));
                        any = true;
                    }
                }
                if any {
                    return Some(event);
                }
                continue;
            }
            let frame = tokio::time::timeout(Duration::from_secs(30), self.body.frame())
                .await
                .expect("an event within 30 s")?
                .unwrap();
            if let Ok(data) = frame.into_data() {
                self.buffer.push_str(std::str::from_utf8(&data).unwrap());
            }
        }
    }

    /// The next `log` event's id, skipping nothing else silently.
    pub(crate) async fn next_log(&mut self) -> SseEvent {
        let event = self.next().await.expect("a log event");
        assert_eq!(event.event, "log", "{event:?}");
        event
    }
}

/// Percent-encodes a query value.
pub(crate) fn encode(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~/".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
