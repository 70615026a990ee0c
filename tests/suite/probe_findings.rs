//! The rest of the sandbox probe's findings, each shown through the
//! binary: a command cannot read the person's message from pid 1's command
//! line; an apply names committed links that point outside the repository
//! and asks about them whatever the rule; the directories Chock makes in a
//! person's home are theirs alone.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use chock_log::StateDir;
use chock_testkit::{TempProject, Turn};
use serde_json::json;

use super::chock;
use super::kit::{
    assert_success, chock_out, commands_model, failed, fake_model, log_values, one_call_a_turn,
    only_log, project_with, result_of, run_ok, run_session, sessions,
};

/// A session of `project` on `message` whose one command is `script`, run
/// to its end; the command's output, which must have succeeded.
fn session_with(state: &Path, project: &TempProject, script: &str, message: &str) -> String {
    let _fake = commands_model(state, &[("c1", &["sh", "-c", script])]);
    run_ok(state, project.path(), message);
    let events = log_values(&only_log(state));
    let result = result_of(&events, "c1");
    assert_eq!(result["ok"], true, "{result}");
    result["output"].as_str().unwrap().to_owned()
}

#[test]
fn pid_1_inside_does_not_show_the_persons_message() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let secret = "the-persons-message-7f3a";
    let seen = session_with(
        state.path(),
        &project,
        "tr '\\0' ' ' < /proc/1/cmdline; echo; echo read-it",
        secret,
    );
    assert!(seen.contains("read-it"), "{seen}");
    assert!(
        seen.contains("chock"),
        "the control: pid 1 is chock: {seen}"
    );
    assert!(!seen.contains(secret), "{seen}");
    assert!(!seen.contains(" run "), "{seen}");
}

#[test]
fn an_apply_names_links_out_of_the_repository_and_asks_even_where_allowed() {
    let state = tempfile::tempdir().unwrap();
    let project = project_with(&[("workspace.apply", "allow")]);
    session_with(
        state.path(),
        &project,
        "ln -s /etc/passwd passwd && ln -s ../../outside up && ln -s docs/a inside && git add -A && git commit -qm links",
        "make links",
    );
    let sid = sessions(state.path()).remove(0).as_str().to_owned();
    let out = chock(state.path())
        .args(["workspace", "apply", &sid])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("passwd -> /etc/passwd"), "{stderr}");
    assert!(stderr.contains("up -> ../../outside"), "{stderr}");
    assert!(!stderr.contains("inside -> docs/a"), "{stderr}");
    assert!(stderr.contains("nobody is at a terminal"), "{stderr}");
    assert!(!project.join("passwd").exists(), "nothing landed");
    assert_success(&chock_out(
        state.path(),
        &["workspace", "apply", "--yes", &sid],
    ));
    assert!(project.join("passwd").is_symlink());
}

#[test]
fn the_directories_chock_makes_in_a_home_are_private() {
    let home = tempfile::tempdir().unwrap();
    let repo = TempProject::git();
    for args in [
        vec!["sessions"],
        vec!["stop", "--reason", "x"],
        vec!["decisions"],
    ] {
        let out = std::process::Command::new(super::chock_bin())
            .args(&args)
            .current_dir(repo.path())
            .env("HOME", home.path())
            .env_remove("XDG_STATE_HOME")
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("CHOCK_STATE_DIR")
            .output()
            .unwrap();
        assert!(out.status.code().is_some(), "{args:?}");
    }
    for dir in [
        ".local",
        ".local/state",
        ".local/state/chock",
        ".chock",
        ".chock/stops",
    ] {
        let path = home.path().join(dir);
        let mode = std::fs::metadata(&path)
            .unwrap_or_else(|e| panic!("{dir}: {e}"))
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o700, "{dir}");
    }
}

#[test]
fn the_workspace_is_mounted_at_a_neutral_path_that_the_file_tools_take_too() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let _fake = fake_model(
        state.path(),
        one_call_a_turn(&[
            (
                "c1",
                "run_command",
                json!({ "command": ["sh", "-c", "pwd; echo made > made.txt; awk '{print \"mount point \" $5}' /proc/self/mountinfo"] }),
            ),
            ("r1", "read_file", json!({ "path": "/workspace/made.txt" })),
        ]),
    );
    run_ok(state.path(), project.path(), "look around");
    let id = sessions(state.path()).remove(0);
    let events = log_values(&StateDir::at(state.path()).log_path(&id));
    let seen = result_of(&events, "c1")["output"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(seen.contains("\n/workspace\n"), "pwd: {seen}");
    let points: Vec<&str> = seen
        .lines()
        .filter_map(|l| l.strip_prefix("mount point "))
        .collect();
    assert!(points.contains(&"/workspace"), "{seen}");
    for host in [
        state.path().to_str().unwrap(),
        project.path().to_str().unwrap(),
        id.as_str(),
    ] {
        assert!(
            !points.iter().any(|p| p.contains(host)),
            "a mount point names {host}: {points:?}"
        );
    }
    let read = result_of(&events, "r1");
    assert_eq!(read["ok"], true, "{read}");
    assert!(read["output"].as_str().unwrap().contains("made"), "{read}");
}

#[test]
fn an_operator_config_every_user_can_write_is_refused_before_any_session() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let fake = fake_model(state.path(), [Turn::text("never").into()]);
    let config = state.path().join("config/chock/config.zon");
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o666)).unwrap();
    let stderr = failed(&run_session(state.path(), project.path(), "hi"));
    assert!(stderr.contains("can be written by every user"), "{stderr}");
    assert!(stderr.contains("chmod o-w"), "{stderr}");
    assert_eq!(
        stderr.matches("can be written").count(),
        1,
        "said once: {stderr}"
    );
    assert!(sessions(state.path()).is_empty());
    assert!(fake.requests().is_empty());
    // Put right, it runs.
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o644)).unwrap();
    run_ok(state.path(), project.path(), "hi");
}
