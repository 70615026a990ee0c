//! `chock gate stop-check --client NAME`: the pre-tool hook `chock sync`
//! wires into each agent client.
//!
//! It reads the client's hook input on stdin, finds the project the call
//! happens in, asks the stop reader, and answers in the client's own terms.
//! A refusal always puts `stopped: <reason>` on stderr; it exits 2 and adds
//! the client's JSON deny form on stdout where the client has one. Cline is
//! the exception on the exit code: it reads its decision from stdout and
//! documents exit 0 with `{"cancel": true}`. Input that is not JSON, or lacks
//! the fields the client documents, is refused too: a check that cannot tell
//! what it is looking at must not let the call through.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::agent::Agent;
use crate::decisions::{self, BlockReason, BlockSource, Line};
use crate::paths::StopPaths;
use crate::reader::{self, Caller, StopVerdict};

/// What the hook process must do: exit code and the bytes for each stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookOutcome {
    pub exit: u8,
    pub stdout: String,
    pub stderr: String,
}

/// The fields of a hook input the check uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookCall {
    /// Where the call happens; `None` when the client names no project.
    pub project: Option<PathBuf>,
    pub tool: String,
}

/// Pull the project and tool out of one client's documented hook input.
pub fn parse_input(client: Agent, input: &[u8]) -> Result<HookCall, String> {
    let value: Value =
        serde_json::from_slice(input).map_err(|e| format!("hook input is not JSON ({e})"))?;
    if !value.is_object() {
        return Err("hook input is not a JSON object".into());
    }
    let text = |v: &Value, field: &str| -> Result<String, String> {
        v.get(field)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| format!("hook input has no string field '{field}'"))
    };
    let require = |field: &str| -> Result<(), String> {
        value
            .get(field)
            .map(|_| ())
            .ok_or_else(|| format!("hook input has no field '{field}'"))
    };
    let first_root = |field: &str| -> Result<Option<PathBuf>, String> {
        let roots = value
            .get(field)
            .and_then(Value::as_array)
            .ok_or_else(|| format!("hook input has no array field '{field}'"))?;
        Ok(roots.first().and_then(Value::as_str).map(PathBuf::from))
    };
    match client {
        Agent::ClaudeCode | Agent::Codex | Agent::Gemini | Agent::Chock => {
            text(&value, "hook_event_name")?;
            require("tool_input")?;
            Ok(HookCall {
                project: Some(PathBuf::from(text(&value, "cwd")?)),
                tool: text(&value, "tool_name")?,
            })
        }
        Agent::Cursor => {
            text(&value, "hook_event_name")?;
            let tool = text(&value, "tool_name")?;
            let roots = first_root("workspace_roots")?;
            let cwd = value
                .get("cwd")
                .and_then(Value::as_str)
                .filter(|c| !c.is_empty())
                .map(PathBuf::from);
            Ok(HookCall {
                project: cwd.or(roots),
                tool,
            })
        }
        Agent::Goose => {
            text(&value, "event")?;
            text(&value, "session_id")?;
            let tool = text(&value, "tool_name")?;
            let project = value
                .get("working_dir")
                .and_then(Value::as_str)
                .map(PathBuf::from);
            Ok(HookCall { project, tool })
        }
        Agent::Cline => {
            text(&value, "hookName")?;
            text(&value, "taskId")?;
            let project = first_root("workspaceRoots")?;
            let inner = value
                .get("preToolUse")
                .ok_or("hook input has no field 'preToolUse'")?;
            Ok(HookCall {
                project,
                tool: text(inner, "toolName")?,
            })
        }
        Agent::Windsurf => {
            let action = text(&value, "agent_action_name")?;
            text(&value, "trajectory_id")?;
            let info = value
                .get("tool_info")
                .filter(|v| v.is_object())
                .ok_or("hook input has no object field 'tool_info'")?;
            let project = info
                .get("cwd")
                .and_then(Value::as_str)
                .map(PathBuf::from)
                .or_else(|| {
                    info.get("file_path")
                        .and_then(Value::as_str)
                        .map(Path::new)
                        .and_then(Path::parent)
                        .map(Path::to_path_buf)
                })
                .filter(|p| p.is_absolute());
            let tool = match info.get("mcp_tool_name").and_then(Value::as_str) {
                Some(name) => format!("{action}:{name}"),
                None => action,
            };
            Ok(HookCall { project, tool })
        }
        Agent::OpenCode => {
            let tool = text(&value, "tool")?;
            Ok(HookCall {
                project: Some(PathBuf::from(text(&value, "directory")?)),
                tool,
            })
        }
    }
}

/// Run the whole check for one hook call. `log` is the decision log path;
/// `None` when it could not be located (the refusal still happens).
pub fn run(client: Agent, input: &[u8], paths: &StopPaths, log: Option<&Path>) -> HookOutcome {
    let call = match parse_input(client, input) {
        Ok(call) => call,
        Err(problem) => {
            let message = format!(
                "refused: {problem}; chock cannot tell whether a stop is in force, so the call does not run"
            );
            return refuse(client, log, BlockReason::BadHookInput, None, message);
        }
    };
    let caller = Caller {
        project: call.project.as_deref(),
        agent: Some(client),
    };
    match reader::read(paths, &caller) {
        StopVerdict::Clear => allow(client),
        StopVerdict::Stopped(stopped) => refuse(
            client,
            log,
            BlockReason::Stopped,
            Some(call),
            stopped.to_string(),
        ),
    }
}

/// Refuses the call with `message` and logs the `block` line, saying on
/// stderr when the line could not be written.
fn refuse(
    client: Agent,
    log: Option<&Path>,
    reason: BlockReason,
    call: Option<HookCall>,
    message: String,
) -> HookOutcome {
    let mut outcome = deny(client, &message);
    let (action, project) = match call {
        Some(call) => (
            Some(call.tool),
            call.project.map(|p| p.display().to_string()),
        ),
        None => (None, None),
    };
    note_log(
        log,
        &mut outcome,
        Line::Block {
            at: decisions::now(),
            reason,
            source: BlockSource::StopCheck,
            agent: Some(client.name().into()),
            action,
            project,
            detail: message,
        },
    );
    outcome
}

fn note_log(log: Option<&Path>, outcome: &mut HookOutcome, line: Line) {
    let result = match log {
        Some(path) => decisions::append(path, &line).map_err(|e| e.to_string()),
        None => Err("the state directory could not be located".to_owned()),
    };
    if let Err(err) = result {
        outcome
            .stderr
            .push_str(&format!("chock: the refusal was not logged: {err}\n"));
    }
}

/// The answer that lets a call run.
pub fn allow(client: Agent) -> HookOutcome {
    let stdout = match client {
        // With failClosed, Cursor treats a hook that prints nothing as failed.
        Agent::Cursor => json!({"permission": "allow"}).to_string(),
        Agent::Cline => json!({"cancel": false}).to_string(),
        _ => String::new(),
    };
    HookOutcome {
        exit: 0,
        stdout: with_newline(stdout),
        stderr: String::new(),
    }
}

/// The answer that refuses a call with `message` (already `stopped: ...` or
/// `refused: ...`).
pub fn deny(client: Agent, message: &str) -> HookOutcome {
    let (exit, stdout) = match client {
        Agent::ClaudeCode | Agent::Codex | Agent::Chock => (
            2,
            json!({"hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": message,
            }})
            .to_string(),
        ),
        Agent::Gemini => (
            2,
            json!({"decision": "deny", "reason": message}).to_string(),
        ),
        Agent::Cursor => (
            2,
            json!({"permission": "deny", "user_message": message, "agent_message": message})
                .to_string(),
        ),
        Agent::Goose => (
            2,
            json!({"decision": "block", "reason": message}).to_string(),
        ),
        Agent::Cline => (
            0,
            json!({"cancel": true, "errorMessage": message}).to_string(),
        ),
        Agent::Windsurf | Agent::OpenCode => (2, String::new()),
    };
    HookOutcome {
        exit,
        stdout: with_newline(stdout),
        stderr: format!("{message}\n"),
    }
}

fn with_newline(mut text: String) -> String {
    if !text.is_empty() {
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_code_input_gives_cwd_and_tool() {
        let input = br#"{"session_id":"s","transcript_path":"/t","cwd":"/srv/shop","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}"#;
        let call = parse_input(Agent::ClaudeCode, input).unwrap();
        assert_eq!(
            call,
            HookCall {
                project: Some("/srv/shop".into()),
                tool: "Bash".into()
            }
        );
    }

    #[test]
    fn missing_fields_and_non_json_are_errors_for_every_client() {
        for client in Agent::ALL {
            assert!(parse_input(client, b"not json").is_err(), "{client}");
            assert!(parse_input(client, b"{}").is_err(), "{client}");
            assert!(parse_input(client, b"[1]").is_err(), "{client}");
        }
    }

    #[test]
    fn windsurf_takes_the_project_from_tool_info() {
        let input = br#"{"agent_action_name":"pre_read_code","trajectory_id":"t","execution_id":"e","timestamp":"x","tool_info":{"file_path":"/srv/shop/src/a.rs"}}"#;
        let call = parse_input(Agent::Windsurf, input).unwrap();
        assert_eq!(call.project, Some("/srv/shop/src".into()));
    }

    #[test]
    fn denials_always_carry_the_reason_on_stderr() {
        for client in Agent::ALL {
            let outcome = deny(client, "stopped: lunch");
            assert_eq!(outcome.stderr, "stopped: lunch\n");
            let expected_exit = if client == Agent::Cline { 0 } else { 2 };
            assert_eq!(outcome.exit, expected_exit, "{client}");
        }
    }
}
