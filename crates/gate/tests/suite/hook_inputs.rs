//! The stop check fed each client's documented hook input, with and without a
//! stop, and bad input that must be refused.

use std::fs;
use std::path::Path;

use chock_gate::hookcheck::run;
use chock_gate::repo::discover;
use chock_gate::stopfile::{Scope, StopFile, write_repo_stop};
use chock_gate::{Agent, StopPaths};
use serde_json::Value;

use super::repo;

/// Each client's documented pre-tool input, with `{cwd}` for the project.
fn documented_input(client: Agent) -> &'static str {
    match client {
        Agent::ClaudeCode => {
            r#"{"session_id":"abc","transcript_path":"/tmp/t.jsonl","cwd":"{cwd}","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"{cwd}/README"},"tool_use_id":"toolu_1"}"#
        }
        Agent::Codex => {
            r#"{"session_id":"s","transcript_path":null,"cwd":"{cwd}","hook_event_name":"PreToolUse","model":"gpt-5","turn_id":"t1","tool_name":"shell","tool_input":{"command":["echo","hi"]}}"#
        }
        Agent::Gemini => {
            r#"{"session_id":"s","transcript_path":"/tmp/t","cwd":"{cwd}","hook_event_name":"BeforeTool","timestamp":"2026-11-29T12:00:00Z","tool_name":"read_file","tool_input":{"absolute_path":"{cwd}/README"},"mcp_context":null}"#
        }
        Agent::Cursor => {
            r#"{"conversation_id":"c","generation_id":"g","hook_event_name":"preToolUse","tool_name":"Shell","tool_input":{"command":"ls"},"workspace_roots":["{cwd}"]}"#
        }
        Agent::Goose => {
            r#"{"event":"PreToolUse","session_id":"abc-123","matcher_context":"developer__shell","tool_name":"developer__shell","tool_input":{"command":"rg TODO"},"working_dir":"{cwd}","tool_call_id":"call_1"}"#
        }
        Agent::Cline => {
            r#"{"clineVersion":"3.40.0","hookName":"PreToolUse","timestamp":"1764417600000","taskId":"t","workspaceRoots":["{cwd}"],"userId":"u","preToolUse":{"toolName":"read_file","parameters":{"path":"README"}}}"#
        }
        Agent::Windsurf => {
            r#"{"agent_action_name":"pre_run_command","trajectory_id":"tr","execution_id":"ex","timestamp":"2026-11-29T12:00:00Z","tool_info":{"command_line":"ls","cwd":"{cwd}"}}"#
        }
        Agent::OpenCode => {
            r#"{"tool":"read","session_id":"ses_1","directory":"{cwd}","args":{"filePath":"README"}}"#
        }
        Agent::Chock => unreachable!("chock sessions call the reader directly"),
    }
}

struct World {
    _root: tempfile::TempDir,
    paths: StopPaths,
    main: std::path::PathBuf,
    log: std::path::PathBuf,
}

fn world() -> World {
    let root = tempfile::tempdir().unwrap();
    let main = repo(root.path(), "shop");
    let paths = StopPaths::under_home(&root.path().join("home"));
    let log = root.path().join("state/decisions.jsonl");
    World {
        _root: root,
        paths,
        main,
        log,
    }
}

fn input(client: Agent, cwd: &Path) -> Vec<u8> {
    documented_input(client)
        .replace("{cwd}", cwd.to_str().unwrap())
        .into_bytes()
}

fn stop_repo(w: &World) {
    let repo = discover(&w.main).unwrap().unwrap();
    let stop = StopFile {
        version: 1,
        scope: Scope::Repo,
        reason: "deploy freeze".into(),
        who: "ada@example.org".into(),
        when: "2026-11-29T12:00:00Z".into(),
        repo: None,
        agent: None,
    };
    write_repo_stop(&w.paths, &repo, &stop).unwrap();
}

#[test]
fn documented_inputs_pass_when_no_stop_is_in_force() {
    let w = world();
    for &client in chock_gate::sync::CLIENTS {
        let out = run(client, &input(client, &w.main), &w.paths, Some(&w.log));
        assert_eq!(out.exit, 0, "{client}: {out:?}");
        assert_eq!(out.stderr, "", "{client}");
        match client {
            Agent::Cursor => assert_eq!(out.stdout, "{\"permission\":\"allow\"}\n"),
            Agent::Cline => assert_eq!(out.stdout, "{\"cancel\":false}\n"),
            _ => assert_eq!(out.stdout, "", "{client}"),
        }
    }
    assert!(!w.log.exists(), "nothing refused, nothing logged");
}

#[test]
fn documented_inputs_are_refused_in_each_clients_terms_while_stopped() {
    let w = world();
    stop_repo(&w);
    for &client in chock_gate::sync::CLIENTS {
        let out = run(client, &input(client, &w.main), &w.paths, Some(&w.log));
        assert!(
            out.stderr.starts_with("stopped: deploy freeze"),
            "{client}: {out:?}"
        );
        let json = || serde_json::from_str::<Value>(out.stdout.trim()).unwrap();
        match client {
            Agent::ClaudeCode | Agent::Codex => {
                assert_eq!(out.exit, 2);
                assert_eq!(json()["hookSpecificOutput"]["permissionDecision"], "deny");
            }
            Agent::Gemini => {
                assert_eq!(out.exit, 2);
                assert_eq!(json()["decision"], "deny");
            }
            Agent::Cursor => {
                assert_eq!(out.exit, 2);
                assert_eq!(json()["permission"], "deny");
            }
            Agent::Goose => {
                assert_eq!(out.exit, 2);
                assert_eq!(json()["decision"], "block");
            }
            Agent::Cline => {
                assert_eq!(out.exit, 0);
                assert_eq!(json()["cancel"], true);
            }
            Agent::Windsurf | Agent::OpenCode => {
                assert_eq!(out.exit, 2);
                assert_eq!(out.stdout, "");
            }
            Agent::Chock => unreachable!(),
        }
    }
    let log = fs::read_to_string(&w.log).unwrap();
    let lines: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), chock_gate::sync::CLIENTS.len());
    for line in &lines {
        assert_eq!(line["type"], "block");
        assert_eq!(line["reason"], "stopped");
    }
}

#[test]
fn a_worktree_cwd_meets_the_main_checkouts_stop() {
    let w = world();
    let wt = w.main.parent().unwrap().join("shop-wt");
    super::git(
        &w.main,
        &["worktree", "add", "-q", "-b", "wt", wt.to_str().unwrap()],
    );
    stop_repo(&w);
    let out = run(
        Agent::ClaudeCode,
        &input(Agent::ClaudeCode, &wt),
        &w.paths,
        Some(&w.log),
    );
    assert_eq!(out.exit, 2, "{out:?}");
}

#[test]
fn non_json_and_missing_fields_are_refused_for_every_client_even_without_a_stop() {
    let w = world();
    for &client in chock_gate::sync::CLIENTS {
        let good: Value = serde_json::from_slice(&input(client, &w.main)).unwrap();
        let mut bad_inputs: Vec<Vec<u8>> = vec![
            b"".to_vec(),
            b"not json".to_vec(),
            b"[]".to_vec(),
            b"null".to_vec(),
        ];
        // Drop each top-level field the client documents as always present.
        for field in good.as_object().unwrap().keys() {
            let mut v = good.clone();
            v.as_object_mut().unwrap().remove(field);
            if chock_gate::hookcheck::parse_input(client, v.to_string().as_bytes()).is_err() {
                bad_inputs.push(v.to_string().into_bytes());
            }
        }
        assert!(
            bad_inputs.len() > 4,
            "{client}: some field must be required"
        );
        for bad in bad_inputs {
            let out = run(client, &bad, &w.paths, Some(&w.log));
            assert!(out.stderr.starts_with("refused: "), "{client}: {out:?}");
            let allowed = if client == Agent::Cline {
                out.stdout.contains("\"cancel\":false")
            } else {
                out.exit == 0
            };
            assert!(
                !allowed,
                "{client} allowed bad input {:?}",
                String::from_utf8_lossy(&bad)
            );
        }
    }
}
