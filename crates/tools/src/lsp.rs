//! The session's language servers: each started in the session's sandbox
//! (the same workspace, git directory and network rules a background
//! command gets), told of every write to a file it serves, and its
//! diagnostics for that file handed back with the write's result.
//!
//! What the session decides (which servers start, at `lsp.<program>`) is
//! the runner's; this file is told. A server that fails (it crashes, sends
//! garbage, floods, or an edit finds it gone) is said once, in the result
//! of the write that found it, and is stopped: the session carries on
//! without it. A server that is slow is not a failure: the write's result
//! says it sent nothing within its bound, and its diagnostics, when they
//! come, are what the `diagnostics` tool reads.

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::time::Duration;

use chock_lsp::{Bounds, Server, compact, file_uri};
use chock_policy::{FileGlobs, LspServer};

use crate::run_command::Commands;
use crate::server_process::Process;
use crate::workspace::SANDBOX_ROOT;

/// Diagnostics said for one file after a write.
const MAX_SAID: usize = 30;

/// A started server.
#[derive(Debug)]
pub struct StartedLsp {
    /// Its name in the `.lsp` block.
    pub name: String,
    files: FileGlobs,
    languages: Vec<String>,
    wait: Duration,
    server: Server,
    process: RefCell<Process>,
}

impl StartedLsp {
    fn serves(&self, path: &str) -> bool {
        self.files.matches(path)
            || chock_policy::language_of(path)
                .is_some_and(|lang| self.languages.iter().any(|l| l == lang))
    }
}

/// Starts `server` in the session's sandbox and waits for its answer to
/// `initialize` within its start bound. It gets a router where a
/// background command would (`.policy.net.background`), its connections
/// then decided per host like a command's.
pub async fn start(commands: &Commands, server: &LspServer) -> Result<StartedLsp, String> {
    let files = FileGlobs::new(&server.files)?;
    let options = match &server.init {
        Some(init) => Some(
            chock_zon::from_value::<serde_json::Value>(init)
                .map_err(|err| format!("its .init cannot be sent as JSON: {err}"))?,
        ),
        None => None,
    };
    let (mut process, from, to) = Process::spawn(
        commands,
        &server.argv,
        server.env.clone(),
        None,
        commands.routed(true),
    )?;
    let bounds = Bounds {
        start: Duration::from_millis(server.start_timeout_ms),
        wait: Duration::from_millis(server.wait_ms),
    };
    match Server::connect(from, to, SANDBOX_ROOT, options, bounds).await {
        Ok(connected) => Ok(StartedLsp {
            name: server.name.clone(),
            files,
            languages: server.languages.clone(),
            wait: bounds.wait,
            server: connected,
            process: RefCell::new(process),
        }),
        Err(err) => {
            // Let a dying process finish writing why before it is read.
            tokio::time::sleep(Duration::from_millis(20)).await;
            Err(format!("{err}{}", process.said()))
        }
    }
}

/// The session's language servers.
#[derive(Debug, Default)]
pub struct LspServers {
    servers: RefCell<Vec<std::rc::Rc<StartedLsp>>>,
    /// Each file a server was told of, with a hash of what it was told:
    /// after a command, only these are read again, which keeps it cheap.
    told: RefCell<HashMap<String, u64>>,
}

fn hashed(content: &str) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    content.hash(&mut hasher);
    hasher.finish()
}

impl LspServers {
    /// Adds a started server.
    pub fn add(&self, started: StartedLsp) {
        self.servers.borrow_mut().push(std::rc::Rc::new(started));
    }

    /// How many servers are running.
    pub fn len(&self) -> usize {
        self.servers.borrow().len()
    }

    /// Whether no server is running.
    pub fn is_empty(&self) -> bool {
        self.servers.borrow().is_empty()
    }

    fn serving(&self, path: &str) -> Vec<std::rc::Rc<StartedLsp>> {
        self.servers
            .borrow()
            .iter()
            .filter(|s| s.serves(path))
            .cloned()
            .collect()
    }

    /// Tells every server for `path` (relative to the workspace root) that
    /// it now holds `content`, and says what each published for it within
    /// its bound; `None` when no server serves the file.
    pub async fn after_write(&self, path: &str, content: &str) -> Option<String> {
        let serving = self.serving(path);
        if serving.is_empty() {
            return None;
        }
        let uri = match file_uri(&format!("{SANDBOX_ROOT}/{path}")) {
            Ok(uri) => uri,
            Err(err) => return Some(format!("no language server was told of {path}: {err}")),
        };
        self.told
            .borrow_mut()
            .insert(path.to_owned(), hashed(content));
        let language = chock_policy::language_of(path).unwrap_or("plaintext");
        let heard = futures_util::future::join_all(
            serving
                .iter()
                .map(|s| s.server.changed(&uri, language, content)),
        )
        .await;
        let mut said = Vec::new();
        for (started, heard) in serving.iter().zip(heard) {
            let name = &started.name;
            said.push(match heard {
                Ok(Some(diagnostics)) if diagnostics.is_empty() => {
                    format!("language server {name}: no problems in {path}")
                }
                Ok(Some(diagnostics)) => format!(
                    "language server {name} reports {} in {path}:\n{}",
                    counted(diagnostics.len()),
                    compact(path, &diagnostics, MAX_SAID)
                ),
                Ok(None) => format!(
                    "language server {name} sent no diagnostics for {path} within {} ms; call diagnostics later to read what it says",
                    started.wait.as_millis()
                ),
                Err(err) => self.withdraw(started, &err.to_string()),
            });
        }
        Some(said.join("\n"))
    }

    /// After a command in the workspace at `root`: every file a server was
    /// told of whose content the command changed is told again, and what
    /// the servers say of it is said; `None` when the command changed none.
    pub async fn after_command(&self, root: &Path) -> Option<String> {
        let told: Vec<(String, u64)> = self
            .told
            .borrow()
            .iter()
            .map(|(path, hash)| (path.clone(), *hash))
            .collect();
        let mut said = Vec::new();
        for (path, hash) in told {
            let Ok(content) = std::fs::read_to_string(root.join(&path)) else {
                continue;
            };
            if hashed(&content) != hash
                && let Some(text) = self.after_write(&path, &content).await
            {
                said.push(text);
            }
        }
        (!said.is_empty()).then(|| said.join("\n"))
    }

    /// Stops a server that failed; the sentence that says so.
    fn withdraw(&self, started: &StartedLsp, why: &str) -> String {
        self.servers
            .borrow_mut()
            .retain(|s| !std::ptr::eq(s.as_ref(), started));
        let text = format!(
            "language server {} failed: {why}{}; it was stopped, and the session carries on without it",
            started.name,
            started.process.borrow_mut().said()
        );
        tracing::warn!(target: "chock::lsp", "{text}");
        text
    }

    /// Asks every server to shut down, and stops it.
    pub async fn stop(&self) {
        let servers: Vec<_> = self.servers.borrow_mut().drain(..).collect();
        futures_util::future::join_all(servers.iter().map(|s| s.server.shutdown())).await;
    }
}

fn counted(n: usize) -> String {
    if n == 1 {
        "1 diagnostic".to_owned()
    } else {
        format!("{n} diagnostics")
    }
}
