//! Where each client reads a pre-tool hook and what chock writes there.
//!
//! One table per client, so a client that moves its hooks is a change in one
//! place. Every entry has no matcher, so the stop check sees every call,
//! reads included, and is marked fail-closed where the client has a knob for
//! it (Claude Code `onFailure`, Cursor `failClosed`, goose `on_failure`).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::files::{self, JsonHooks, OwnedFile};
use super::{Level, Row, stop_check_command};
use crate::agent::Agent;

/// One file chock manages for one client at one level.
#[derive(Debug, Clone)]
pub struct Target {
    pub client: Agent,
    pub level: Level,
    pub kind: TargetKind,
}

#[derive(Debug, Clone)]
pub enum TargetKind {
    Json(JsonHooks),
    Owned(OwnedFile),
}

impl Target {
    pub fn path(&self) -> &Path {
        match &self.kind {
            TargetKind::Json(json) => &json.path,
            TargetKind::Owned(owned) => &owned.path,
        }
    }

    pub fn exists(&self) -> bool {
        std::fs::symlink_metadata(self.path()).is_ok()
    }

    /// Install (unless `check`) and report.
    pub fn apply(&self, check: bool) -> Row {
        let (state, changed) = match &self.kind {
            TargetKind::Json(json) => json.apply(check),
            TargetKind::Owned(owned) => owned.apply(check),
        };
        Row {
            client: self.client.name(),
            level: self.level,
            path: self.path().to_owned(),
            state,
            changed,
        }
    }
}

/// Claude Code, Codex and goose share the nested `{hooks: [{type, command}]}` shape.
fn nested_entry(command: &str, extra: Option<(&str, &str)>) -> Value {
    let mut hook = json!({"type": "command", "command": command});
    if let (Some((key, value)), Some(map)) = (extra, hook.as_object_mut()) {
        map.insert(key.to_owned(), Value::String(value.to_owned()));
    }
    json!({"hooks": [hook]})
}

/// Accepts a matcher-less group whose hooks run `command` with `extra` set.
fn nested_wanted(command: String, extra: Option<(&'static str, &'static str)>) -> files::Wanted {
    std::sync::Arc::new(move |entry: &Value| {
        let matcher_ok = match entry.get("matcher") {
            None => true,
            Some(Value::String(m)) => m.is_empty() || m == "*" || m == ".*",
            Some(_) => false,
        };
        matcher_ok
            && entry
                .get("hooks")
                .and_then(Value::as_array)
                .is_some_and(|hooks| {
                    hooks.iter().any(|h| {
                        h.get("command").and_then(Value::as_str) == Some(command.as_str())
                            && extra
                                .is_none_or(|(k, v)| h.get(k).and_then(Value::as_str) == Some(v))
                    })
                })
    })
}

/// A flat `{command, <flag>: true}` entry (Cursor, Windsurf).
fn flat_wanted(command: String, flag: Option<&'static str>) -> files::Wanted {
    std::sync::Arc::new(move |entry: &Value| {
        entry.get("command").and_then(Value::as_str) == Some(command.as_str())
            && flag.is_none_or(|f| entry.get(f) == Some(&Value::Bool(true)))
    })
}

/// The files chock manages for `client`, project level first.
pub fn targets(client: Agent, project: &Path, home: &Path) -> Vec<Target> {
    let command = stop_check_command(client);
    let at = |level: Level, kind: TargetKind| Target {
        client,
        level,
        kind,
    };
    let codex_home = std::env::var_os("CODEX_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".codex"));
    match client {
        Agent::ClaudeCode => {
            let hooks = |path: PathBuf| {
                TargetKind::Json(JsonHooks {
                    path,
                    arrays: vec![vec!["hooks", "PreToolUse"]],
                    element: nested_entry(&command, Some(("onFailure", "block"))),
                    wanted: nested_wanted(command.clone(), Some(("onFailure", "block"))),
                    template: None,
                    companion: None,
                })
            };
            vec![
                at(Level::Project, hooks(project.join(".claude/settings.json"))),
                at(Level::User, hooks(home.join(".claude/settings.json"))),
            ]
        }
        Agent::Codex => {
            let hooks = |path: PathBuf| {
                TargetKind::Json(JsonHooks {
                    path,
                    arrays: vec![vec!["hooks", "PreToolUse"]],
                    element: nested_entry(&command, None),
                    wanted: nested_wanted(command.clone(), None),
                    template: None,
                    companion: None,
                })
            };
            vec![
                at(Level::Project, hooks(project.join(".codex/hooks.json"))),
                at(Level::User, hooks(codex_home.join("hooks.json"))),
            ]
        }
        Agent::Gemini => {
            let hooks = |path: PathBuf| {
                TargetKind::Json(JsonHooks {
                    path,
                    arrays: vec![vec!["hooks", "BeforeTool"]],
                    element: nested_entry(&command, None),
                    wanted: nested_wanted(command.clone(), None),
                    template: None,
                    companion: None,
                })
            };
            vec![
                at(Level::Project, hooks(project.join(".gemini/settings.json"))),
                at(Level::User, hooks(home.join(".gemini/settings.json"))),
            ]
        }
        Agent::Cursor => {
            let element = json!({"command": command, "failClosed": true});
            let hooks = |path: PathBuf| {
                TargetKind::Json(JsonHooks {
                    path,
                    arrays: vec![vec!["hooks", "preToolUse"]],
                    element: element.clone(),
                    wanted: flat_wanted(command.clone(), Some("failClosed")),
                    template: Some(
                        json!({"version": 1, "hooks": {"preToolUse": [element.clone()]}}),
                    ),
                    companion: None,
                })
            };
            vec![
                at(Level::Project, hooks(project.join(".cursor/hooks.json"))),
                at(Level::User, hooks(home.join(".cursor/hooks.json"))),
            ]
        }
        Agent::Goose => {
            let plugin = |root: PathBuf| {
                TargetKind::Json(JsonHooks {
                    path: root.join("hooks/hooks.json"),
                    arrays: vec![vec!["hooks", "PreToolUse"]],
                    element: nested_entry(&command, Some(("on_failure", "block"))),
                    wanted: nested_wanted(command.clone(), Some(("on_failure", "block"))),
                    template: None,
                    companion: Some((
                        root.join("plugin.json"),
                        files::GOOSE_PLUGIN_JSON.to_owned(),
                    )),
                })
            };
            vec![
                at(
                    Level::Project,
                    plugin(project.join(".agents/plugins/chock")),
                ),
                at(Level::User, plugin(home.join(".agents/plugins/chock"))),
            ]
        }
        Agent::Cline => {
            let script = |path: PathBuf| {
                TargetKind::Owned(OwnedFile {
                    path,
                    content: files::cline_script(),
                    mode: 0o755,
                })
            };
            vec![
                at(
                    Level::Project,
                    script(project.join(".clinerules/hooks/PreToolUse")),
                ),
                at(
                    Level::User,
                    script(home.join("Documents/Cline/Hooks/PreToolUse")),
                ),
            ]
        }
        Agent::Windsurf => {
            let element = json!({"command": command, "show_output": true});
            let events = [
                "pre_read_code",
                "pre_write_code",
                "pre_run_command",
                "pre_mcp_tool_use",
            ];
            let hooks = |path: PathBuf| {
                TargetKind::Json(JsonHooks {
                    path,
                    arrays: events.iter().map(|e| vec!["hooks", *e]).collect(),
                    element: element.clone(),
                    wanted: flat_wanted(command.clone(), None),
                    template: None,
                    companion: None,
                })
            };
            vec![
                at(Level::Project, hooks(project.join(".windsurf/hooks.json"))),
                at(
                    Level::User,
                    hooks(home.join(".codeium/windsurf/hooks.json")),
                ),
            ]
        }
        Agent::OpenCode => {
            let plugin = |path: PathBuf| {
                TargetKind::Owned(OwnedFile {
                    path,
                    content: files::opencode_plugin(),
                    mode: 0o644,
                })
            };
            vec![
                at(
                    Level::Project,
                    plugin(project.join(".opencode/plugins/chock-stop.js")),
                ),
                at(
                    Level::User,
                    plugin(home.join(".config/opencode/plugins/chock-stop.js")),
                ),
            ]
        }
        // Chock's own sessions consult the reader directly; nothing to wire.
        Agent::Chock => Vec::new(),
    }
}
