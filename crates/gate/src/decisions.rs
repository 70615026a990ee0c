//! The decision log: one JSON line per refused call and per stop or resume,
//! in `<state dir>/decisions.jsonl`.
//!
//! Lines are appended with a single `write(2)` on an `O_APPEND` descriptor so
//! concurrent hooks never interleave within a line. A failure to log never
//! turns a refusal into an allow: callers refuse first and report the logging
//! error beside the refusal. Readers skip a final line without its newline
//! (a write still in progress) and keep lines of types they do not know.

use std::fs;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::GateError;

/// Why a call was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockReason {
    /// A stop was in force (or a stop file could not be read).
    Stopped,
    /// The hook input could not be understood, so the call was refused.
    BadHookInput,
    /// A person-only command was run from an agent's shell.
    PersonOnly,
    /// A policy row denied the call.
    Policy,
}

/// Which hook refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BlockSource {
    StopCheck,
    Git,
    Gateway,
    Session,
    Cli,
}

/// `event` of a `chock-stop` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopEvent {
    RepoStop,
    RepoResume,
}

/// One line of the decision log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum Line {
    #[serde(rename = "block")]
    Block {
        at: String,
        reason: BlockReason,
        source: BlockSource,
        /// The agent client, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<String>,
        /// The tool, command or action refused.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        action: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        project: Option<String>,
        /// The message the agent was shown.
        detail: String,
    },
    #[serde(rename = "chock-stop")]
    ChockStop {
        at: String,
        event: StopEvent,
        scope: String,
        who: String,
        when: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        repo: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<String>,
    },
}

/// `<state dir>/decisions.jsonl`, the state dir resolved as every Chock
/// command resolves it (`$CHOCK_STATE_DIR`, else `$XDG_STATE_HOME/chock`,
/// else `~/.local/state/chock`).
pub fn default_path() -> Result<PathBuf, GateError> {
    chock_log::StateDir::resolve()
        .map(|dir| dir.decisions_log())
        .map_err(|e| GateError::StateDir(e.to_string()))
}

/// Append one line to the log at `path`, creating it (0600) and its directory.
pub fn append(path: &Path, line: &Line) -> Result<(), GateError> {
    if let Some(dir) = path.parent() {
        chock_log::paths::create_private_dir(dir)
            .map_err(|e| GateError::StateDir(e.to_string()))?;
    }
    let mut bytes = serde_json::to_vec(line).unwrap_or_default();
    bytes.push(b'\n');
    let mut file = fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| GateError::io("open", path, e))?;
    file.write_all(&bytes)
        .map_err(|e| GateError::io("append to", path, e))
}

/// The current time for a log line.
pub fn now() -> String {
    jiff::Timestamp::now().to_string()
}

/// A reader that returns complete lines as they appear.
#[derive(Debug)]
pub struct Tail {
    path: PathBuf,
    offset: u64,
    partial: Vec<u8>,
}

impl Tail {
    pub fn new(path: PathBuf) -> Self {
        Tail {
            path,
            offset: 0,
            partial: Vec::new(),
        }
    }

    /// Complete lines written since the last call. A missing file is empty.
    pub fn poll(&mut self) -> Result<Vec<String>, GateError> {
        let mut file = match fs::File::open(&self.path) {
            Ok(file) => file,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(err) => return Err(GateError::io("open", &self.path, err)),
        };
        let len = file
            .metadata()
            .map_err(|e| GateError::io("inspect", &self.path, e))?
            .len();
        if len < self.offset {
            // Truncated or replaced: start over rather than miss lines.
            self.offset = 0;
            self.partial.clear();
        }
        file.seek(SeekFrom::Start(self.offset))
            .map_err(|e| GateError::io("seek", &self.path, e))?;
        let mut fresh = Vec::new();
        file.read_to_end(&mut fresh)
            .map_err(|e| GateError::io("read", &self.path, e))?;
        self.offset += fresh.len() as u64;
        self.partial.extend_from_slice(&fresh);
        let mut lines = Vec::new();
        while let Some(end) = self.partial.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=end).collect();
            let text = String::from_utf8_lossy(&line[..line.len() - 1]).into_owned();
            if !text.trim().is_empty() {
                lines.push(text);
            }
        }
        Ok(lines)
    }
}

/// One line for a person: known types in words, anything else as it is.
pub fn render(raw: &str) -> String {
    match serde_json::from_str::<Line>(raw) {
        Ok(Line::Block {
            at,
            reason,
            source,
            agent,
            action,
            detail,
            ..
        }) => {
            let reason = serde_json::to_value(reason)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            let source = serde_json::to_value(source)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            format!(
                "{at}  block  {reason:<14} {source:<10} {:<12} {:<24} {detail}",
                agent.unwrap_or_else(|| "-".into()),
                action.unwrap_or_else(|| "-".into()),
            )
        }
        Ok(Line::ChockStop {
            at,
            event,
            scope,
            who,
            repo,
            reason,
            agent,
            ..
        }) => {
            let event = match event {
                StopEvent::RepoStop => "repo_stop",
                StopEvent::RepoResume => "repo_resume",
            };
            let mut text = format!("{at}  chock-stop  {event:<11} {scope:<10} by {who}");
            if let Some(repo) = repo {
                text.push_str(&format!("  {repo}"));
            }
            if let Some(agent) = agent {
                text.push_str(&format!("  agent {agent}"));
            }
            if let Some(reason) = reason {
                text.push_str(&format!("  \"{reason}\""));
            }
            text
        }
        Err(_) => raw.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip_with_their_tags() {
        let line = Line::ChockStop {
            at: "2026-11-29T18:00:00Z".into(),
            event: StopEvent::RepoStop,
            scope: "repo".into(),
            who: "ada@example.org".into(),
            when: "2026-11-29T18:00:00Z".into(),
            repo: Some("/srv/shop".into()),
            reason: Some("review".into()),
            agent: None,
        };
        let text = serde_json::to_string(&line).unwrap();
        assert!(text.starts_with(r#"{"type":"chock-stop","#), "{text}");
        assert!(text.contains(r#""event":"repo_stop""#));
        assert_eq!(serde_json::from_str::<Line>(&text).unwrap(), line);
    }

    #[test]
    fn tail_skips_a_torn_final_line_until_it_completes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("d.jsonl");
        fs::write(&path, "{\"a\":1}\n{\"b\":").unwrap();
        let mut tail = Tail::new(path.clone());
        assert_eq!(tail.poll().unwrap(), vec!["{\"a\":1}".to_owned()]);
        fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"2}\n")
            .unwrap();
        assert_eq!(tail.poll().unwrap(), vec!["{\"b\":2}".to_owned()]);
    }

    #[test]
    fn version_one_fixture_lines_keep_parsing() {
        let text = include_str!("../tests/fixtures/decisions-v1.jsonl");
        for line in text.lines() {
            let parsed: Line = serde_json::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}"));
            assert_eq!(
                serde_json::to_value(&parsed).unwrap(),
                serde_json::from_str::<serde_json::Value>(line).unwrap()
            );
        }
        assert_eq!(text.lines().count(), 9);
    }

    #[test]
    fn unknown_types_render_as_written() {
        assert_eq!(
            render(r#"{"type":"decision","x":1}"#),
            r#"{"type":"decision","x":1}"#
        );
    }
}
