//! An approved `git push` to an ssh remote in a real session: a test sshd
//! (Debian's openssh-server, run as the current user on a free loopback
//! port with its own host key), a test ssh-agent holding the one key the
//! server accepts, and a person's HOME whose known_hosts holds the server's
//! host key as `[allowed.test]:<port>`. The real git and ssh run in the
//! sandbox; the connection goes through the session's router.

use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use chock_testkit::TempProject;
use serde_json::Value;

use super::git_push::{failed_saying, output, push_dirs_left, server_ref, session_with};

const RESOLVE: &str = "allowed.test=127.0.0.1,unknown.test=127.0.0.1,denied.test=127.0.0.1";

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn wait_for(what: &str, mut ready: impl FnMut() -> bool) {
    chock_testkit::wait_for(Duration::from_secs(20), what, || ready().then_some(()));
}

/// sshd on 127.0.0.1 and an ssh-agent holding the accepted key, both
/// killed at drop; `repo.git` is the bare repository pushes go to.
struct SshServer {
    dir: tempfile::TempDir,
    sshd: Child,
    agent: Child,
    port: u16,
}

impl SshServer {
    fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for key in ["host_key", "user_key"] {
            run(Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-C", key, "-f"])
                .arg(d.join(key)));
        }
        std::fs::copy(d.join("user_key.pub"), d.join("authorized_keys")).unwrap();
        run(Command::new("git")
            .args(["init", "-q", "--bare"])
            .arg(d.join("repo.git")));
        // sshd refuses to start as root without its privilege-separation directory.
        let _ = std::fs::create_dir_all("/run/sshd");
        let port = super::run_network::free_port();
        std::fs::write(
            d.join("sshd_config"),
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {}\nAuthorizedKeysFile {}\n\
                 PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n\
                 StrictModes no\nPidFile none\nPermitRootLogin prohibit-password\n",
                d.join("host_key").display(),
                d.join("authorized_keys").display()
            ),
        )
        .unwrap();
        let sshd = Command::new("/usr/sbin/sshd")
            .args(["-D", "-e", "-f"])
            .arg(d.join("sshd_config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(d.join("sshd.log")).unwrap())
            .spawn()
            .unwrap();
        let agent = Command::new("ssh-agent")
            .arg("-D")
            .arg("-a")
            .arg(d.join("agent.sock"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let server = Self {
            dir,
            sshd,
            agent,
            port,
        };
        wait_for("sshd", || TcpStream::connect(("127.0.0.1", port)).is_ok());
        wait_for("ssh-agent", || server.agent_socket().exists());
        run(Command::new("ssh-add")
            .arg("-q")
            .arg(server.dir.path().join("user_key"))
            .env("SSH_AUTH_SOCK", server.agent_socket()));
        server
    }

    fn agent_socket(&self) -> PathBuf {
        self.dir.path().join("agent.sock")
    }

    fn repo(&self) -> PathBuf {
        self.dir.path().join("repo.git")
    }

    fn url(&self, host: &str) -> String {
        format!("ssh://{host}:{}{}", self.port, self.repo().display())
    }

    /// The server's host key as a known_hosts line for `host`.
    fn known_host(&self, host: &str) -> String {
        let key = std::fs::read_to_string(self.dir.path().join("host_key.pub")).unwrap();
        let mut parts = key.split_whitespace();
        let (kind, body) = (parts.next().unwrap(), parts.next().unwrap());
        format!("[{host}]:{} {kind} {body}\n", self.port)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("sshd.log")).unwrap_or_default()
    }
}

impl Drop for SshServer {
    fn drop(&mut self) {
        for child in [&mut self.sshd, &mut self.agent] {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A git project whose rules permit the push and allowed.test and
/// unknown.test, deny denied.test, with a remote for each host and `forge`
/// (an alias in the person's ssh config for allowed.test).
fn project(server: &SshServer) -> TempProject {
    let project = TempProject::git();
    project.write_chock_zon(
        ".{ .policy = .{ .rules = .{\n\
         \x20   .{ .action = \"git.push\", .decision = .allow },\n\
         \x20   .{ .action = \"net.connect.test.allowed\", .decision = .allow },\n\
         \x20   .{ .action = \"net.connect.test.unknown\", .decision = .allow },\n\
         \x20   .{ .action = \"net.connect.test.denied\", .decision = .deny },\n\
         \x20   .{ .action = \"net.connect.127.0.0.1\", .decision = .allow },\n\
         } } }\n",
    );
    project.commit_all("push rules");
    for host in ["allowed", "unknown", "denied"] {
        project.run_git(&["remote", "add", host, &server.url(&format!("{host}.test"))]);
    }
    let scp = format!("forge:{}", server.repo().display());
    project.run_git(&["remote", "add", "forge", &scp]);
    project
}

/// The person's HOME: known_hosts with the server's key for allowed.test
/// only, and an ssh config naming `forge`.
fn home(server: &SshServer) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let ssh = home.path().join(".ssh");
    std::fs::create_dir(&ssh).unwrap();
    std::fs::write(ssh.join("known_hosts"), server.known_host("allowed.test")).unwrap();
    std::fs::write(
        ssh.join("config"),
        format!(
            "Host forge\n  HostName allowed.test\n  Port {}\n",
            server.port
        ),
    )
    .unwrap();
    home
}

/// Runs one session of `commands` in [`project`] with [`home`], handed the
/// server's agent as `SSH_AUTH_SOCK` if `with_agent` (else none); returns
/// the project, the state directory and the log's events.
fn ssh_session(
    server: &SshServer,
    with_agent: bool,
    commands: &[(&str, &[&str])],
) -> (TempProject, tempfile::TempDir, Vec<Value>) {
    let project = project(server);
    let home = home(server);
    let state = tempfile::tempdir().unwrap();
    let agent = server.agent_socket();
    let (events, _) = session_with(
        state.path(),
        &project,
        home.path(),
        RESOLVE,
        &|cmd| {
            if with_agent {
                cmd.env("SSH_AUTH_SOCK", &agent);
            } else {
                cmd.env_remove("SSH_AUTH_SOCK");
            }
        },
        commands,
    );
    (project, state, events)
}

#[test]
fn an_approved_push_over_ssh_lands_with_the_persons_agent_and_known_hosts() {
    let server = SshServer::start();
    let (project, state, events) = ssh_session(
        &server,
        true,
        &[
            (
                "push",
                &["git", "push", "allowed", "HEAD:refs/heads/pushed"],
            ),
            ("alias", &["git", "push", "forge", "HEAD:refs/heads/alias"]),
            ("look", &["sh", "-c", "env; ls -a /tmp; true"]),
        ],
    );
    let (ok, pushed) = output(&events, "push");
    assert!(ok, "{pushed}\nsshd: {}", server.log());
    assert_eq!(
        server_ref(&server.repo(), "refs/heads/pushed"),
        Some(project.head())
    );
    // A remote named by an alias in the person's ssh config reaches the
    // host the alias names.
    let (ok, alias) = output(&events, "alias");
    assert!(ok, "{alias}\nsshd: {}", server.log());
    assert_eq!(
        server_ref(&server.repo(), "refs/heads/alias"),
        Some(project.head())
    );
    // A later command has neither the agent nor the route, and the
    // per-call directories (with the agent sockets) are gone.
    let (_, look) = output(&events, "look");
    for absent in ["SSH_AUTH_SOCK", "GIT_SSH_COMMAND", "ssh-connect"] {
        assert!(!look.contains(absent), "{absent:?} visible later: {look}");
    }
    assert_eq!(push_dirs_left(state.path()), Vec::<String>::new());
}

#[test]
fn an_unknown_host_key_a_denied_host_and_a_missing_agent_each_fail_with_a_clear_sentence() {
    let server = SshServer::start();
    let (_project, state, events) = ssh_session(
        &server,
        false,
        &[
            (
                "unknown",
                &["git", "push", "unknown", "HEAD:refs/heads/unknown"],
            ),
            (
                "denied",
                &["git", "push", "denied", "HEAD:refs/heads/denied"],
            ),
            (
                "noagent",
                &["git", "push", "allowed", "HEAD:refs/heads/noagent"],
            ),
        ],
    );
    failed_saying(
        &events,
        "unknown",
        &[
            "Host key verification failed",
            &format!(
                "the host key of unknown.test:{} is not in the person's known_hosts",
                server.port
            ),
            "connect to it once themselves",
        ],
    );
    failed_saying(
        &events,
        "denied",
        &[
            &format!("the router refused denied.test:{}", server.port),
            "net.connect.test.denied refused",
        ],
    );
    failed_saying(
        &events,
        "noagent",
        &["Permission denied", "no ssh agent was handed to this push"],
    );
    for name in ["unknown", "denied", "noagent"] {
        assert_eq!(
            server_ref(&server.repo(), &format!("refs/heads/{name}")),
            None
        );
    }
    assert_eq!(push_dirs_left(state.path()), Vec::<String>::new());
}
