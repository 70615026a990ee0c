//! The git dispatcher in a real repository: an agent's commit and push are
//! refused while a stop is in force, a person's pass, and hooks that were
//! there before still run.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::kit::assert_success;
use super::{Machine, git, git_cmd, path_with_chock};

fn commit(repo: &Path, agent_var: Option<&str>, state: &Path, home: &Path) -> std::process::Output {
    std::fs::write(
        repo.join("file.txt"),
        format!("{:?}\n", std::time::SystemTime::now()),
    )
    .unwrap();
    git(repo, &["add", "file.txt"]);
    let mut cmd = git_cmd(repo);
    cmd.args(["commit", "-q", "-m", "change"])
        .env("PATH", path_with_chock())
        .env("HOME", home)
        .env("CHOCK_STATE_DIR", state);
    if let Some(var) = agent_var {
        cmd.env(var, "1");
    }
    cmd.output().unwrap()
}

fn write_hook(path: &Path, body: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, body).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn an_agents_commit_is_refused_while_stopped_and_a_persons_passes_and_chained_hooks_run() {
    let (m, repo) = Machine::with_shop();
    let marker = m.root.path().join("chained-ran");
    write_hook(
        &repo.join(".git/hooks/pre-commit"),
        &format!("#!/bin/sh\necho ran >> {}\n", marker.display()),
    );
    let sync = m.run(&repo, &["sync", "--client", "claude-code"]);
    assert!(
        sync.status.success(),
        "{}",
        String::from_utf8_lossy(&sync.stdout)
    );
    assert!(
        repo.join(".git/hooks/pre-commit.chock-chained").exists(),
        "the old hook is kept"
    );

    // No stop: agent and person both commit, and the old hook runs each time.
    assert!(
        commit(&repo, Some("CLAUDECODE"), &m.state(), &m.home())
            .status
            .success()
    );
    assert!(commit(&repo, None, &m.state(), &m.home()).status.success());
    assert_eq!(std::fs::read_to_string(&marker).unwrap().lines().count(), 2);

    m.ok(&repo, &["stop", "--reason", "release review"]);
    for var in [
        "CLAUDECODE",
        "CODEX_THREAD_ID",
        "GEMINI_CLI",
        "CHOCK_SESSION",
    ] {
        let out = commit(&repo, Some(var), &m.state(), &m.home());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success(),
            "{var}: an agent's commit must be refused"
        );
        assert!(
            err.contains("stopped: release review") && err.contains(var),
            "{err}"
        );
    }
    let person = commit(&repo, None, &m.state(), &m.home());
    assert_success(&person);
    assert_eq!(
        std::fs::read_to_string(&marker).unwrap().lines().count(),
        3,
        "chained hook ran for the person"
    );
    let blocks = m.decisions_from("git");
    assert_eq!(blocks.len(), 4);
    assert_eq!(blocks[0]["action"], "git.pre-commit");
}

#[test]
fn core_hooks_path_is_honoured_and_an_agents_push_is_refused() {
    let (m, repo) = Machine::with_shop();
    let remote = m.root.path().join("remote.git");
    git(
        m.root.path(),
        &["init", "-q", "--bare", remote.to_str().unwrap()],
    );
    git(
        &repo,
        &["remote", "add", "origin", remote.to_str().unwrap()],
    );
    git(&repo, &["config", "core.hooksPath", ".githooks"]);
    let marker = m.root.path().join("push-hook-stdin");
    write_hook(
        &repo.join(".githooks/pre-push"),
        &format!("#!/bin/sh\ncat > {}\n", marker.display()),
    );
    let sync = m.run(&repo, &["sync", "--client", "claude-code"]);
    assert!(sync.status.success());
    assert!(repo.join(".githooks/pre-push.chock-chained").exists());
    m.ok(&repo, &["stop"]);
    let push = |agent: bool| {
        let mut cmd = git_cmd(&repo);
        cmd.args(["push", "-q", "origin", "main"])
            .env("PATH", path_with_chock())
            .env("HOME", m.home())
            .env("CHOCK_STATE_DIR", m.state());
        if agent {
            cmd.env("GEMINI_CLI", "1");
        }
        cmd.output().unwrap()
    };
    let out = push(true);
    assert!(!out.status.success(), "an agent's push is refused");
    assert!(String::from_utf8_lossy(&out.stderr).contains("pre-push"));
    let out = push(false);
    assert_success(&out);
    let refs = std::fs::read_to_string(&marker).unwrap();
    assert!(
        refs.contains("refs/heads/main"),
        "the chained hook got git's stdin: {refs:?}"
    );
}

#[test]
fn a_worktree_commit_meets_the_main_checkouts_stop() {
    let (m, repo) = Machine::with_shop();
    m.ok(&repo, &["sync", "--client", "cursor"]);
    let wt = m.root.path().join("shop-wt");
    git(
        &repo,
        &["worktree", "add", "-q", "-b", "wt", wt.to_str().unwrap()],
    );
    m.ok(&repo, &["stop"]);
    let out = commit(&wt, Some("CURSOR_AGENT"), &m.state(), &m.home());
    assert!(
        !out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
