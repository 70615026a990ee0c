//! The `script` kind: assistant turns read from a file instead of a model,
//! for deterministic sessions in tests and offline demos.
//!
//! The file is JSON Lines: one assistant turn per line; blank lines and lines
//! starting with `#` are skipped. A turn is an object with optional `text`,
//! optional `tool_calls` (each `{"name": ..., "arguments": {...}}`, with an
//! optional `id`) and optional `usage` (`{"input_tokens": n,
//! "output_tokens": n}`). Which turn answers a request is decided by the
//! conversation, not by a counter: the request with N assistant messages
//! already in it gets turn N+1. So a session that is continued from its log
//! picks the script up exactly where it left off.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::error::ProviderError;
use super::types::{Message, ModelRequest, StopReason, StreamEvent, ToolCall, Usage};

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptTurn {
    #[serde(default)]
    text: String,
    #[serde(default)]
    tool_calls: Vec<ScriptCall>,
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptCall {
    #[serde(default)]
    id: Option<String>,
    name: String,
    #[serde(default)]
    arguments: Option<serde_json::Value>,
}

/// A parsed script file.
#[derive(Debug, Clone)]
pub(crate) struct Script {
    path: PathBuf,
    turns: Vec<ScriptTurn>,
}

impl Script {
    /// Reads and checks the whole file up front, so a typo on line 40 is
    /// reported before the session starts rather than at turn 40.
    pub(crate) fn load(path: &Path) -> Result<Self, ProviderError> {
        let text = std::fs::read_to_string(path).map_err(|err| ProviderError::ScriptRead {
            path: path.to_owned(),
            detail: err.to_string(),
        })?;
        Self::parse(path, &text)
    }

    pub(crate) fn parse(path: &Path, text: &str) -> Result<Self, ProviderError> {
        let mut turns = Vec::new();
        for (number, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let turn: ScriptTurn =
                serde_json::from_str(line).map_err(|err| ProviderError::ScriptSyntax {
                    path: path.to_owned(),
                    line: number + 1,
                    detail: format!("not a script turn: {err}"),
                })?;
            turns.push(turn);
        }
        Ok(Self {
            path: path.to_owned(),
            turns,
        })
    }

    /// The events of the turn that answers `request`.
    pub(crate) fn answer(
        &self,
        request: &ModelRequest<'_>,
    ) -> Result<VecDeque<StreamEvent>, ProviderError> {
        let done = request
            .messages
            .iter()
            .filter(|message| matches!(message, Message::Assistant { .. }))
            .count();
        let Some(turn) = self.turns.get(done) else {
            return Err(ProviderError::ScriptExhausted {
                path: self.path.clone(),
                turns: self.turns.len(),
                asked: done + 1,
            });
        };
        let mut out = VecDeque::new();
        if !turn.text.is_empty() {
            out.push_back(StreamEvent::Text(turn.text.clone()));
        }
        for (index, call) in turn.tool_calls.iter().enumerate() {
            let arguments = call
                .arguments
                .as_ref()
                .map_or_else(|| "{}".to_owned(), serde_json::Value::to_string);
            out.push_back(StreamEvent::ToolCall(ToolCall {
                id: call
                    .id
                    .clone()
                    .unwrap_or_else(|| format!("script-{}-{index}", done + 1)),
                name: call.name.clone(),
                arguments,
            }));
        }
        out.push_back(StreamEvent::Usage(turn.usage.unwrap_or_default()));
        out.push_back(StreamEvent::Stop(if turn.tool_calls.is_empty() {
            StopReason::EndTurn
        } else {
            StopReason::ToolUse
        }));
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(messages: &[Message]) -> ModelRequest<'_> {
        ModelRequest {
            model: "any",
            system: "",
            messages,
            tools: &[],
        }
    }

    const SCRIPT: &str = r#"
# a comment, then a blank line

{"text": "writing it", "tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "hi"}}]}
{"text": "done", "usage": {"input_tokens": 7, "output_tokens": 2}}
"#;

    #[test]
    fn the_turn_is_chosen_by_how_many_assistant_messages_came_before() {
        let script = Script::parse(Path::new("s.script"), SCRIPT).unwrap();
        let first = script
            .answer(&request(&[Message::User { text: "go".into() }]))
            .unwrap();
        assert_eq!(first[0], StreamEvent::Text("writing it".into()));
        assert_eq!(
            first[1],
            StreamEvent::ToolCall(ToolCall {
                id: "script-1-0".into(),
                name: "write_file".into(),
                arguments: r#"{"content":"hi","path":"a.txt"}"#.into(),
            })
        );
        assert_eq!(first[3], StreamEvent::Stop(StopReason::ToolUse));

        let history = [
            Message::User { text: "go".into() },
            Message::Assistant {
                text: "writing it".into(),
                calls: vec![],
            },
        ];
        let second = script.answer(&request(&history)).unwrap();
        assert_eq!(
            second,
            VecDeque::from(vec![
                StreamEvent::Text("done".into()),
                StreamEvent::Usage(Usage {
                    input_tokens: 7,
                    output_tokens: 2,
                    ..Usage::default()
                }),
                StreamEvent::Stop(StopReason::EndTurn),
            ])
        );
    }

    #[test]
    fn a_session_that_outruns_its_script_is_told_so() {
        let script = Script::parse(Path::new("s.script"), "{\"text\": \"only\"}\n").unwrap();
        let history = [Message::Assistant {
            text: "only".into(),
            calls: vec![],
        }];
        let err = script.answer(&request(&history)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the script s.script has 1 assistant turns and the session asked for turn 2: add a turn to the script"
        );
    }

    #[test]
    fn a_bad_line_is_reported_with_its_number() {
        let err = Script::parse(
            Path::new("s.script"),
            "\n{\"text\": \"ok\"}\n{\"txet\": 1}\n",
        )
        .unwrap_err();
        let message = err.to_string();
        assert!(
            message.starts_with("s.script:3: not a script turn: unknown field `txet`"),
            "{message}"
        );
    }
}
