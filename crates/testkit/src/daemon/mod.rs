//! A daemon in a temporary state directory, for the tests of the daemon and
//! of everything that talks to it: the directories a session lives in, a
//! stand-in `chock run` for the daemon to spawn, a daemon booted on the
//! test's runtime, raw protocol exchanges with it, and a session log the
//! test writes itself while holding its lock ([`LiveLog`]).

mod live_log;

use std::fs::File;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use chock_control::{Address, Client};
use chock_daemon::{Config, Daemon};
use tempfile::TempDir;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;

use crate::background::{Serving, serve_in_background};

pub use live_log::LiveLog;

/// The greeting every exchange of the control protocol opens with.
pub const GREETING: &[u8] = b"hello chock-control 1\n";

/// Session ids for logs a test writes itself, oldest first.
pub const S1: &str = "20261129-190000-001-00000001";
/// The second of the fixed session ids.
pub const S2: &str = "20261129-190000-002-00000002";
/// The third of the fixed session ids.
pub const S3: &str = "20261129-190000-003-00000003";

/// How long a harness waits for a reply, a close or a child before the
/// test fails.
const PATIENCE: Duration = Duration::from_secs(30);

/// How long [`eventually`] waits for its condition.
const EVENTUALLY: Duration = Duration::from_secs(20);

/// Polls the async `probe` until it finds something, or panics naming
/// `what` after 20 s: for a daemon or a server to get to some state.
pub async fn eventually<T, F>(what: &str, probe: impl FnMut() -> F) -> T
where
    F: Future<Output = Option<T>>,
{
    crate::wait_for_async_probe(EVENTUALLY, what, probe).await
}

/// What the stand-in `chock run` does once it holds its session's log. A
/// session started with the message `behave:<name>` does what `<name>`
/// says instead, so one daemon can run sessions of several behaviours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StandIn {
    /// Asks `r1` ("push?") when started with a message, takes any number of
    /// answers, and ends when [`TestDirs::release`] lets it (`finish`
    /// behaviour: `ends-on-release`).
    EndsOnRelease,
    /// Titles itself, asks `r1` ("Run git push origin main?"), and ends
    /// once it is answered, saying whether it pushed (`ends-on-answer`).
    EndsOnAnswer,
    /// Asks nothing and ends at once (`quiet`).
    Quiet,
    /// Hangs after opening its log until it is killed (`crash`).
    Crash,
    /// Exits 3 before writing anything (`exit-early`).
    ExitEarly,
}

impl StandIn {
    /// The behaviour's name, as a `behave:<name>` message gives it.
    pub fn name(self) -> &'static str {
        match self {
            StandIn::EndsOnRelease => "ends-on-release",
            StandIn::EndsOnAnswer => "ends-on-answer",
            StandIn::Quiet => "quiet",
            StandIn::Crash => "crash",
            StandIn::ExitEarly => "exit-early",
        }
    }

    /// Writes the stand-in `chock` executable into `dir`, with this as the
    /// behaviour of its sessions; its path.
    pub fn install(self, dir: &Path) -> PathBuf {
        let script = include_str!("fake_chock.py").replace("@BEHAVIOUR@", self.name());
        let path = dir.join(format!("fake-chock-{}", self.name()));
        std::fs::write(&path, script)
            .unwrap_or_else(|err| panic!("cannot write {}: {err}", path.display()));
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
            .unwrap_or_else(|err| panic!("cannot chmod {}: {err}", path.display()));
        path
    }
}

/// A temporary state directory and a temporary project directory, both
/// deleted when the test ends. What a test does with them is in
/// [`HasTestDirs`].
#[derive(Debug)]
pub struct TestDirs {
    state: TempDir,
    project: TempDir,
}

impl TestDirs {
    /// Two fresh, empty directories.
    pub fn new() -> TestDirs {
        TestDirs {
            state: temp_dir("state"),
            project: temp_dir("project"),
        }
    }

    /// A daemon on the state directory whose sessions behave as `stand_in`
    /// says, with its configuration adjusted by `adjust` first.
    pub async fn start_daemon(
        &self,
        stand_in: StandIn,
        adjust: impl FnOnce(&mut Config),
    ) -> RunningDaemon {
        let chock = stand_in.install(self.state());
        let mut config = RunningDaemon::config(self.state(), chock);
        adjust(&mut config);
        RunningDaemon::start(config).await
    }
}

impl Default for TestDirs {
    fn default() -> Self {
        TestDirs::new()
    }
}

fn temp_dir(what: &str) -> TempDir {
    tempfile::tempdir().unwrap_or_else(|err| panic!("cannot make a temporary {what} dir: {err}"))
}

/// Whatever holds [`TestDirs`]: the directories themselves, a
/// [`TestDaemon`], or a test's own harness built on them. Everything but
/// [`HasTestDirs::test_dirs`] comes with the trait.
pub trait HasTestDirs {
    /// The directories.
    fn test_dirs(&self) -> &TestDirs;

    /// The state directory: session logs live under `sessions/`.
    fn state(&self) -> &Path {
        self.test_dirs().state.path()
    }

    /// The project directory, resolved, as the daemon names it.
    fn project(&self) -> PathBuf {
        let path = self.test_dirs().project.path();
        path.canonicalize()
            .unwrap_or_else(|err| panic!("cannot resolve {}: {err}", path.display()))
    }

    /// [`HasTestDirs::project`] as text, as the protocol sends it.
    fn project_text(&self) -> String {
        let project = self.project();
        project
            .to_str()
            .unwrap_or_else(|| panic!("{} is not UTF-8", project.display()))
            .to_owned()
    }

    /// The directory of session `id` in the state directory.
    fn session_dir(&self, id: &str) -> PathBuf {
        self.state().join("sessions").join(id)
    }

    /// The log of session `id`.
    fn log_path(&self, id: &str) -> PathBuf {
        self.session_dir(id).join("log.jsonl")
    }

    /// Lets a stand-in session of [`StandIn::EndsOnRelease`] finish its
    /// turn and end.
    fn release(&self, id: &str) {
        let path = self.session_dir(id).join("release");
        File::create(&path).unwrap_or_else(|err| panic!("cannot make {}: {err}", path.display()));
    }

    /// A log of session `id` in the project, which the test writes itself,
    /// holding the lock as an owner would.
    fn live_log(&self, id: &str) -> LiveLog {
        LiveLog::create(self.state(), id, &self.project_text())
    }
}

impl HasTestDirs for TestDirs {
    fn test_dirs(&self) -> &TestDirs {
        self
    }
}

/// A daemon serving on the test's tokio runtime until this is dropped.
#[derive(Debug)]
pub struct RunningDaemon {
    address: Address,
    _serving: Serving,
}

impl RunningDaemon {
    /// The configuration a test daemon runs with: sessions in `state`, run
    /// by the executable `chock`, no socket activation, and a generous
    /// deadline for a child to hold its log.
    pub fn config(state: &Path, chock: PathBuf) -> Config {
        let mut config = Config::new(state.to_owned(), chock);
        config.socket_activation = false;
        config.start_timeout = Duration::from_secs(20);
        config
    }

    /// Binds a daemon with `config` and serves it in the background.
    pub async fn start(config: Config) -> RunningDaemon {
        let daemon = Daemon::bind(config)
            .await
            .unwrap_or_else(|err| panic!("the daemon cannot bind: {err}"));
        let address = daemon.addresses().remove(0);
        let serving = serve_in_background(|stopped| daemon.serve(stopped));
        RunningDaemon {
            address,
            _serving: serving,
        }
    }

    /// Where it listens: its unix socket.
    pub fn address(&self) -> &Address {
        &self.address
    }
}

/// A daemon in a temporary state directory, with a project directory for
/// its sessions, whose sessions run a stand-in `chock run`.
#[derive(Debug)]
pub struct TestDaemon {
    dirs: TestDirs,
    daemon: RunningDaemon,
}

impl TestDaemon {
    /// A daemon whose sessions behave as `stand_in` says.
    pub async fn boot(stand_in: StandIn) -> TestDaemon {
        TestDaemon::boot_with(stand_in, |_| {}).await
    }

    /// [`TestDaemon::boot`], with the configuration adjusted first.
    pub async fn boot_with(stand_in: StandIn, adjust: impl FnOnce(&mut Config)) -> TestDaemon {
        let dirs = TestDirs::new();
        let daemon = dirs.start_daemon(stand_in, adjust).await;
        TestDaemon { dirs, daemon }
    }

    /// Where the daemon listens.
    pub fn address(&self) -> &Address {
        self.daemon.address()
    }

    /// The daemon's unix socket.
    pub fn socket(&self) -> PathBuf {
        match self.address() {
            Address::Unix(path) => path.clone(),
            Address::Tcp { .. } => unreachable!("a test daemon listens on a unix socket"),
        }
    }

    /// A client of the daemon, patient enough for a loaded machine.
    pub fn client(&self) -> Client {
        Client::new(self.address().clone()).with_timeout(PATIENCE)
    }

    /// Sends `input` raw, then reads every reply line until the daemon
    /// closes the connection.
    pub async fn raw(&self, input: &[u8]) -> Vec<String> {
        let socket = self.socket();
        let mut stream = UnixStream::connect(&socket)
            .await
            .unwrap_or_else(|err| panic!("cannot connect to {}: {err}", socket.display()));
        stream
            .write_all(input)
            .await
            .unwrap_or_else(|err| panic!("cannot send to the daemon: {err}"));
        read_all(&mut stream).await
    }
}

impl HasTestDirs for TestDaemon {
    fn test_dirs(&self) -> &TestDirs {
        &self.dirs
    }
}

/// Every line until the peer closes, bounded so that a hung daemon fails
/// the test.
pub async fn read_all(stream: &mut UnixStream) -> Vec<String> {
    let mut bytes = Vec::new();
    tokio::time::timeout(PATIENCE, stream.read_to_end(&mut bytes))
        .await
        .unwrap_or_else(|_| panic!("the daemon closes the connection after its reply"))
        .unwrap_or_else(|err| panic!("cannot read the daemon's reply: {err}"));
    String::from_utf8(bytes)
        .unwrap_or_else(|err| panic!("the daemon's reply is not UTF-8: {err}"))
        .lines()
        .map(str::to_owned)
        .collect()
}
