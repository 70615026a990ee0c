//! The two kinds of file `chock sync` writes: a person's JSON config that
//! gains one hook entry (edited surgically), and a small file chock owns
//! outright (Cline's hook script, the OpenCode plugin, goose's plugin.json).

use std::fmt;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::State;
use crate::jsonedit::{self, EditError};
use crate::stopfile::atomic_write;

/// Recognises chock's entry in an array.
pub type Wanted = Arc<dyn Fn(&Value) -> bool + Send + Sync>;

/// Marks every file chock owns, so a later sync can update it and never
/// overwrites a file somebody else wrote.
pub const MARKER: &str = "chock-stop-check";

/// A JSON config that must hold chock's entry in one or more arrays.
#[derive(Clone)]
pub struct JsonHooks {
    pub path: PathBuf,
    pub arrays: Vec<Vec<&'static str>>,
    pub element: Value,
    pub wanted: Wanted,
    /// The whole document to write when the file does not exist yet.
    pub template: Option<Value>,
    /// A file written beside it when absent (goose's plugin manifest).
    pub companion: Option<(PathBuf, String)>,
}

impl fmt::Debug for JsonHooks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JsonHooks")
            .field("path", &self.path)
            .field("arrays", &self.arrays)
            .finish_non_exhaustive()
    }
}

impl JsonHooks {
    /// Returns the state after this run and whether a file changed.
    pub fn apply(&self, check: bool) -> (State, bool) {
        match self.apply_inner(check) {
            Ok(result) => result,
            Err(problem) => (State::Invalid(problem), false),
        }
    }

    fn apply_inner(&self, check: bool) -> Result<(State, bool), String> {
        let (write_path, original) = read_config(&self.path)?;
        let mut text = original.clone().unwrap_or_default();
        if let Some(template) = self.template.as_ref().filter(|_| text.trim().is_empty()) {
            text = serde_json::to_string_pretty(template).map_err(|e| e.to_string())? + "\n";
        }
        for array in &self.arrays {
            match jsonedit::ensure_element(&text, array, &self.element, &*self.wanted) {
                Ok(Some(edited)) => text = edited,
                Ok(None) => {}
                Err(EditError::Syntax(e)) => {
                    return Err(format!(
                        "{} is not valid JSON at line {}, column {}: {}; fix it by hand, chock will not touch it",
                        self.path.display(),
                        e.line,
                        e.column,
                        e.message
                    ));
                }
                Err(EditError::Shape(what)) => {
                    return Err(format!(
                        "{}: {what}; fix it by hand, chock will not guess",
                        self.path.display()
                    ));
                }
            }
        }
        let changed = original.as_deref() != Some(text.as_str());
        let companion_missing = self
            .companion
            .as_ref()
            .is_some_and(|(path, _)| fs::symlink_metadata(path).is_err());
        if check {
            let state = if changed || companion_missing {
                State::Missing
            } else {
                State::Wired
            };
            return Ok((state, false));
        }
        if changed {
            write_keeping_mode(&write_path, text.as_bytes(), 0o644)?;
        }
        if let Some((path, content)) = self.companion.as_ref().filter(|_| companion_missing) {
            write_keeping_mode(path, content.as_bytes(), 0o644)?;
        }
        Ok((State::Wired, changed || companion_missing))
    }
}

/// Read a config: `(path to write, contents)`; contents `None` when absent.
/// A symlinked config is edited at its target, so dotfile managers keep
/// their link.
fn read_config(path: &Path) -> Result<(PathBuf, Option<String>), String> {
    let write_path = match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => fs::canonicalize(path).map_err(|e| {
            format!(
                "{} is a symlink that cannot be followed ({e}); fix it by hand",
                path.display()
            )
        })?,
        Ok(meta) if !meta.is_file() => {
            return Err(format!(
                "{} is not a regular file; chock will not touch it",
                path.display()
            ));
        }
        Ok(_) => path.to_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((path.to_owned(), None)),
        Err(e) => return Err(format!("cannot inspect {}: {e}", path.display())),
    };
    let bytes =
        fs::read(&write_path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        format!(
            "{} is not UTF-8 (byte {}); chock will not touch it",
            path.display(),
            e.utf8_error().valid_up_to()
        )
    })?;
    Ok((write_path, Some(text)))
}

fn write_keeping_mode(path: &Path, bytes: &[u8], default_mode: u32) -> Result<(), String> {
    let mode = fs::metadata(path)
        .map(|m| m.permissions().mode() & 0o7777)
        .unwrap_or(default_mode);
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    atomic_write(path, bytes, mode).map_err(|e| e.to_string())
}

/// A file chock owns outright.
#[derive(Debug, Clone)]
pub struct OwnedFile {
    pub path: PathBuf,
    pub content: String,
    pub mode: u32,
}

impl OwnedFile {
    pub fn apply(&self, check: bool) -> (State, bool) {
        let current = match fs::symlink_metadata(&self.path) {
            Ok(meta) if !meta.is_file() => {
                return (
                    State::Invalid(format!(
                        "{} is not a regular file; chock will not touch it",
                        self.path.display()
                    )),
                    false,
                );
            }
            Ok(_) => match fs::read_to_string(&self.path) {
                Ok(text) => Some(text),
                Err(e) => {
                    return (
                        State::Invalid(format!("cannot read {}: {e}", self.path.display())),
                        false,
                    );
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                return (
                    State::Invalid(format!("cannot inspect {}: {e}", self.path.display())),
                    false,
                );
            }
        };
        let executable_ok = self.mode & 0o111 == 0
            || fs::metadata(&self.path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0);
        match current {
            Some(text) if text == self.content && executable_ok => (State::Wired, false),
            Some(text) if !text.contains(MARKER) => (
                State::Invalid(format!(
                    "{} exists and was not written by chock; add `{}` to it yourself, or move it away and sync again",
                    self.path.display(),
                    "chock gate stop-check"
                )),
                false,
            ),
            _ if check => (State::Missing, false),
            _ => match write_keeping_mode(&self.path, self.content.as_bytes(), self.mode).and_then(
                |()| {
                    fs::set_permissions(&self.path, fs::Permissions::from_mode(self.mode)).map_err(
                        |e| format!("cannot set permissions on {}: {e}", self.path.display()),
                    )
                },
            ) {
                Ok(()) => (State::Wired, true),
                Err(problem) => (State::Invalid(problem), false),
            },
        }
    }
}

/// goose's plugin manifest for the `chock` plugin directory.
pub const GOOSE_PLUGIN_JSON: &str = "{\n  \"name\": \"chock\",\n  \"version\": \"1.0.0\",\n  \"description\": \"chock-stop-check: refuses every tool call while a person's chock stop is in force\"\n}\n";

/// Cline runs an executable named after the hook; the check answers in
/// Cline's JSON. If `chock` cannot be found the script itself cancels.
pub fn cline_script() -> String {
    format!(
        r#"#!/bin/sh
# {MARKER}: written by `chock sync`. Cline runs this before every tool call;
# it refuses the call while a person's chock stop is in force.
if ! command -v chock >/dev/null 2>&1; then
    echo "stopped: the chock stop check cannot run (chock is not on PATH), so the call is refused" >&2
    printf '%s\n' '{{"cancel":true,"errorMessage":"stopped: the chock stop check cannot run (chock is not on PATH)"}}'
    exit 0
fi
exec chock gate stop-check --client cline
"#
    )
}

/// OpenCode loads every module in its plugins directory; a throw in
/// `tool.execute.before` refuses the call. Anything but a clean exit 0 of
/// the check (a missing binary included) throws.
pub fn opencode_plugin() -> String {
    format!(
        r#"// {MARKER}: written by `chock sync`. OpenCode runs this before every tool
// call; it refuses the call while a person's chock stop is in force.
import {{ spawnSync }} from "node:child_process";

export const ChockStopCheck = async ({{ directory, worktree }}) => ({{
  "tool.execute.before": async (input, output) => {{
    const payload = JSON.stringify({{
      tool: String(input?.tool ?? ""),
      session_id: input?.sessionID ?? null,
      directory: String(directory ?? worktree ?? process.cwd()),
      args: output?.args ?? null,
    }});
    const run = spawnSync("chock", ["gate", "stop-check", "--client", "opencode"], {{
      input: payload,
      encoding: "utf8",
    }});
    if (run.error || run.status !== 0) {{
      const why = (run.stderr || "").trim();
      throw new Error(why || `stopped: the chock stop check could not run (${{run.error ? run.error.message : "exit " + run.status}}), so the call is refused`);
    }}
  }},
}});
"#
    )
}
