//! The scripted fake model server. A test queues [`Reply`]s; each request
//! that reaches `POST /v1/chat/completions` (OpenAI Chat Completions),
//! `POST /v1/responses` (the OpenAI Responses API) or `POST /v1/messages`
//! (Anthropic) takes the next one and gets it rendered in that endpoint's
//! wire format, streamed as server-sent events when the request asked for
//! `"stream": true` and as one JSON body otherwise. One script therefore
//! drives any provider, which is what lets the runner's tests run the same
//! session against each. `POST /v1/messages/count_tokens` answers from the
//! server's own token count and takes no reply.
//!
//! Replies can also fail the way real APIs do: an HTTP status with headers
//! (429 with `retry-after`, 529, 503), a connection reset before the first
//! byte, a stream cut part way. With [`FakeModel::account_usage`] the input
//! usage of every answer is computed from the request the way the APIs
//! bill it, prompt caching included (`accounting.rs`).
//!
//! When `CHOCK_WIRE_DIR` is set, every request body is also written there
//! as one JSON file, for the wire check (`.ci/wire-check.py`) to validate
//! against the providers' published request types.
//!
//! The server runs on its own thread with its own single-threaded runtime so
//! that it works under any test harness: a plain `#[test]`, or a test that
//! drives the code under test on a `current_thread` runtime of its own.

mod accounting;
mod anthropic;
mod http;
mod openai;
mod responses;

pub use accounting::{Billing, tokens_of};

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

/// One tool call in a scripted turn. `arguments` is the raw JSON text the
/// model sends, so a test can script arguments that are not valid JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptedCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// One assistant turn: text, tool calls, usage, and how it is streamed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    pub text: String,
    pub calls: Vec<ScriptedCall>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// The turn stopped at the token limit (`length` / `max_tokens`).
    pub truncated: bool,
    /// Characters per streamed text or argument piece.
    pub piece_len: usize,
    /// Pause before every streamed event.
    pub delay: Duration,
    /// Anthropic thinking blocks before the answer: (thinking, signature).
    pub thinking: Vec<(String, String)>,
    /// Responses API reasoning items before the answer: (id, summary,
    /// encrypted content).
    pub reasoning: Vec<(String, String, String)>,
    /// Responses API output items sent as given (types a client may not
    /// know).
    pub extra_items: Vec<serde_json::Value>,
    /// Prompt tokens reported as read from and written to the cache.
    pub cache_read: u64,
    pub cache_write: u64,
}

impl Turn {
    /// A turn that says `text` and calls nothing.
    pub fn text(text: &str) -> Self {
        Self {
            text: text.to_owned(),
            calls: Vec::new(),
            input_tokens: 10,
            output_tokens: 5,
            truncated: false,
            piece_len: 4,
            delay: Duration::ZERO,
            thinking: Vec::new(),
            reasoning: Vec::new(),
            extra_items: Vec::new(),
            cache_read: 0,
            cache_write: 0,
        }
    }

    /// Adds an Anthropic thinking block before the answer.
    pub fn thinking(mut self, thinking: &str, signature: &str) -> Self {
        self.thinking
            .push((thinking.to_owned(), signature.to_owned()));
        self
    }

    /// Adds a Responses API reasoning item before the answer.
    pub fn reasoning(mut self, id: &str, summary: &str, encrypted: &str) -> Self {
        self.reasoning
            .push((id.to_owned(), summary.to_owned(), encrypted.to_owned()));
        self
    }

    /// Adds a Responses API output item exactly as given.
    pub fn extra_item(mut self, item: serde_json::Value) -> Self {
        self.extra_items.push(item);
        self
    }

    /// Reports `read` prompt tokens read from the cache and `write` written
    /// to it (counted within the input tokens).
    pub fn cache(mut self, read: u64, write: u64) -> Self {
        self.cache_read = read;
        self.cache_write = write;
        self
    }

    /// Adds a tool call whose arguments are `arguments` serialised.
    pub fn call(self, id: &str, name: &str, arguments: &serde_json::Value) -> Self {
        self.raw_call(id, name, &arguments.to_string())
    }

    /// Adds a tool call whose arguments are sent exactly as `arguments`.
    pub fn raw_call(mut self, id: &str, name: &str, arguments: &str) -> Self {
        self.calls.push(ScriptedCall {
            id: id.to_owned(),
            name: name.to_owned(),
            arguments: arguments.to_owned(),
        });
        self
    }

    /// Sets the token usage the turn reports.
    pub fn usage(mut self, input_tokens: u64, output_tokens: u64) -> Self {
        self.input_tokens = input_tokens;
        self.output_tokens = output_tokens;
        self
    }

    /// Streams text and arguments `piece_len` characters at a time.
    pub fn pieces(mut self, piece_len: usize) -> Self {
        self.piece_len = piece_len.max(1);
        self
    }

    /// Why the turn stopped, in a wire format's words: `truncated` when it
    /// hit the token limit, `finished` when it called nothing, `calling`
    /// when it ended to have its tools run.
    pub(crate) fn why_it_stopped(
        &self,
        truncated: &'static str,
        finished: &'static str,
        calling: &'static str,
    ) -> &'static str {
        if self.truncated {
            truncated
        } else if self.calls.is_empty() {
            finished
        } else {
            calling
        }
    }

    /// Pauses `delay` before every streamed event.
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// Ends the turn as cut off by the token limit.
    pub fn truncated(mut self) -> Self {
        self.truncated = true;
        self
    }
}

/// What the server does with one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// Answer with the turn.
    Turn(Turn),
    /// Answer with this HTTP status and body.
    Error { status: u16, body: String },
    /// Answer with this HTTP status, these headers and this body.
    Refuse {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// Read the request, then close the connection without a byte of
    /// answer.
    Reset,
    /// Send the first `after` events of the turn, then drop the connection
    /// without ending the body.
    Cut { turn: Turn, after: usize },
    /// Send the first `after` events of the turn, then `raw` as one event's
    /// data, then end the body normally.
    Malformed {
        turn: Turn,
        after: usize,
        raw: String,
    },
    /// Stream exactly these server-sent-event blocks (each written as given,
    /// so it must end in a blank line), then end the body: for reproducing a
    /// particular server's quirks.
    Frames(Vec<String>),
}

impl From<Turn> for Reply {
    fn from(turn: Turn) -> Self {
        Self::Turn(turn)
    }
}

impl Reply {
    /// An HTTP error with `body`.
    pub fn error(status: u16, body: &str) -> Self {
        Self::Error {
            status,
            body: body.to_owned(),
        }
    }

    /// An HTTP error with headers, e.g. `429` with `retry-after`.
    pub fn refuse(status: u16, headers: &[(&str, &str)], body: &str) -> Self {
        Self::Refuse {
            status,
            headers: headers
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            body: body.to_owned(),
        }
    }

    /// HTTP 429 with `retry-after: <retry_after>`, in Anthropic's words.
    pub fn rate_limited(retry_after: &str) -> Self {
        Self::refuse(
            429,
            &[("retry-after", retry_after)],
            r#"{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}"#,
        )
    }

    /// HTTP 529, Anthropic's overloaded answer.
    pub fn overloaded() -> Self {
        Self::error(
            529,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        )
    }
}

/// The wire format a request arrived in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    OpenAi,
    Responses,
    Anthropic,
}

/// A request the server received, kept for assertions.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    /// Header names lowercased, in arrival order.
    pub headers: Vec<(String, String)>,
    pub body: String,
    pub at: Instant,
}

impl RecordedRequest {
    /// The body parsed as JSON; panics when it is not JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|err| panic!("request body is not JSON ({err}): {}", self.body))
    }

    /// The first header named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| value.as_str())
    }
}

#[derive(Debug, Default)]
struct State {
    replies: VecDeque<Reply>,
    requests: Vec<RecordedRequest>,
    /// Input usage computed from requests instead of scripted.
    accounting: Option<accounting::Accounts>,
    /// Where requests are written for the wire check, with this server's
    /// prefix for their file names.
    record: Option<(std::path::PathBuf, String)>,
}

type Shared = Arc<Mutex<State>>;

fn lock(shared: &Shared) -> MutexGuard<'_, State> {
    // A test that panicked while holding the lock has already failed; the
    // state is still good enough to report from.
    shared
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A fake model listening on `127.0.0.1:<random port>` until dropped.
#[derive(Debug)]
pub struct FakeModel {
    addr: SocketAddr,
    shared: Shared,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FakeModel {
    /// Starts a server with an empty script.
    pub fn start() -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap_or_else(|err| panic!("fake model cannot bind 127.0.0.1: {err}"));
        let addr = listener
            .local_addr()
            .unwrap_or_else(|err| panic!("fake model has no local address: {err}"));
        listener
            .set_nonblocking(true)
            .unwrap_or_else(|err| panic!("fake model cannot set its socket non-blocking: {err}"));
        let shared = Shared::default();
        if let Some(dir) = std::env::var_os("CHOCK_WIRE_DIR").filter(|dir| !dir.is_empty()) {
            let dir = std::path::PathBuf::from(dir);
            let _ = std::fs::create_dir_all(&dir);
            let test = std::thread::current()
                .name()
                .unwrap_or("test")
                .replace(|c: char| !c.is_ascii_alphanumeric(), "_");
            let prefix = format!("{}-{}-{}", std::process::id(), addr.port(), test);
            lock(&shared).record = Some((dir, prefix));
        }
        let (stop, stopped) = oneshot::channel();
        let thread_shared = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("fake-model".to_owned())
            .spawn(move || http::serve(listener, thread_shared, stopped))
            .unwrap_or_else(|err| panic!("cannot start the fake model thread: {err}"));
        Self {
            addr,
            shared,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// Starts a server with `replies` queued.
    pub fn with(replies: impl IntoIterator<Item = Reply>) -> Self {
        let model = Self::start();
        for reply in replies {
            model.push(reply);
        }
        model
    }

    /// Computes every answer's input usage from its request, as the APIs
    /// bill it: Anthropic's prompt cache (breakpoints, a 1024-token least
    /// prefix, reads and writes) and OpenAI's automatic prefix caching. The
    /// scripted input counts are ignored from here on.
    pub fn account_usage(&self) {
        lock(&self.shared).accounting = Some(accounting::Accounts::default());
    }

    /// What the accounting billed so far, one entry per answered call.
    pub fn billing(&self) -> Vec<Billing> {
        lock(&self.shared)
            .accounting
            .as_ref()
            .map(|accounts| accounts.billed.clone())
            .unwrap_or_default()
    }

    /// Queues one more reply.
    pub fn push(&self, reply: impl Into<Reply>) {
        lock(&self.shared).replies.push_back(reply.into());
    }

    /// `http://127.0.0.1:<port>`: an Anthropic `base_url`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `http://127.0.0.1:<port>/v1`: an OpenAI `base_url`.
    pub fn openai_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Every request received so far, oldest first.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared).requests.clone()
    }

    /// Waits until at least `count` requests have arrived and returns them.
    pub fn wait_for_requests(&self, count: usize, within: Duration) -> Vec<RecordedRequest> {
        crate::wait_for(
            within,
            &format!("{count} requests at the fake model"),
            || {
                let requests = self.requests();
                (requests.len() >= count).then_some(requests)
            },
        )
    }

    /// A whole operator config.zon whose only provider instance, `fake`,
    /// is this server in the `wire` format, with `.model = "fake/<model>"`.
    pub fn config_zon(&self, wire: Wire, model: &str) -> String {
        let (kind, url) = match wire {
            Wire::OpenAi => ("openai", self.openai_url()),
            Wire::Responses => ("openai_responses", self.openai_url()),
            Wire::Anthropic => ("anthropic", self.url()),
        };
        format!(
            ".{{\n    .providers = .{{\n        .fake = .{{ .kind = .{kind}, .base_url = \"{url}\" }},\n    }},\n    .model = \"fake/{model}\",\n}}\n"
        )
    }

    /// How many scripted replies have not been used yet.
    pub fn remaining(&self) -> usize {
        lock(&self.shared).replies.len()
    }
}

impl Drop for FakeModel {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Splits `text` into pieces of at most `len` characters (never inside a
/// UTF-8 sequence).
fn pieces(text: &str, len: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars
        .chunks(len.max(1))
        .map(|chunk| chunk.iter().collect())
        .collect()
}
