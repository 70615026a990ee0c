//! `chock sync` through the binary: exit codes of `--check`, an invalid
//! config reported with its position.

use super::Machine;

#[test]
fn check_exits_3_until_everything_is_wired_and_0_after() {
    let (m, repo) = Machine::with_shop();
    let clients = [
        "--client",
        "claude-code",
        "--client",
        "cursor",
        "--client",
        "goose",
    ];
    let check = |extra: &[&str]| {
        m.chock(&repo)
            .args(["sync", "--check"])
            .args(clients)
            .args(extra)
            .output()
            .unwrap()
    };
    assert_eq!(check(&[]).status.code(), Some(3));
    let sync = m.chock(&repo).arg("sync").args(clients).output().unwrap();
    assert!(
        sync.status.success(),
        "{}",
        String::from_utf8_lossy(&sync.stdout)
    );
    let out = check(&[]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert_eq!(
        text.lines().filter(|l| l.ends_with("wired")).count(),
        5,
        "{text}"
    );
}

#[test]
fn gemini_project_install_is_pending_trust_until_user_level() {
    let (m, repo) = Machine::with_shop();
    m.ok(&repo, &["sync", "--client", "gemini", "--no-git"]);
    let out = m.run(
        &repo,
        &["sync", "--check", "--client", "gemini", "--no-git"],
    );
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stdout).contains("pending trust"));
    m.ok(
        &repo,
        &["sync", "--user-level", "--client", "gemini", "--no-git"],
    );
    let out = m.run(
        &repo,
        &[
            "sync",
            "--check",
            "--user-level",
            "--client",
            "gemini",
            "--no-git",
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines()
            .any(|l| l.starts_with("gemini") && l.contains(" user ") && l.ends_with("wired")),
        "{text}"
    );
}

#[test]
fn an_invalid_config_fails_the_sync_names_the_position_and_keeps_the_file() {
    let (m, repo) = Machine::with_shop();
    std::fs::create_dir_all(repo.join(".cursor")).unwrap();
    let broken = "{\n  \"version\": 1,\n  \"hooks\": {\n    \"preToolUse\": [\n  }\n}\n";
    std::fs::write(repo.join(".cursor/hooks.json"), broken).unwrap();
    let out = m.run(&repo, &["sync", "--client", "cursor", "--no-git"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("not valid JSON at line 5, column 3"),
        "{text}"
    );
    assert_eq!(
        std::fs::read_to_string(repo.join(".cursor/hooks.json")).unwrap(),
        broken
    );
}
