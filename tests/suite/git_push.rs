//! An approved `git push` in a real session: the real git in the sandbox
//! reaches a smart-HTTP server (basic auth, `git http-backend`) through the
//! session's router as allowed.test, and receives the person's credential,
//! kept by `credential.helper store` in a test HOME, only for that call and
//! only for that remote. The credential string is then looked for
//! everywhere the agent or the log could see it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use chock_testkit::{GitServer, TempProject};
use serde_json::Value;

use super::chock;
use super::kit::assert_success;
use super::kit::{commands_model, log_values, of_call, only_log};

const USER: &str = "pusher";
const SECRET: &str = "s3cret-token-9c1e-never-logged";
const RESOLVE: &str = "allowed.test=127.0.0.1,other.test=127.0.0.1";

/// A git project with rules for the push and the test hosts (and the
/// loopback address they resolve to), and remotes `origin`
/// (allowed.test) and `other` (other.test) on the server's `repo.git`.
fn project(push: &str, port: u16) -> TempProject {
    let project = TempProject::git();
    project.write_chock_zon(&format!(
        ".{{ .policy = .{{ .rules = .{{\n\
         \x20   .{{ .action = \"git.push\", .decision = .{push} }},\n\
         \x20   .{{ .action = \"net.connect.test.allowed\", .decision = .allow }},\n\
         \x20   .{{ .action = \"net.connect.test.other\", .decision = .allow }},\n\
         \x20   .{{ .action = \"net.connect.127.0.0.1\", .decision = .allow }},\n\
         }} }} }}\n"
    ));
    project.commit_all("push rules");
    for (name, host) in [("origin", "allowed.test"), ("other", "other.test")] {
        project.run_git(&[
            "remote",
            "add",
            name,
            &format!("http://{host}:{port}/repo.git"),
        ]);
    }
    project
}

/// A HOME whose git config keeps credentials in a store file holding the
/// person's credential for allowed.test only.
fn home(port: u16) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("git-credentials");
    std::fs::write(
        &store,
        format!("http://{USER}:{SECRET}@allowed.test:{port}\n"),
    )
    .unwrap();
    std::fs::write(
        home.path().join(".gitconfig"),
        format!(
            "[credential]\n\thelper = store --file={}\n",
            store.display()
        ),
    )
    .unwrap();
    home
}

/// A smart-HTTP server with `repo.git`, a project whose `git.push` rule is
/// the given decision with its remotes there, the person's HOME and a state
/// directory.
struct Pushing {
    state: tempfile::TempDir,
    home: tempfile::TempDir,
    project: TempProject,
    repo: PathBuf,
    server: GitServer,
    root: tempfile::TempDir,
}

impl Pushing {
    fn new(push: &str) -> Self {
        let root = tempfile::tempdir().unwrap();
        let server = GitServer::start(root.path(), USER, SECRET);
        let repo = server.create_repo("repo.git");
        Self {
            project: project(push, server.port()),
            home: home(server.port()),
            state: tempfile::tempdir().unwrap(),
            repo,
            server,
            root,
        }
    }

    /// [`session`] in this state directory and project, with this HOME.
    fn session(&self, commands: &[(&str, &[&str])]) -> (Vec<Value>, String) {
        session(self.state.path(), &self.project, self.home.path(), commands)
    }
}

/// Runs one session in which the model runs each command (one turn each)
/// with `home` as the person's HOME; returns the log's events and text.
fn session(
    state: &Path,
    project: &TempProject,
    home: &Path,
    commands: &[(&str, &[&str])],
) -> (Vec<Value>, String) {
    session_with(state, project, home, RESOLVE, &|_| {}, commands)
}

/// [`session`] with the test names `resolve` maps, and `extra` applied to
/// the `chock run` command (more of the person's environment).
pub(super) fn session_with(
    state: &Path,
    project: &TempProject,
    home: &Path,
    resolve: &str,
    extra: &dyn Fn(&mut Command),
    commands: &[(&str, &[&str])],
) -> (Vec<Value>, String) {
    let _fake = commands_model(state, commands);
    let mut cmd = chock(state);
    cmd.arg("run")
        .arg(project.path())
        .arg("push the work")
        .env("HOME", home)
        .env_remove("GIT_CONFIG_GLOBAL")
        .env("CHOCK_NET_RESOLVE", resolve)
        .stdin(Stdio::null());
    extra(&mut cmd);
    let out = cmd.output().unwrap();
    assert_success(&out);
    let log = only_log(state);
    (log_values(&log), std::fs::read_to_string(&log).unwrap())
}

pub(super) fn output<'a>(events: &'a [Value], call: &str) -> (bool, &'a str) {
    let result = of_call(events, "tool.result", call)
        .unwrap_or_else(|| panic!("no result for {call}: {events:#?}"));
    (
        result["ok"] == true,
        result["output"].as_str().unwrap_or_default(),
    )
}

/// Asserts that `call` failed and its output says every one of `says`;
/// returns the output.
pub(super) fn failed_saying<'a>(events: &'a [Value], call: &str, says: &[&str]) -> &'a str {
    let (ok, out) = output(events, call);
    assert!(!ok, "{call} succeeded: {out}");
    for part in says {
        assert!(out.contains(part), "{call}: {part:?} missing from {out}");
    }
    out
}

/// The per-call push directories left beside the session's log.
pub(super) fn push_dirs_left(state: &Path) -> Vec<String> {
    let session_dir = only_log(state).parent().unwrap().to_owned();
    std::fs::read_dir(&session_dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("push-"))
        .collect()
}

pub(super) fn server_ref(repo: &Path, name: &str) -> Option<String> {
    let out = Command::new("git")
        .args(["rev-parse", "--verify", "--quiet", name])
        .current_dir(repo)
        .output()
        .unwrap();
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

#[test]
fn an_approved_push_gets_the_persons_credential_for_that_call_and_that_remote_only() {
    let setup = Pushing::new("allow");
    let (events, log) = setup.session(&[
        ("push", &["git", "push", "origin", "HEAD:refs/heads/pushed"]),
        (
            "look",
            &[
                "sh",
                "-c",
                "env; cat /proc/self/mountinfo; ls -a /tmp; cat /tmp/* 2>/dev/null; true",
            ],
        ),
        ("other", &["git", "push", "other", "HEAD:refs/heads/other"]),
    ]);
    // The push was decided at git.push and landed on the server.
    let decision = of_call(&events, "decision", "push").expect("a decision for the push");
    assert_eq!(decision["action"], "git.push");
    let (ok, pushed) = output(&events, "push");
    assert!(ok, "{pushed}");
    assert_eq!(
        server_ref(&setup.repo, "refs/heads/pushed"),
        Some(setup.project.head()),
        "{pushed}"
    );
    assert!(
        setup
            .server
            .requests()
            .iter()
            .any(|r| r.authorized && r.method == "POST"),
        "{:?}",
        setup.server.requests()
    );
    // A later command in the same session sees no credential, no helper
    // and no socket: not in its environment, mounts or files.
    let (_, look) = output(&events, "look");
    assert!(look.contains("HOME=/tmp"), "{look}");
    for absent in [SECRET, "git-credential", "push-1", "credential.helper"] {
        assert!(
            !look.contains(absent),
            "{absent:?} visible to a later command: {look}"
        );
    }
    // other.test has no stored credential: the push fails with git's own
    // sentence, and nothing arrived authorized or landed.
    failed_saying(
        &events,
        "other",
        &["could not read Username for 'http://other.test:"],
    );
    assert_eq!(server_ref(&setup.repo, "refs/heads/other"), None);
    // The credential is nowhere in the log, and the per-call directory is gone.
    assert!(!log.contains(SECRET), "the credential is in the log");
    let left = push_dirs_left(setup.state.path());
    assert!(
        left.is_empty(),
        "per-call directories left behind: {left:?}"
    );
}

#[test]
fn a_push_the_policy_denies_never_contacts_the_server() {
    let setup = Pushing::new("deny");
    let (events, _) =
        setup.session(&[("push", &["git", "push", "origin", "HEAD:refs/heads/pushed"])]);
    let decision = of_call(&events, "decision", "push").expect("a decision for the push");
    assert_eq!(
        (decision["action"].as_str(), decision["decision"].as_str()),
        (Some("git.push"), Some("deny"))
    );
    let (ok, _) = output(&events, "push");
    assert!(!ok);
    assert!(
        of_call(&events, "tool.call", "push").is_none(),
        "{events:#?}"
    );
    assert_eq!(setup.server.requests(), Vec::new());
    assert_eq!(server_ref(&setup.repo, "refs/heads/pushed"), None);
}

/// The escape suite's push case (tests/suite/git_metadata.rs has the
/// rest): a command rewrites the remote and plants a credential helper and
/// an ssh command in the git config it can write, then pushes. The host
/// decides the push's remote and credential from the person's own config,
/// so nothing planted runs on the host and the rewritten remote gets no
/// credential.
#[test]
fn a_push_after_a_planted_remote_and_helper_runs_nothing_on_the_host() {
    let setup = Pushing::new("allow");
    let marker = setup.root.path().join("planted-ran");
    let m = marker.display();
    let plant = format!(
        "git config remote.origin.url http://other.test:{port}/repo.git && git config credential.helper '!touch {m} #' && git config core.sshCommand 'touch {m} #' && git config --get credential.helper",
        port = setup.server.port()
    );
    let (events, log) = setup.session(&[
        ("plant", &["sh", "-c", &plant]),
        ("push", &["git", "push", "origin", "HEAD:refs/heads/pushed"]),
    ]);
    let (ok, planted) = output(&events, "plant");
    assert!(
        ok && planted.contains("touch"),
        "the plant did not take: {planted}"
    );
    let (ok, pushed) = output(&events, "push");
    assert!(!ok, "the push to the rewritten remote succeeded: {pushed}");
    assert!(!marker.exists(), "a planted command ran on the host");
    assert_eq!(server_ref(&setup.repo, "refs/heads/pushed"), None);
    assert!(
        !setup.server.requests().iter().any(|r| r.authorized),
        "the rewritten remote got a credential: {:?}",
        setup.server.requests()
    );
    assert!(!log.contains(SECRET));
}
