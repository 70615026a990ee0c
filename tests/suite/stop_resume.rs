//! `chock stop` and `chock resume` as a person and as an agent, the resume
//! prompt answered on a real pseudo-terminal.

use std::path::Path;

use super::kit::assert_success;
use super::{Machine, on_a_terminal};

/// `chock <args>` as a person in `dir`, on a terminal that types `answer`
/// at the resume prompt: the exit code and the screen.
fn answer_on_pty(m: &Machine, dir: &Path, answer: &str, args: &[&str]) -> (i32, String) {
    let mut command = m.chock(dir);
    command.args(args);
    let out = on_a_terminal(&command, "to resume agents", answer);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn stop_writes_the_repo_file_and_registry_entry_and_logs_it() {
    let (m, repo) = Machine::with_shop();
    let out = m.run(&repo, &["stop", "--reason", "deploy freeze"]);
    assert_success(&out);
    let stop: serde_json::Value =
        serde_json::from_slice(&std::fs::read(repo.join(".chock/stop.json")).unwrap()).unwrap();
    assert_eq!(stop["scope"], "repo");
    assert_eq!(stop["reason"], "deploy freeze");
    assert_eq!(stop["who"], "ada@example.org");
    let registry: Vec<_> = std::fs::read_dir(m.home().join(".chock/stops"))
        .unwrap()
        .collect();
    assert_eq!(registry.len(), 1);
    let log = m.decisions();
    assert_eq!(log[0]["type"], "chock-stop");
    assert_eq!(log[0]["event"], "repo_stop");
    assert_eq!(log[0]["scope"], "repo");
}

#[test]
fn agent_with_everywhere_is_a_usage_error_and_unknown_agents_are_refused() {
    let (m, repo) = Machine::with_shop();
    let out = m.run(&repo, &["stop", "--everywhere", "--agent", "codex"]);
    assert_eq!(out.status.code(), Some(2));
    let out = m.run(&repo, &["stop", "--agent", "claude"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("known agents are"));
    assert!(!repo.join(".chock/stop.json").exists());
}

#[test]
fn stop_and_resume_refuse_an_agents_shell_and_log_the_refusal() {
    let (m, repo) = Machine::with_shop();
    for (verb, var) in [
        ("stop", "CLAUDECODE"),
        ("resume", "GEMINI_CLI"),
        ("stop", "CHOCK_SESSION"),
    ] {
        let out = m.chock(&repo).arg(verb).env(var, "1").output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{verb} {var}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("belongs to an agent") && err.contains(var),
            "{err}"
        );
    }
    assert!(!repo.join(".chock").exists());
    let log = m.decisions();
    assert_eq!(log.len(), 3);
    assert!(
        log.iter()
            .all(|l| l["type"] == "block" && l["reason"] == "person_only")
    );
}

#[test]
fn resume_without_a_terminal_is_refused_and_the_stop_stays() {
    let (m, repo) = Machine::with_shop();
    m.ok(&repo, &["stop"]);
    let out = m
        .chock(&repo)
        .arg("resume")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("TTY"));
    assert!(repo.join(".chock/stop.json").exists());
}

#[test]
fn resume_on_a_terminal_lifts_the_stop_only_when_the_name_is_typed() {
    let (m, repo) = Machine::with_shop();
    m.ok(&repo, &["stop", "--reason", "lunch"]);
    let (code, screen) = answer_on_pty(&m, &repo, "shpo", &["resume"]);
    assert_eq!(code, 1, "{screen}");
    assert!(
        repo.join(".chock/stop.json").exists(),
        "a wrong answer lifts nothing"
    );
    let (code, screen) = answer_on_pty(&m, &repo, "shop", &["resume"]);
    assert_eq!(code, 0, "{screen}");
    assert!(
        screen.contains("lunch"),
        "the prompt shows what is lifted: {screen}"
    );
    assert!(!repo.join(".chock/stop.json").exists());
    assert_eq!(
        std::fs::read_dir(m.home().join(".chock/stops"))
            .unwrap()
            .count(),
        0
    );
    let log = m.decisions();
    assert_eq!(log.last().unwrap()["event"], "repo_resume");
}

#[test]
fn resume_everywhere_asks_for_the_word_and_lifts_only_the_machine_wide_stop() {
    let (m, repo) = Machine::with_shop();
    m.ok(&repo, &["stop"]);
    m.ok(&repo, &["stop", "--everywhere", "--reason", "incident"]);
    assert!(m.home().join(".chock/stops/_everywhere.json").exists());
    let (code, screen) = answer_on_pty(&m, &repo, "shop", &["resume", "--everywhere"]);
    assert_eq!(code, 1, "the repository's name is not the word: {screen}");
    let (code, screen) = answer_on_pty(&m, &repo, "everywhere", &["resume", "--everywhere"]);
    assert_eq!(code, 0, "{screen}");
    assert!(!m.home().join(".chock/stops/_everywhere.json").exists());
    assert!(
        repo.join(".chock/stop.json").exists(),
        "the repository stop stays"
    );
}

#[test]
fn a_worktree_has_no_stop_of_its_own() {
    let (m, repo) = Machine::with_shop();
    let wt = m.root.path().join("shop-wt");
    super::git(
        &repo,
        &["worktree", "add", "-q", "-b", "wt", wt.to_str().unwrap()],
    );
    m.ok(&wt, &["stop", "--reason", "from the worktree"]);
    assert!(
        repo.join(".chock/stop.json").exists(),
        "the main checkout holds it"
    );
    assert!(!wt.join(".chock").exists());
    let (code, screen) = answer_on_pty(&m, &wt, "shop", &["resume"]);
    assert_eq!(
        code, 0,
        "the main checkout's name lifts it from the worktree: {screen}"
    );
    assert!(!repo.join(".chock/stop.json").exists());
}

#[test]
fn decisions_prints_every_line_and_json_prints_them_as_stored() {
    let (m, repo) = Machine::with_shop();
    m.ok(&repo, &["stop", "--reason", "lunch"]);
    let out = m.run(&repo, &["decisions"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("chock-stop") && text.contains("repo_stop") && text.contains("lunch"),
        "{text}"
    );
    let out = m.run(&repo, &["decisions", "--json"]);
    let line: serde_json::Value = serde_json::from_slice(out.stdout.trim_ascii()).unwrap();
    assert_eq!(line["type"], "chock-stop");
}

#[test]
fn decisions_follow_prints_lines_appended_later() {
    let (m, repo) = Machine::with_shop();
    let mut follower = m
        .chock(&repo)
        .args(["decisions", "--follow", "--json"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    m.ok(&repo, &["stop", "--reason", "later"]);
    let stdout = follower.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout).lines() {
            let _ = tx.send(line.unwrap());
        }
    });
    let line = rx
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("a followed line");
    assert!(line.contains("\"later\""), "{line}");
    follower.kill().unwrap();
    let _ = follower.wait();
}

#[test]
fn every_stop_subcommand_has_help_and_gate_is_hidden_from_the_tour() {
    let m = Machine::new();
    let top = m.run(m.root.path(), &["--help"]);
    let top = String::from_utf8_lossy(&top.stdout);
    assert!(
        top.contains("stop") && top.contains("resume") && top.contains("gateway"),
        "{top}"
    );
    assert!(
        !top.contains("\n  gate "),
        "gate is for hooks, not the tour: {top}"
    );
    for args in [
        &["stop", "--help"][..],
        &["resume", "--help"],
        &["sync", "--help"],
        &["gateway", "--help"],
        &["decisions", "--help"],
        &["gate", "stop-check", "--help"],
        &["gate", "git-check", "--help"],
    ] {
        let out = m.chock(m.root.path()).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stdout).len() > 200,
            "{args:?} says too little"
        );
    }
}
