//! One connected server: a task that reads everything it sends (answers,
//! its own requests, the diagnostics it publishes) into shared state, and
//! the calls a session makes, each bounded.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lsp_types::notification::{
    DidChangeTextDocument, DidOpenTextDocument, DidSaveTextDocument, Exit, Initialized,
    Notification, PublishDiagnostics,
};
use lsp_types::request::{Initialize, Request, Shutdown};
use lsp_types::{
    ClientCapabilities, ClientInfo, Diagnostic, DidChangeTextDocumentParams,
    DidOpenTextDocumentParams, DidSaveTextDocumentParams, InitializeParams, InitializeResult,
    InitializedParams, PublishDiagnosticsClientCapabilities, PublishDiagnosticsParams,
    TextDocumentClientCapabilities, TextDocumentContentChangeEvent, TextDocumentIdentifier,
    TextDocumentItem, TextDocumentSyncCapability, TextDocumentSyncClientCapabilities,
    TextDocumentSyncSaveOptions, Uri, VersionedTextDocumentIdentifier, WorkspaceFolder,
};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use tokio::sync::{oneshot, watch};

use crate::error::LspError;
use crate::frame;

/// Messages a server may send between two edits before it is taken as
/// flooding.
pub const FLOOD_MESSAGES: u64 = 10_000;

/// Bytes a server may send between two edits before it is taken as
/// flooding.
pub const FLOOD_BYTES: u64 = 64 * 1024 * 1024;

/// Diagnostics kept for one file (a server that reports more is cut).
pub const MAX_DIAGNOSTICS: usize = 500;

/// Files whose diagnostics are kept: a server that publishes for more is
/// not listened to about the rest.
pub const MAX_FILES: usize = 1024;

/// How long `shutdown` is waited for at the session's end.
const SHUTDOWN_WAIT: Duration = Duration::from_millis(500);

/// How long a server may take to start, and an edit waits for diagnostics.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    pub start: Duration,
    pub wait: Duration,
}

type Answer = Result<Value, (i64, String)>;
type Writer = Box<dyn AsyncWrite + Unpin + Send>;

#[derive(Debug, Default)]
struct State {
    pending: HashMap<i64, oneshot::Sender<Answer>>,
    /// The latest diagnostics of each file, with the document version they
    /// are for (when the server said) and the publish's sequence number.
    published: HashMap<Uri, (Vec<Diagnostic>, Option<i32>, u64)>,
    publishes: u64,
    failed: Option<String>,
    messages: u64,
    bytes: u64,
}

struct Shared {
    state: Mutex<State>,
    /// Bumped at every publish and at a failure, to wake a waiting edit.
    changed: watch::Sender<u64>,
    writer: tokio::sync::Mutex<Writer>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn fail(&self, why: String) {
        let mut state = self.lock();
        state.failed.get_or_insert(why);
        state.pending.clear();
        drop(state);
        self.changed.send_modify(|n| *n += 1);
    }

    async fn send(&self, message: &Value) -> Result<(), LspError> {
        let body = serde_json::to_vec(message).map_err(|e| LspError::Garbage(e.to_string()))?;
        frame::write(&mut *self.writer.lock().await, &body).await
    }
}

/// A server the session started, once it answered `initialize`.
#[derive(Debug)]
pub struct Server {
    shared: Arc<Shared>,
    next_id: AtomicI64,
    bounds: Bounds,
    /// The version of each document opened, by uri.
    open: Mutex<HashMap<Uri, i32>>,
    /// Whether it asked for `didSave`.
    save: bool,
    reader: tokio::task::JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

/// The `file://` uri of an absolute path, its bytes outside the unreserved
/// set percent-encoded.
pub fn file_uri(path: &str) -> Result<Uri, LspError> {
    let mut text = String::from("file://");
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || b"/-._~".contains(&byte) {
            text.push(char::from(byte));
        } else {
            text.push_str(&format!("%{byte:02X}"));
        }
    }
    text.parse()
        .map_err(|err| LspError::Garbage(format!("{path:?} makes no uri ({err:?})")))
}

impl Server {
    /// Speaks to the server at the other end of `from` and `to`: sends
    /// `initialize` for the workspace at `root` (an absolute path as the
    /// server sees it) with `options`, waits for its answer within
    /// `bounds.start`, and sends `initialized`.
    pub async fn connect(
        from: impl AsyncRead + Unpin + Send + 'static,
        to: impl AsyncWrite + Unpin + Send + 'static,
        root: &str,
        options: Option<Value>,
        bounds: Bounds,
    ) -> Result<Server, LspError> {
        let (changed, _) = watch::channel(0);
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            changed,
            writer: tokio::sync::Mutex::new(Box::new(to)),
        });
        let reader = tokio::spawn(read_all(BufReader::new(from), Arc::clone(&shared)));
        let mut server = Server {
            shared,
            next_id: AtomicI64::new(1),
            bounds,
            open: Mutex::new(HashMap::new()),
            save: false,
            reader,
        };
        let root_uri = file_uri(root)?;
        #[expect(
            deprecated,
            reason = "older servers read root_uri, not workspace folders"
        )]
        let params = InitializeParams {
            process_id: Some(std::process::id()),
            root_uri: Some(root_uri.clone()),
            initialization_options: options,
            capabilities: ClientCapabilities {
                text_document: Some(TextDocumentClientCapabilities {
                    synchronization: Some(TextDocumentSyncClientCapabilities {
                        did_save: Some(true),
                        ..TextDocumentSyncClientCapabilities::default()
                    }),
                    publish_diagnostics: Some(PublishDiagnosticsClientCapabilities {
                        version_support: Some(true),
                        ..PublishDiagnosticsClientCapabilities::default()
                    }),
                    ..TextDocumentClientCapabilities::default()
                }),
                ..ClientCapabilities::default()
            },
            workspace_folders: Some(vec![WorkspaceFolder {
                uri: root_uri,
                name: "workspace".to_owned(),
            }]),
            client_info: Some(ClientInfo {
                name: "chock".to_owned(),
                version: Some(env!("CARGO_PKG_VERSION").to_owned()),
            }),
            ..InitializeParams::default()
        };
        let answer = server
            .request(Initialize::METHOD, json!(params), bounds.start)
            .await?;
        let result: InitializeResult = serde_json::from_value(answer).map_err(|err| {
            LspError::Garbage(format!(
                "its answer to initialize is not an InitializeResult: {err}"
            ))
        })?;
        server.save = match result.capabilities.text_document_sync {
            Some(TextDocumentSyncCapability::Options(options)) => match options.save {
                Some(TextDocumentSyncSaveOptions::Supported(yes)) => yes,
                Some(TextDocumentSyncSaveOptions::SaveOptions(_)) => true,
                None => false,
            },
            _ => false,
        };
        server
            .notify(Initialized::METHOD, json!(InitializedParams {}))
            .await?;
        Ok(server)
    }

    /// Why the server cannot be used any more, once it cannot.
    pub fn failed(&self) -> Option<String> {
        self.shared.lock().failed.clone()
    }

    /// Whether the document at `uri` was opened.
    pub fn is_open(&self, uri: &Uri) -> bool {
        self.opened().contains_key(uri)
    }

    fn opened(&self) -> std::sync::MutexGuard<'_, HashMap<Uri, i32>> {
        self.open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The latest diagnostics the server published for `uri`.
    pub fn diagnostics(&self, uri: &Uri) -> Option<Vec<Diagnostic>> {
        self.shared
            .lock()
            .published
            .get(uri)
            .map(|(d, _, _)| d.clone())
    }

    /// Tells the server the document at `uri` now holds `text` (opening it
    /// the first time, as `language`), and that it was saved, then waits
    /// up to `bounds.wait` for the diagnostics it publishes for it.
    /// `Ok(None)`: none came within the bound.
    pub async fn changed(
        &self,
        uri: &Uri,
        language: &str,
        text: &str,
    ) -> Result<Option<Vec<Diagnostic>>, LspError> {
        if let Some(why) = self.failed() {
            return Err(LspError::Failed(why));
        }
        let before = {
            let mut state = self.shared.lock();
            state.messages = 0;
            state.bytes = 0;
            state.publishes
        };
        let (version, first) = {
            let mut open = self.opened();
            let version = open.entry(uri.clone()).or_insert(0);
            *version += 1;
            (*version, *version == 1)
        };
        if first {
            let item =
                TextDocumentItem::new(uri.clone(), language.to_owned(), version, text.to_owned());
            self.notify(
                DidOpenTextDocument::METHOD,
                json!(DidOpenTextDocumentParams {
                    text_document: item
                }),
            )
            .await?;
        } else {
            self.notify(
                DidChangeTextDocument::METHOD,
                json!(DidChangeTextDocumentParams {
                    text_document: VersionedTextDocumentIdentifier::new(uri.clone(), version),
                    content_changes: vec![TextDocumentContentChangeEvent {
                        range: None,
                        range_length: None,
                        text: text.to_owned(),
                    }],
                }),
            )
            .await?;
        }
        if self.save {
            self.notify(
                DidSaveTextDocument::METHOD,
                json!(DidSaveTextDocumentParams {
                    text_document: TextDocumentIdentifier::new(uri.clone()),
                    text: None,
                }),
            )
            .await?;
        }
        self.published_after(uri, before, version).await
    }

    /// Waits for a publish for `uri` later than the `before`th, for
    /// `version` or later when the server says versions.
    async fn published_after(
        &self,
        uri: &Uri,
        before: u64,
        version: i32,
    ) -> Result<Option<Vec<Diagnostic>>, LspError> {
        let mut changed = self.shared.changed.subscribe();
        let wait = async {
            loop {
                {
                    let state = self.shared.lock();
                    if let Some(why) = &state.failed {
                        return Err(LspError::Failed(why.clone()));
                    }
                    if let Some((diagnostics, said, seq)) = state.published.get(uri)
                        && *seq > before
                        && said.is_none_or(|v| v >= version)
                    {
                        return Ok(diagnostics.clone());
                    }
                }
                if changed.changed().await.is_err() {
                    return Err(LspError::Ended);
                }
            }
        };
        match tokio::time::timeout(self.bounds.wait, wait).await {
            Ok(Ok(diagnostics)) => Ok(Some(diagnostics)),
            Ok(Err(err)) => Err(err),
            Err(_) => Ok(None),
        }
    }

    /// Asks the server to shut down and exit, waiting a moment at most.
    pub async fn shutdown(&self) {
        if self.failed().is_some() {
            return;
        }
        let _ = self
            .request(Shutdown::METHOD, Value::Null, SHUTDOWN_WAIT)
            .await;
        let _ = self.notify(Exit::METHOD, Value::Null).await;
    }

    async fn request(
        &self,
        method: &'static str,
        params: Value,
        bound: Duration,
    ) -> Result<Value, LspError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.shared.lock().pending.insert(id, tx);
        self.shared
            .send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
            .await?;
        match tokio::time::timeout(bound, rx).await {
            Ok(Ok(Ok(result))) => Ok(result),
            Ok(Ok(Err((code, message)))) => Err(LspError::Answered {
                method,
                code,
                message,
            }),
            Ok(Err(_)) => Err(self.failed().map_or(LspError::Ended, LspError::Failed)),
            Err(_) => {
                self.shared.lock().pending.remove(&id);
                Err(LspError::Timeout {
                    method,
                    after: bound,
                })
            }
        }
    }

    async fn notify(&self, method: &'static str, params: Value) -> Result<(), LspError> {
        let sent = self
            .shared
            .send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }))
            .await;
        match sent {
            Ok(()) => Ok(()),
            Err(err) => {
                // A pipe that broke is most often the server gone: let the
                // reader see its end first, whose reason says more.
                tokio::task::yield_now().await;
                Err(self.failed().map_or(err, LspError::Failed))
            }
        }
    }
}

/// Reads every message the server sends until it ends or fails.
async fn read_all(mut from: BufReader<impl AsyncRead + Unpin>, shared: Arc<Shared>) {
    let why = loop {
        let body = match frame::read(&mut from).await {
            Ok(Some(body)) => body,
            Ok(None) => break LspError::Ended.to_string(),
            Err(err) => break err.to_string(),
        };
        if let Some(flood) = counted(&shared, body.len()) {
            break LspError::Flooded(flood).to_string();
        }
        let message: Value = match serde_json::from_slice(&body) {
            Ok(message) => message,
            Err(err) => {
                break LspError::Garbage(format!("a message that is not JSON ({err})")).to_string();
            }
        };
        if let Err(err) = dispatch(&shared, message).await {
            break err.to_string();
        }
    };
    shared.fail(why);
}

/// Counts a message against the flood bounds; what was exceeded, if one was.
fn counted(shared: &Shared, bytes: usize) -> Option<String> {
    let mut state = shared.lock();
    state.messages += 1;
    state.bytes += u64::try_from(bytes).unwrap_or(u64::MAX);
    if state.messages > FLOOD_MESSAGES {
        Some(format!(
            "more than {FLOOD_MESSAGES} messages since the last edit"
        ))
    } else if state.bytes > FLOOD_BYTES {
        Some(format!("more than {FLOOD_BYTES} bytes since the last edit"))
    } else {
        None
    }
}

async fn dispatch(shared: &Shared, message: Value) -> Result<(), LspError> {
    let method = message.get("method").and_then(Value::as_str);
    let id = message.get("id").cloned().filter(|id| !id.is_null());
    match (method, id) {
        // An answer to one of ours.
        (None, Some(id)) => {
            let answer = match message.get("error") {
                Some(error) => Err((
                    error.get("code").and_then(Value::as_i64).unwrap_or(0),
                    error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                )),
                None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
            };
            let waiting = id.as_i64().and_then(|id| shared.lock().pending.remove(&id));
            if let Some(waiting) = waiting {
                let _ = waiting.send(answer);
            }
            Ok(())
        }
        // Its own request: answered empty, so a server waiting carries on.
        (Some(method), Some(id)) => {
            let result = match method {
                "workspace/configuration" => {
                    let items = message
                        .pointer("/params/items")
                        .and_then(Value::as_array)
                        .map_or(0, Vec::len);
                    Value::Array(vec![Value::Null; items])
                }
                _ => Value::Null,
            };
            shared
                .send(&json!({ "jsonrpc": "2.0", "id": id, "result": result }))
                .await
        }
        (Some(PublishDiagnostics::METHOD), None) => {
            let params: PublishDiagnosticsParams =
                serde_json::from_value(message.get("params").cloned().unwrap_or(Value::Null))
                    .map_err(|err| {
                        LspError::Garbage(format!("publishDiagnostics that does not parse ({err})"))
                    })?;
            let mut diagnostics = params.diagnostics;
            diagnostics.truncate(MAX_DIAGNOSTICS);
            let mut state = shared.lock();
            if state.published.len() >= MAX_FILES && !state.published.contains_key(&params.uri) {
                return Ok(());
            }
            state.publishes += 1;
            let seq = state.publishes;
            state
                .published
                .insert(params.uri, (diagnostics, params.version, seq));
            drop(state);
            shared.changed.send_modify(|n| *n += 1);
            Ok(())
        }
        // Its other notifications (log messages, progress) are not needed.
        (Some(_), None) => Ok(()),
        (None, None) => Err(LspError::Garbage(
            "a message with neither a method nor an id".to_owned(),
        )),
    }
}

#[cfg(test)]
mod tests;
