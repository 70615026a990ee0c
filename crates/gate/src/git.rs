//! The git dispatcher: `pre-commit` and `pre-push` hooks that refuse an
//! agent's commit or push while a stop is in force and let a person's pass.
//!
//! The hooks go where git looks for them (`git rev-parse --git-path hooks`,
//! which honours `core.hooksPath`). A hook already there is kept: it is
//! renamed to `<name>.chock-chained` and the dispatcher runs it after its own
//! check, with the same arguments and standard input. Telling an agent from a
//! person is [`crate::agent::detect`]'s job; see its limits there.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::agent::{self, Actor};
use crate::decisions::{self, BlockReason, BlockSource, Line};
use crate::error::GateError;
use crate::paths::StopPaths;
use crate::reader::{self, Caller, StopVerdict};
use crate::sync::files::MARKER;
use crate::sync::{Level, Row, State};

/// The hooks the dispatcher occupies.
pub const HOOKS: [&str; 2] = ["pre-commit", "pre-push"];

/// The suffix a pre-existing hook is moved to.
pub const CHAINED_SUFFIX: &str = ".chock-chained";

/// The dispatcher script for one hook.
pub fn dispatcher_script(hook: &str) -> String {
    format!(
        r#"#!/bin/sh
# {MARKER}: chock's git dispatcher, written by `chock sync`. It refuses an
# agent's {hook} while a person's chock stop is in force, then runs the hook
# that was here before (kept as {hook}{CHAINED_SUFFIX}) with the same arguments.
if ! command -v chock >/dev/null 2>&1; then
    echo "chock git dispatcher: chock is not on PATH, so the stop cannot be checked; refusing. Put chock on PATH, or remove $0" >&2
    exit 1
fi
chock gate git-check {hook} </dev/null || exit $?
chained="$(dirname "$0")/{hook}{CHAINED_SUFFIX}"
if [ -x "$chained" ]; then
    exec "$chained" "$@"
fi
exit 0
"#
    )
}

/// Where git reads hooks for the repository at `project`.
pub fn hooks_dir(project: &Path) -> Result<PathBuf, GateError> {
    let output = Command::new("git")
        .args(["rev-parse", "--git-path", "hooks"])
        .current_dir(project)
        .output()
        .map_err(|e| GateError::Git {
            dir: project.to_owned(),
            detail: format!("cannot run git: {e}"),
        })?;
    if !output.status.success() {
        return Err(GateError::Git {
            dir: project.to_owned(),
            detail: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        });
    }
    let text = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    let path = PathBuf::from(text);
    Ok(if path.is_absolute() {
        path
    } else {
        project.join(path)
    })
}

/// Install (unless `check`) and report, one row per hook.
pub fn sync_rows(project: &Path, check: bool) -> Vec<Row> {
    let dir = match hooks_dir(project) {
        Ok(dir) => dir,
        Err(err) => {
            return vec![Row {
                client: "git",
                level: Level::Project,
                path: project.to_owned(),
                state: State::Invalid(err.to_string()),
                changed: false,
            }];
        }
    };
    HOOKS
        .iter()
        .map(|hook| {
            let path = dir.join(hook);
            let (state, changed) = match install_one(&path, hook, check) {
                Ok(result) => result,
                Err(err) => (State::Invalid(err.to_string()), false),
            };
            Row {
                client: "git",
                level: Level::Project,
                path,
                state,
                changed,
            }
        })
        .collect()
}

fn install_one(path: &Path, hook: &str, check: bool) -> Result<(State, bool), GateError> {
    let script = dispatcher_script(hook);
    let current = match fs::symlink_metadata(path) {
        Ok(_) => Some(fs::read(path).map_err(|e| GateError::io("read", path, e))?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(GateError::io("inspect", path, e)),
    };
    let ours = current
        .as_deref()
        .is_some_and(|bytes| String::from_utf8_lossy(bytes).contains(MARKER));
    if current.as_deref() == Some(script.as_bytes()) {
        return Ok((State::Wired, false));
    }
    if check {
        return Ok((State::Missing, false));
    }
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(|e| GateError::io("create directory", dir, e))?;
    }
    if current.is_some() && !ours {
        let chained = path.with_file_name(format!("{hook}{CHAINED_SUFFIX}"));
        if fs::symlink_metadata(&chained).is_ok() {
            return Err(GateError::Occupied {
                path: chained,
                what: format!(
                    "move it away so chock can chain the current {hook} hook, then sync again"
                ),
            });
        }
        fs::rename(path, &chained).map_err(|e| GateError::io("move aside", path, e))?;
    }
    crate::stopfile::atomic_write(path, script.as_bytes(), 0o755)?;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755))
        .map_err(|e| GateError::io("set permissions on", path, e))?;
    Ok((State::Wired, true))
}

/// What `chock gate git-check` decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitVerdict {
    /// A person, or an agent with no stop in force.
    Pass,
    /// Refused; the message for stderr.
    Refuse(String),
}

/// The check the dispatcher runs: `repo` is where git runs the hook.
pub fn check(
    hook: &str,
    repo: &Path,
    actor: &Actor,
    paths: &StopPaths,
    log: Option<&Path>,
) -> GitVerdict {
    if !actor.is_agent() {
        return GitVerdict::Pass;
    }
    let caller = Caller {
        project: Some(repo),
        agent: actor.agent(),
    };
    match reader::read(paths, &caller) {
        StopVerdict::Clear => GitVerdict::Pass,
        StopVerdict::Stopped(stopped) => {
            let mut message =
                format!("{stopped}\nchock refused this {hook}: it runs in an agent's environment");
            if let Actor::Agent { variable, .. } = actor {
                message.push_str(&format!(" ({variable} is set)"));
            }
            let line = Line::Block {
                at: decisions::now(),
                reason: BlockReason::Stopped,
                source: BlockSource::Git,
                agent: Some(
                    actor
                        .agent()
                        .map_or_else(|| "unknown".to_owned(), |a| a.name().to_owned()),
                ),
                action: Some(format!("git.{hook}")),
                project: Some(repo.display().to_string()),
                detail: stopped.to_string(),
            };
            if let Err(err) = log
                .ok_or(GateError::NoHome)
                .and_then(|path| decisions::append(path, &line))
            {
                message.push_str(&format!("\nchock: the refusal was not logged: {err}"));
            }
            GitVerdict::Refuse(message)
        }
    }
}

/// [`check`] with this process's environment.
pub fn check_from_env(
    hook: &str,
    repo: &Path,
    paths: &StopPaths,
    log: Option<&Path>,
) -> GitVerdict {
    check(hook, repo, &agent::detect_from_env(), paths, log)
}
