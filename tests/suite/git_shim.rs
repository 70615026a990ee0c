//! The git shim in a real session: every run_command whose first word is
//! git is sorted before it runs. Reading asks nobody and runs the real git
//! in the sandbox; a subcommand that changes only the workspace is decided
//! at its git.* name (shipped as allow) and runs; one that reaches another
//! host is decided and, even when permitted, is not run; an option the
//! shim cannot read is git.unknown.

use std::path::Path;

use chock_log::fold_log;
use chock_testkit::TempProject;
use serde_json::Value;

use super::kit::{commands_model, log_values, of_call, only_log, project_with, result_of, run_ok};

/// Runs one session in which the model runs each command (one turn each);
/// returns the log's events.
fn session(state: &Path, project: &TempProject, commands: &[(&str, &[&str])]) -> Vec<Value> {
    let _fake = commands_model(state, commands);
    run_ok(state, project.path(), "use git");
    let log = only_log(state);
    fold_log(&log).unwrap();
    log_values(&log)
}

#[test]
fn reading_asks_nobody_committing_is_allowed_and_fetching_is_not_run() {
    let state = tempfile::tempdir().unwrap();
    // A project rule permits git.fetch and refuses git.unknown, so nothing
    // waits for a person; git.commit needs no rule (shipped as allow).
    let project = project_with(&[("git.fetch", "allow"), ("git.unknown", "deny")]);
    let main_before = project.head();
    let hook = project.path().join(".git/hooks/post-commit");
    let hook_line = format!("echo 'touch /tmp/pwned' > {}", hook.display());
    let events = session(
        state.path(),
        &project,
        &[
            ("status", &["git", "status", "--short"]),
            ("touch", &["sh", "-c", "echo new > new.txt"]),
            ("add", &["git", "add", "new.txt"]),
            (
                "commit",
                &[
                    "git",
                    "-c",
                    "user.name=a",
                    "-c",
                    "user.email=a@b",
                    "commit",
                    "-m",
                    "new",
                ],
            ),
            (
                "commit2",
                &["git", "commit", "--allow-empty", "-m", "second"],
            ),
            ("fetch", &["git", "fetch", "origin"]),
            // Past the shim (sh -c), the sandbox is what stops these.
            ("main", &["sh", "-c", "git update-ref refs/heads/main HEAD"]),
            ("hook", &["sh", "-c", &hook_line]),
        ],
    );
    // Read only: no decision at all, and git ran.
    assert!(
        of_call(&events, "decision", "status").is_none(),
        "{events:#?}"
    );
    assert_eq!(result_of(&events, "status")["ok"], true, "{events:#?}");
    // git add: decided at git.add, allowed by the shipped rule, and run.
    let add = of_call(&events, "decision", "add").expect("a decision for git add");
    assert_eq!(add["action"], "git.add");
    assert_eq!(add["decision"], "allow");
    assert_eq!(result_of(&events, "add")["ok"], true, "{events:#?}");
    // -c is an option the shim does not read: git.unknown, refused here.
    let unknown = of_call(&events, "decision", "commit").unwrap();
    assert_eq!(unknown["action"], "git.unknown");
    assert_eq!(unknown["decision"], "deny");
    assert_eq!(result_of(&events, "commit")["ok"], false);
    assert!(of_call(&events, "tool.call", "commit").is_none());
    // A plain commit is git.commit, allowed, and it ran.
    let commit = of_call(&events, "decision", "commit2").unwrap();
    assert_eq!(commit["action"], "git.commit");
    assert_eq!(commit["decision"], "allow");
    let committed = result_of(&events, "commit2");
    assert_eq!(committed["ok"], true, "{committed}");
    // The commit is on the session's branch, with the file git add staged.
    let branch = workspace_branch(&events);
    let subject = project.run_git(&["log", "-1", "--format=%s", &branch]);
    assert_eq!(subject, "second\n");
    let files = project.run_git(&["ls-tree", "--name-only", &branch]);
    assert!(files.lines().any(|f| f == "new.txt"), "{files}");
    // Permitted, and still not run: the agent is told what is missing.
    let fetch = of_call(&events, "decision", "fetch").unwrap();
    assert_eq!(fetch["action"], "git.fetch");
    assert_eq!(fetch["decision"], "allow");
    let fetched = result_of(&events, "fetch");
    assert_eq!(fetched["ok"], false);
    assert!(
        fetched["output"].as_str().unwrap().contains("was not run"),
        "{fetched}"
    );
    assert!(of_call(&events, "tool.call", "fetch").is_none());
    // The person's branch and hooks are out of reach from inside: a
    // command's git works in the session's private git directory, where
    // moving `main` moves nothing of the person's.
    assert_eq!(
        project.head(),
        main_before,
        "the person's branch did not move"
    );
    assert_ne!(result_of(&events, "hook")["ok"], true);
    assert!(
        !hook.exists(),
        "a hook was written into the person's repository"
    );
}

/// The session branch named by the log's workspace.open.
fn workspace_branch(events: &[Value]) -> String {
    let open = events
        .iter()
        .find(|event| event["type"] == "workspace.open")
        .expect("a workspace.open");
    open["branch"].as_str().unwrap().to_owned()
}
