//! The decisions the gateway makes about single messages, free of I/O so they
//! can be tested one message at a time.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use chock_gate::decisions::{self, BlockReason, BlockSource, Line};
use chock_gate::reader::{self, Caller, StopVerdict};
use serde_json::{Value, json};

use crate::Config;

/// A `tools/call` refused because a stop is in force. Application error codes
/// live outside JSON-RPC's reserved -32768..-32000.
pub const ERROR_STOPPED: i64 = -31001;
/// A `tools/call` of a tool the policy denies at start.
pub const ERROR_POLICY: i64 = -31002;
/// A request still in flight when the server exited or misbehaved.
pub const ERROR_SERVER_GONE: i64 = -31003;

/// What the gateway remembers between messages.
#[derive(Debug, Default)]
pub(crate) struct Session {
    /// Requests forwarded and not yet answered: id (as JSON text) → method.
    pub(crate) pending: HashMap<String, (Value, String)>,
    /// Ids of forwarded `tools/list` requests.
    pub(crate) list_ids: HashSet<String>,
    /// The rules' answer per tool, asked once.
    pub(crate) verdicts: HashMap<String, Result<(), String>>,
}

/// What to do with one message from the client.
#[derive(Debug)]
pub(crate) enum FromClient {
    Forward,
    /// Answer the client with this (or nothing, for a notification) and drop the message.
    Refuse(Option<Value>),
}

pub(crate) fn error_response(id: &Value, code: i64, message: &str, data: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message, "data": data}})
}

fn tool_verdict(config: &Config, session: &mut Session, tool: &str) -> Result<(), String> {
    session
        .verdicts
        .entry(tool.to_owned())
        .or_insert_with(|| config.rules.at_start(&config.server, tool))
        .clone()
}

/// One JSON-RPC message from the client.
pub(crate) fn from_client(config: &Config, session: &mut Session, message: &Value) -> FromClient {
    let method = message.get("method").and_then(Value::as_str);
    let id = message.get("id").cloned();
    if method == Some("tools/call") {
        let tool = message
            .get("params")
            .and_then(|p| p.get("name"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let action = format!("mcp.{}.tool.{tool}", config.server);
        let caller = Caller {
            project: Some(&config.project),
            agent: config.agent,
        };
        if let StopVerdict::Stopped(stopped) = reader::read(&config.paths, &caller) {
            let text = stopped.to_string();
            log(config, BlockReason::Stopped, &action, &text);
            let data = json!({"reason": "stopped", "server": config.server, "tool": tool, "detail": stopped.reason()});
            return FromClient::Refuse(
                id.map(|id| error_response(&id, ERROR_STOPPED, &text, data)),
            );
        }
        if let Err(why) = tool_verdict(config, session, &tool)
            .and_then(|()| config.rules.at_call(&config.server, &tool))
        {
            let text = format!("denied: {why}");
            log(config, BlockReason::Policy, &action, &text);
            let data =
                json!({"reason": "policy", "server": config.server, "tool": tool, "rule": action});
            return FromClient::Refuse(id.map(|id| error_response(&id, ERROR_POLICY, &text, data)));
        }
    }
    if let (Some(method), Some(id)) = (method, id) {
        let key = id.to_string();
        if method == "tools/list" {
            session.list_ids.insert(key.clone());
        }
        session.pending.insert(key, (id, method.to_owned()));
    }
    FromClient::Forward
}

/// One JSON-RPC message from the server: `Some(replacement)` when it had to
/// change (a filtered `tools/list` result), `None` to forward the bytes as they are.
pub(crate) fn from_server(
    config: &Config,
    session: &mut Session,
    message: &Value,
) -> Option<Value> {
    if message.get("method").is_some() {
        return None;
    }
    let key = message.get("id")?.to_string();
    session.pending.remove(&key);
    if !session.list_ids.remove(&key) {
        return None;
    }
    let tools = message.get("result")?.get("tools")?.as_array()?;
    let kept: Vec<Value> = tools
        .iter()
        .filter(|tool| {
            let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
            tool_verdict(config, session, name).is_ok()
        })
        .cloned()
        .collect();
    if kept.len() == tools.len() {
        return None;
    }
    let mut replaced = message.clone();
    if let Some(result) = replaced.get_mut("result").and_then(Value::as_object_mut) {
        result.insert("tools".to_owned(), Value::Array(kept));
    }
    Some(replaced)
}

fn log(config: &Config, reason: BlockReason, action: &str, detail: &str) {
    let line = Line::Block {
        at: decisions::now(),
        reason,
        source: BlockSource::Gateway,
        agent: config.agent.map(|a| a.name().to_owned()),
        action: Some(action.to_owned()),
        project: Some(config.project.display().to_string()),
        detail: detail.to_owned(),
    };
    // A refusal stands whether or not it could be logged.
    if let Some(path) = config.log.as_deref() {
        let _ = decisions::append(Path::new(path), &line);
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use chock_gate::StopPaths;

    use super::*;
    use crate::DenyTools;

    fn config(dir: &Path) -> Config {
        Config {
            server: "files".into(),
            command: vec!["unused".into()],
            project: dir.to_owned(),
            paths: StopPaths::under_home(&dir.join("home")),
            log: Some(dir.join("decisions.jsonl")),
            agent: None,
            rules: Box::new(DenyTools(HashSet::from(["delete_file".to_owned()]))),
        }
    }

    #[test]
    fn a_tool_denied_at_start_is_hidden_from_tools_list_and_its_calls_refused() {
        let dir = tempfile::tempdir().unwrap();
        let config = config(dir.path());
        let mut session = Session::default();
        let list = json!({"jsonrpc": "2.0", "id": "a", "method": "tools/list", "params": {}});
        assert!(matches!(
            from_client(&config, &mut session, &list),
            FromClient::Forward
        ));
        let result = json!({"jsonrpc": "2.0", "id": "a", "result": {"resultType": "complete", "tools": [
            {"name": "read_file"}, {"name": "delete_file"}
        ], "nextCursor": "x"}});
        let filtered = from_server(&config, &mut session, &result).unwrap();
        assert_eq!(filtered["result"]["tools"], json!([{"name": "read_file"}]));
        assert_eq!(
            filtered["result"]["resultType"], "complete",
            "other result fields stay"
        );
        assert_eq!(filtered["result"]["nextCursor"], "x");

        let call = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "delete_file"}});
        match from_client(&config, &mut session, &call) {
            FromClient::Refuse(Some(answer)) => {
                assert_eq!(answer["error"]["code"], ERROR_POLICY);
                assert_eq!(
                    answer["error"]["data"]["rule"],
                    "mcp.files.tool.delete_file"
                );
            }
            other => panic!("{other:?}"),
        }
        let log = std::fs::read_to_string(dir.path().join("decisions.jsonl")).unwrap();
        assert!(log.contains("\"reason\":\"policy\""), "{log}");
    }

    #[test]
    fn responses_to_other_requests_pass_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let config = config(dir.path());
        let mut session = Session::default();
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "read_file"}});
        assert!(matches!(
            from_client(&config, &mut session, &call),
            FromClient::Forward
        ));
        assert_eq!(session.pending.len(), 1);
        let result =
            json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "delete_file"}]}});
        assert_eq!(from_server(&config, &mut session, &result), None);
        assert!(session.pending.is_empty());
    }

    #[test]
    fn codes_are_application_codes_outside_the_reserved_range() {
        for code in [ERROR_STOPPED, ERROR_POLICY, ERROR_SERVER_GONE] {
            assert!(!(-32768..=-32000).contains(&code), "{code}");
        }
    }
}
