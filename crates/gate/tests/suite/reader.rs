//! Every stop file in every state: absent, valid, unparsable, a directory, a
//! symlink (unreadable needs a non-root reader and is covered end to end).

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use chock_gate::reader::{Caller, StopState, StopVerdict, read};
use chock_gate::repo::discover;
use chock_gate::stopfile::{Scope, StopFile, write_everywhere_stop, write_repo_stop};
use chock_gate::{Agent, StopPaths};

use super::repo;

struct World {
    _root: tempfile::TempDir,
    paths: StopPaths,
    main: PathBuf,
    worktree: PathBuf,
}

fn world() -> World {
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("home");
    fs::create_dir_all(&home).unwrap();
    let main = repo(root.path(), "shop");
    let worktree = root.path().join("shop-wt");
    super::git(
        &main,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "wt",
            worktree.to_str().unwrap(),
        ],
    );
    World {
        paths: StopPaths::under_home(&home),
        main,
        worktree,
        _root: root,
    }
}

fn stop(scope: Scope, agent: Option<&str>) -> StopFile {
    StopFile {
        version: 1,
        scope,
        reason: "lunch".into(),
        who: "ada@example.org".into(),
        when: "2026-11-29T12:00:00Z".into(),
        repo: None,
        agent: agent.map(str::to_owned),
    }
}

fn verdict(w: &World, project: Option<&Path>, agent: Option<Agent>) -> StopVerdict {
    read(&w.paths, &Caller { project, agent })
}

fn assert_stopped(v: &StopVerdict, needle: &str) {
    match v {
        StopVerdict::Stopped(s) => assert!(s.to_string().contains(needle), "{s}"),
        StopVerdict::Clear => panic!("expected a refusal containing {needle:?}"),
    }
}

/// The three places a stop can be, as (label, path) for the world's repo.
fn places(w: &World) -> Vec<(&'static str, PathBuf)> {
    let repo = discover(&w.main).unwrap().unwrap();
    vec![
        ("repo file", repo.stop_file()),
        ("registry entry", w.paths.entry_for(&repo.main_checkout)),
        ("everywhere", w.paths.everywhere()),
    ]
}

#[test]
fn absent_everywhere_is_clear_for_project_and_projectless_callers() {
    let w = world();
    assert_eq!(
        verdict(&w, Some(&w.main), Some(Agent::ClaudeCode)),
        StopVerdict::Clear
    );
    assert_eq!(verdict(&w, None, None), StopVerdict::Clear);
}

#[test]
fn a_valid_repo_stop_reaches_the_repo_its_worktrees_and_projectless_hooks_but_not_other_repos() {
    let w = world();
    let repo = discover(&w.main).unwrap().unwrap();
    write_repo_stop(&w.paths, &repo, &stop(Scope::Repo, None)).unwrap();
    assert_stopped(
        &verdict(&w, Some(&w.main), Some(Agent::Codex)),
        "stopped: lunch",
    );
    assert_stopped(
        &verdict(&w, Some(&w.worktree), Some(Agent::Codex)),
        "stopped: lunch",
    );
    assert_stopped(&verdict(&w, None, Some(Agent::Codex)), "stopped: lunch");
    let other = repo_in(&w, "other");
    assert_eq!(
        verdict(&w, Some(&other), Some(Agent::Codex)),
        StopVerdict::Clear
    );
    let mode = fs::metadata(w.paths.entry_for(&repo.main_checkout))
        .unwrap()
        .permissions();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
        0o600
    );
}

fn repo_in(w: &World, name: &str) -> PathBuf {
    repo(w.main.parent().unwrap(), name)
}

#[test]
fn deleting_the_repo_file_leaves_the_registry_entry_in_force() {
    let w = world();
    let repo = discover(&w.main).unwrap().unwrap();
    write_repo_stop(&w.paths, &repo, &stop(Scope::Repo, None)).unwrap();
    fs::remove_file(repo.stop_file()).unwrap();
    assert_stopped(
        &verdict(&w, Some(&w.main), Some(Agent::Gemini)),
        "stopped: lunch",
    );
}

#[test]
fn everywhere_reaches_every_repo_and_no_repo() {
    let w = world();
    write_everywhere_stop(&w.paths, &stop(Scope::Everywhere, None)).unwrap();
    let other = repo_in(&w, "other");
    for project in [
        Some(w.main.as_path()),
        Some(other.as_path()),
        Some(w.paths.registry.as_path()),
        None,
    ] {
        assert_stopped(
            &verdict(&w, project, Some(Agent::Cursor)),
            "resume --everywhere",
        );
    }
}

#[test]
fn an_agent_scoped_stop_reaches_only_that_agent_and_unknown_callers() {
    let w = world();
    let repo = discover(&w.main).unwrap().unwrap();
    write_repo_stop(&w.paths, &repo, &stop(Scope::Repo, Some("codex"))).unwrap();
    assert_stopped(&verdict(&w, Some(&w.main), Some(Agent::Codex)), "for codex");
    assert_eq!(
        verdict(&w, Some(&w.main), Some(Agent::ClaudeCode)),
        StopVerdict::Clear
    );
    assert_stopped(&verdict(&w, Some(&w.main), None), "for codex");
}

#[test]
fn unparsable_files_refuse_every_agent_in_every_place() {
    let w = world();
    for (label, path) in places(&w) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        for bytes in [&b"{not json"[..], b"", b"{\"scope\":\"repo\"}", b"[]"] {
            fs::write(&path, bytes).unwrap();
            for agent in [Some(Agent::ClaudeCode), None] {
                assert_stopped(&verdict(&w, Some(&w.main), agent), "cannot be parsed");
            }
            // A hook that names no project cannot know which repository's
            // `.chock/stop.json` applies; it reads the registry, where the
            // same stop is registered.
            if label != "repo file" {
                assert_stopped(&verdict(&w, None, Some(Agent::Goose)), "cannot be parsed");
            }
        }
        fs::remove_file(&path).unwrap();
        assert_eq!(
            verdict(&w, Some(&w.main), Some(Agent::Goose)),
            StopVerdict::Clear,
            "{label}"
        );
    }
}

#[test]
fn a_directory_in_place_of_a_stop_file_refuses() {
    let w = world();
    for (label, path) in places(&w) {
        fs::create_dir_all(&path).unwrap();
        assert_stopped(
            &verdict(&w, Some(&w.worktree), Some(Agent::Cline)),
            "not a regular file",
        );
        fs::remove_dir(&path).unwrap();
        assert_eq!(
            verdict(&w, Some(&w.main), Some(Agent::Cline)),
            StopVerdict::Clear,
            "{label}"
        );
    }
}

#[test]
fn a_symlink_refuses_whether_it_points_at_a_valid_stop_a_missing_file_or_nothing_useful() {
    let w = world();
    let target = w.main.parent().unwrap().join("elsewhere.json");
    fs::write(
        &target,
        serde_json::to_vec(&stop(Scope::Repo, None)).unwrap(),
    )
    .unwrap();
    for (label, path) in places(&w) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        for points_at in [target.clone(), target.with_extension("missing")] {
            symlink(&points_at, &path).unwrap();
            match verdict(&w, Some(&w.main), Some(Agent::Windsurf)) {
                StopVerdict::Stopped(s) => {
                    assert!(s.stops.iter().any(|stop| stop.source == path
                        && matches!(&stop.state, StopState::Broken(d) if d.contains("symlink"))), "{label}: {s}");
                }
                StopVerdict::Clear => panic!("{label}: a symlink must never read as no stop"),
            }
            fs::remove_file(&path).unwrap();
        }
    }
}

#[test]
fn a_registry_that_is_a_file_refuses_projectless_callers() {
    let w = world();
    fs::create_dir_all(w.paths.registry.parent().unwrap()).unwrap();
    fs::write(&w.paths.registry, "oops").unwrap();
    assert_stopped(
        &verdict(&w, None, Some(Agent::OpenCode)),
        "so every agent is refused",
    );
    assert_stopped(
        &verdict(&w, Some(&w.main), Some(Agent::OpenCode)),
        "so every agent is refused",
    );
}

#[test]
fn a_stop_written_then_read_round_trips() {
    let w = world();
    let repo = discover(&w.main).unwrap().unwrap();
    let written = write_repo_stop(&w.paths, &repo, &stop(Scope::Repo, None)).unwrap();
    assert!(written.repo_file.is_file());
    // Written twice, the repository's own exclude file names it once.
    write_repo_stop(&w.paths, &repo, &stop(Scope::Repo, None)).unwrap();
    let exclude = fs::read_to_string(repo.common_dir.join("info/exclude")).unwrap();
    assert_eq!(exclude.matches("/.chock/stop.json").count(), 1, "{exclude}");
    // The stop is never committed and leaves no file of its own for git to
    // see: the work tree's status stays empty.
    assert!(!w.main.join(".chock/.gitignore").exists());
    let status = super::git(&w.main, &["status", "--porcelain", "--untracked-files=all"]);
    assert!(status.trim().is_empty(), "{status}");
}

#[test]
fn a_vanished_working_directory_is_read_as_a_call_with_no_project() {
    let w = world();
    let gone = w.main.join("deleted-subdir");
    assert_eq!(
        verdict(&w, Some(&gone), Some(Agent::ClaudeCode)),
        StopVerdict::Clear
    );
    let other = repo_in(&w, "other");
    let repo = discover(&other).unwrap().unwrap();
    write_repo_stop(&w.paths, &repo, &stop(Scope::Repo, None)).unwrap();
    // Any stopped repository refuses it: the reader cannot tell it is not that one.
    assert_stopped(
        &verdict(&w, Some(&gone), Some(Agent::ClaudeCode)),
        "stopped: lunch",
    );
}

#[test]
fn chock_sessions_check_and_log_through_the_exported_functions() {
    let w = world();
    assert!(chock_gate::check_stop_in(&w.paths, &w.worktree).is_ok());
    let repo = discover(&w.main).unwrap().unwrap();
    write_repo_stop(&w.paths, &repo, &stop(Scope::Repo, Some("chock"))).unwrap();
    let stopped = chock_gate::check_stop_in(&w.paths, &w.worktree).unwrap_err();
    assert!(stopped.to_string().starts_with("stopped: lunch"));
    let log = w.main.parent().unwrap().join("state/decisions.jsonl");
    chock_gate::log_session_block(&log, &w.worktree, "run_command", &stopped).unwrap();
    let line: serde_json::Value =
        serde_json::from_str(fs::read_to_string(&log).unwrap().trim()).unwrap();
    assert_eq!(line["source"], "session");
    assert_eq!(line["action"], "run_command");
}
