//! The stop file format and how stops are written and lifted.
//!
//! One JSON object per file, the same shape in `<repo>/.chock/stop.json`, in
//! the machine registry and in `_everywhere.json`. It is a contract read by
//! other processes and by older and newer versions of Chock: explicit tags,
//! optional fields defaulted, unknown fields ignored. Files are written to a
//! temporary name and renamed, so a reader sees the old stop or the new one,
//! never half of one.

use std::fs;
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::GateError;
use crate::paths::StopPaths;
use crate::repo::Repo;

/// The current format version. Readers accept any version whose required
/// fields they find.
pub const FORMAT_VERSION: u32 = 1;

/// What a stop covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// One repository and its worktrees.
    Repo,
    /// Every repository on the machine.
    Everywhere,
}

impl Scope {
    pub fn name(self) -> &'static str {
        match self {
            Scope::Repo => "repo",
            Scope::Everywhere => "everywhere",
        }
    }
}

/// One stop, as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StopFile {
    #[serde(default = "default_version")]
    pub version: u32,
    pub scope: Scope,
    /// Why the person stopped agents; shown in every refusal.
    pub reason: String,
    /// The person's `git config user.email`, or `unknown`.
    pub who: String,
    /// RFC 3339 UTC.
    pub when: String,
    /// The main checkout's real path (repo scope only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    /// Only this agent is stopped; `None` stops every agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

fn default_version() -> u32 {
    FORMAT_VERSION
}

impl StopFile {
    /// Parse a stop file's bytes.
    pub fn parse(bytes: &[u8]) -> Result<StopFile, serde_json::Error> {
        serde_json::from_slice(bytes)
    }
}

/// The current time, RFC 3339 UTC with second precision.
pub fn now_rfc3339() -> String {
    jiff::Timestamp::now()
        .round(jiff::Unit::Second)
        .map(|t| t.to_string())
        .unwrap_or_else(|_| jiff::Timestamp::now().to_string())
}

/// Where a repository's stop was written.
#[derive(Debug, Clone)]
pub struct Written {
    pub repo_file: PathBuf,
    pub registry_file: PathBuf,
}

/// Write a repository stop: `.chock/stop.json` and the registry entry (0600).
pub fn write_repo_stop(
    paths: &StopPaths,
    repo: &Repo,
    stop: &StopFile,
) -> Result<Written, GateError> {
    let repo_file = repo.stop_file();
    let dir = repo_file.parent().unwrap_or(&repo.main_checkout).to_owned();
    ensure_dir(&dir, 0o755)?;
    ensure_excluded(&repo.common_dir)?;
    let registry_file = paths.entry_for(&repo.main_checkout);
    ensure_dir(&paths.registry, 0o700)?;
    let bytes = to_bytes(stop);
    // Registry first: if the repository write then fails, the stop is still in
    // force for every hook, which is the safe half to have.
    atomic_write(&registry_file, &bytes, 0o600)?;
    atomic_write(&repo_file, &bytes, 0o644)?;
    Ok(Written {
        repo_file,
        registry_file,
    })
}

/// Write `_everywhere.json` (0600).
pub fn write_everywhere_stop(paths: &StopPaths, stop: &StopFile) -> Result<PathBuf, GateError> {
    ensure_dir(&paths.registry, 0o700)?;
    let file = paths.everywhere();
    atomic_write(&file, &to_bytes(stop), 0o600)?;
    Ok(file)
}

/// Remove a stop file. Removes regular files and symlinks; `Ok(false)` when
/// there was nothing; a directory in its place is an error a person must
/// resolve by hand, because deleting a directory tree is not what resume means.
pub fn remove(path: &Path) -> Result<bool, GateError> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => Err(GateError::Occupied {
            path: path.to_owned(),
            what: "it is a directory; remove it by hand, then run the command again".into(),
        }),
        Ok(_) => fs::remove_file(path)
            .map(|()| true)
            .map_err(|e| GateError::io("remove", path, e)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(err) => Err(GateError::io("inspect", path, err)),
    }
}

fn to_bytes(stop: &StopFile) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(stop).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

fn ensure_dir(dir: &Path, mode: u32) -> Result<(), GateError> {
    if dir.is_dir() {
        return Ok(());
    }
    // Missing parents (`~/.chock`) are the person's alone.
    if let Some(parent) = dir.parent() {
        chock_log::paths::create_private_dir(parent)
            .map_err(|e| GateError::StateDir(e.to_string()))?;
    }
    fs::create_dir_all(dir).map_err(|e| GateError::io("create directory", dir, e))?;
    fs::set_permissions(dir, fs::Permissions::from_mode(mode))
        .map_err(|e| GateError::io("set permissions on", dir, e))
}

/// What the repository's own exclude file gets, so that git never sees a
/// stop: not while it is in force, not while it is being written, and
/// nothing of it after it is lifted (no `.gitignore` of Chock's in the
/// work tree).
const EXCLUDE_LINES: [&str; 2] = ["/.chock/stop.json", "/.chock/.stop.json.chock-*.tmp"];

/// Keeps the stop out of `git status` and out of commits, which is what lets
/// a worktree's stop be its main checkout's: the patterns go to the
/// repository's `info/exclude` in its common directory (shared by every
/// worktree), once each, after whatever the person keeps there.
fn ensure_excluded(common_dir: &Path) -> Result<(), GateError> {
    let info = common_dir.join("info");
    let exclude = info.join("exclude");
    let have = match fs::read_to_string(&exclude) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(err) => return Err(GateError::io("read", exclude, err)),
    };
    let missing: Vec<&str> = EXCLUDE_LINES
        .into_iter()
        .filter(|line| !have.lines().any(|had| had.trim() == *line))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    fs::create_dir_all(&info).map_err(|e| GateError::io("create directory", &info, e))?;
    let mut text = String::new();
    if !have.is_empty() && !have.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("# chock: stops are local and never committed\n");
    for line in missing {
        text.push_str(line);
        text.push('\n');
    }
    fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&exclude)
        .and_then(|mut file| file.write_all(text.as_bytes()))
        .map_err(|e| GateError::io("append to", exclude, e))
}

/// Write to a temporary sibling, fsync, rename over `path`.
pub(crate) fn atomic_write(path: &Path, bytes: &[u8], mode: u32) -> Result<(), GateError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.chock-{}.tmp", std::process::id()));
    let result = (|| {
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(mode)
            .open(&tmp)
            .map_err(|e| GateError::io("create", &tmp, e))?;
        file.write_all(bytes)
            .map_err(|e| GateError::io("write", &tmp, e))?;
        file.set_permissions(fs::Permissions::from_mode(mode))
            .map_err(|e| GateError::io("set permissions on", &tmp, e))?;
        file.sync_all()
            .map_err(|e| GateError::io("sync", &tmp, e))?;
        fs::rename(&tmp, path).map_err(|e| GateError::io("rename into", path, e))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_one_fixture_keeps_loading() {
        let text = include_str!("../tests/fixtures/stop-v1.json");
        let stop = StopFile::parse(text.as_bytes()).unwrap();
        assert_eq!(stop.scope, Scope::Repo);
        assert_eq!(stop.who, "ada@example.org");
        assert_eq!(stop.agent, None);
    }

    #[test]
    fn unknown_fields_are_ignored_and_missing_optionals_default() {
        let stop = StopFile::parse(
            br#"{"scope":"everywhere","reason":"r","who":"w","when":"t","future":1}"#,
        )
        .unwrap();
        assert_eq!(stop.version, FORMAT_VERSION);
        assert_eq!(stop.repo, None);
    }

    #[test]
    fn a_missing_required_field_does_not_parse() {
        assert!(StopFile::parse(br#"{"scope":"repo","who":"w","when":"t"}"#).is_err());
        assert!(
            StopFile::parse(br#"{"scope":"planet","reason":"r","who":"w","when":"t"}"#).is_err()
        );
    }
}
