//! The rest of the sandbox probe's findings, each shown through the
//! binary: a command cannot read the person's message from pid 1's command
//! line; an apply names committed links that point outside the repository
//! and asks about them whatever the rule; the directories Chock makes in a
//! person's home are theirs alone.

use std::os::unix::fs::PermissionsExt;

use chock_log::StateDir;
use chock_testkit::{FakeModel, TempProject, Turn, Wire};
use serde_json::json;

use super::chock;
use super::kit::{log_values, of_call, sessions, write_config};

fn session_with(
    state: &std::path::Path,
    project: &TempProject,
    script: &str,
    message: &str,
) -> String {
    let fake = FakeModel::with([
        Turn::text("")
            .call(
                "c1",
                "run_command",
                &json!({ "command": ["sh", "-c", script] }),
            )
            .into(),
        Turn::text("Done.").into(),
    ]);
    write_config(state, &fake.config_zon(Wire::OpenAi, "m"));
    run_ok(state, project, message);
    let id = sessions(state).remove(0);
    let events = log_values(&StateDir::at(state).log_path(&id));
    let result = of_call(&events, "tool.result", "c1").unwrap();
    assert_eq!(result["ok"], true, "{result}");
    let text = result["output"].as_str().unwrap().to_owned();
    drop(fake);
    text
}

/// `chock run` of `project` with `message`, which must succeed.
fn run_ok(state: &std::path::Path, project: &TempProject, message: &str) {
    let out = chock(state)
        .arg("run")
        .arg(project.path())
        .arg(message)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
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
    let project = TempProject::git();
    project.write_chock_zon(
        ".{ .policy = .{ .rules = .{ .{ .action = \"workspace.apply\", .decision = .allow } } } }\n",
    );
    project.commit_all("apply allowed");
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
    let out = chock(state.path())
        .args(["workspace", "apply", "--yes", &sid])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
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
    let fake = FakeModel::with([
        Turn::text("")
            .call(
                "c1",
                "run_command",
                &json!({ "command": ["sh", "-c", "pwd; echo made > made.txt; awk '{print \"mount point \" $5}' /proc/self/mountinfo"] }),
            )
            .into(),
        Turn::text("")
            .call("r1", "read_file", &json!({ "path": "/workspace/made.txt" }))
            .into(),
        Turn::text("Done.").into(),
    ]);
    write_config(state.path(), &fake.config_zon(Wire::OpenAi, "m"));
    run_ok(state.path(), &project, "look around");
    let id = sessions(state.path()).remove(0);
    let events = log_values(&StateDir::at(state.path()).log_path(&id));
    let seen = of_call(&events, "tool.result", "c1").unwrap()["output"]
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
    let read = of_call(&events, "tool.result", "r1").unwrap();
    assert_eq!(read["ok"], true, "{read}");
    assert!(read["output"].as_str().unwrap().contains("made"), "{read}");
}

#[test]
fn an_operator_config_every_user_can_write_is_refused_before_any_session() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let fake = FakeModel::with([Turn::text("never").into()]);
    write_config(state.path(), &fake.config_zon(Wire::OpenAi, "m"));
    let config = state.path().join("config/chock/config.zon");
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o666)).unwrap();
    let out = chock(state.path())
        .arg("run")
        .arg(project.path())
        .arg("hi")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
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
    run_ok(state.path(), &project, "hi");
}
