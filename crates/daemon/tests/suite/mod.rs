//! The harness: a daemon in a temporary state directory, a project
//! directory, a stand-in `chock` executable, raw protocol exchanges, and a
//! live log that a test appends to while holding its lock.

mod answer;
mod bad_input;
mod peer;
mod protocol;
mod read_list;
mod spawn;
mod watch;

use std::fs::File;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use chock_control::{Address, Client};
use chock_daemon::{Config, Daemon};
use chock_log::event::SessionOpen;
use chock_log::{Event, LogWriter, SessionId, StateDir};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;

pub(crate) struct Harness {
    pub(crate) state: tempfile::TempDir,
    pub(crate) project: tempfile::TempDir,
    pub(crate) address: Address,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Harness {
    /// A daemon whose sessions run the stand-in with the given behaviour:
    /// `finish` (ends on release), `crash` (hangs after opening), or
    /// `exit-early` (exits 3 before writing anything).
    pub(crate) async fn boot(behaviour: &str) -> Harness {
        Harness::boot_with(behaviour, |_| {}).await
    }

    /// `boot`, with the configuration adjusted first.
    pub(crate) async fn boot_with(behaviour: &str, adjust: impl FnOnce(&mut Config)) -> Harness {
        let state = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let exe = fake_chock(state.path(), behaviour);
        let mut config = Config::new(state.path().to_owned(), exe);
        config.socket_activation = false;
        config.start_timeout = Duration::from_secs(20);
        adjust(&mut config);
        let daemon = Daemon::bind(config).await.unwrap();
        let address = daemon.addresses().remove(0);
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(daemon.serve(async move {
            let _ = rx.await;
        }));
        Harness {
            state,
            project,
            address,
            shutdown: Some(tx),
        }
    }

    pub(crate) fn client(&self) -> Client {
        Client::new(self.address.clone()).with_timeout(Duration::from_secs(30))
    }

    pub(crate) fn socket(&self) -> PathBuf {
        match &self.address {
            Address::Unix(path) => path.clone(),
            Address::Tcp { .. } => unreachable!("the harness listens on a unix socket"),
        }
    }

    pub(crate) fn project(&self) -> PathBuf {
        self.project.path().canonicalize().unwrap()
    }

    pub(crate) fn project_text(&self) -> String {
        self.project().to_str().unwrap().to_owned()
    }

    pub(crate) fn session_dir(&self, id: &str) -> PathBuf {
        self.state.path().join("sessions").join(id)
    }

    /// Lets a stand-in session finish its turn and end.
    pub(crate) fn release(&self, id: &str) {
        File::create(self.session_dir(id).join("release")).unwrap();
    }

    /// A session log this test writes itself, holding the lock as an owner would.
    pub(crate) fn live_log(&self, id: &str) -> LiveLog {
        LiveLog::create(self.state.path(), id, &self.project_text())
    }

    /// Sends `input` raw, then reads every reply line until the daemon closes.
    pub(crate) async fn raw(&self, input: &[u8]) -> Vec<String> {
        let mut stream = UnixStream::connect(self.socket()).await.unwrap();
        stream.write_all(input).await.unwrap();
        read_all(&mut stream).await
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

/// Every line until the peer closes, bounded so a hung daemon fails the test.
pub(crate) async fn read_all(stream: &mut UnixStream) -> Vec<String> {
    let mut bytes = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut bytes))
        .await
        .expect("the daemon closes the connection after its reply")
        .unwrap();
    String::from_utf8(bytes)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

pub(crate) const GREETING: &[u8] = b"hello chock-control 1\n";

/// Writes the stand-in `chock` with its behaviour baked in.
pub(crate) fn fake_chock(dir: &Path, behaviour: &str) -> PathBuf {
    let script = include_str!("fake_chock.py").replace("@BEHAVIOUR@", behaviour);
    let path = dir.join(format!("fake-chock-{behaviour}"));
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// Session ids for logs a test writes itself.
pub(crate) const S1: &str = "20261129-190000-001-00000001";
pub(crate) const S2: &str = "20261129-190000-002-00000002";
pub(crate) const S3: &str = "20261129-190000-003-00000003";

/// A log this test owns, written by the real log writer: an exclusive
/// flock, ids from 1, one write per event.
pub(crate) struct LiveLog {
    writer: LogWriter,
}

impl LiveLog {
    pub(crate) fn create(state: &Path, id: &str, project: &str) -> LiveLog {
        let id = SessionId::parse(id).unwrap();
        let writer = LogWriter::create(&StateDir::at(state), &id).unwrap();
        let mut log = LiveLog { writer };
        log.open(&id, project);
        log
    }

    /// Takes over a log another owner let go of, as `chock run --adopt`
    /// does: lock it, carry on the ids, and append a new `session.open`.
    pub(crate) fn adopt(state: &Path, id: &str, project: &str) -> LiveLog {
        let id = SessionId::parse(id).unwrap();
        let writer = LogWriter::open(StateDir::at(state).log_path(&id)).unwrap();
        let mut log = LiveLog { writer };
        log.open(&id, project);
        log
    }

    fn open(&mut self, id: &SessionId, project: &str) {
        self.writer
            .append(SessionOpen {
                session_id: id.clone(),
                project: project.into(),
                model: "fake".into(),
                pid: std::process::id(),
                chock_version: "test".into(),
            })
            .unwrap();
    }

    /// Appends one event of type `kind` with the given JSON fields
    /// (`"a":1,"b":2`); returns its id.
    pub(crate) fn append(&mut self, kind: &str, fields: &str) -> u64 {
        let comma = if fields.is_empty() { "" } else { "," };
        let line =
            format!(r#"{{"id":1,"at":"2026-11-29T19:00:00Z","type":"{kind}"{comma}{fields}}}"#);
        let event = Event::parse(line.as_bytes()).unwrap();
        self.writer.append(event.body).unwrap().id.0
    }

    /// Ends the session and lets go of the log.
    pub(crate) fn end(mut self) -> u64 {
        self.append("session.end", r#""reason":"done","detail":"finished""#)
    }
}

/// Polls `check` until it holds or the deadline passes.
pub(crate) async fn wait_for<T>(what: &str, check: impl FnMut() -> Option<T>) -> T {
    chock_testkit::wait_for_async(Duration::from_secs(20), what, check).await
}

/// The ids of event lines.
pub(crate) fn ids(lines: &[String]) -> Vec<u64> {
    lines
        .iter()
        .map(|l| chock_control::EventLine::parse(l).unwrap().id)
        .collect()
}
