//! Trust: Codex and Gemini CLI skip a project's hooks unless the person
//! trusts the project, and Codex also skips any hook the person has not
//! reviewed. A wired file those clients will skip is reported as pending
//! trust, with what the person must do.

use std::fs;
use std::path::Path;

use serde_json::Value;

use super::{Level, Row, State};

pub(super) fn annotate(rows: &mut [Row], project: &Path, home: &Path) {
    let project_real = fs::canonicalize(project).unwrap_or_else(|_| project.to_owned());
    let codex_home = std::env::var_os("CODEX_HOME")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| home.join(".codex"));
    for row in rows.iter_mut().filter(|r| r.state == State::Wired) {
        match (row.client, row.level) {
            ("codex", level) => {
                let config = codex_home.join("config.toml");
                let mut needs = Vec::new();
                if level == Level::Project {
                    match codex_project_trusted(&config, &project_real) {
                        Ok(true) => {}
                        Ok(false) => needs.push(format!(
                            "Codex reads .codex/ only in a trusted project: trust {} when Codex asks, or set [projects.\"{}\"] trust_level = \"trusted\" in {}",
                            project_real.display(),
                            project_real.display(),
                            config.display()
                        )),
                        Err(problem) => {
                            row.state = State::Invalid(problem);
                            continue;
                        }
                    }
                }
                if !codex_hook_trusted(&config, &row.path) {
                    needs.push("Codex runs a new or changed hook only after it is trusted: open codex, run /hooks and trust the chock stop check".to_owned());
                }
                if !needs.is_empty() {
                    row.state = State::PendingTrust(needs.join("; "));
                }
            }
            ("gemini", Level::Project) => match gemini_folder_trusted(home, &project_real) {
                Ok(true) => {}
                Ok(false) => {
                    row.state = State::PendingTrust(format!(
                        "Gemini CLI reads .gemini/settings.json only in a trusted folder: trust {} when Gemini asks (it is recorded in {}), or run 'chock sync --user-level'",
                        project_real.display(),
                        home.join(".gemini/trustedFolders.json").display()
                    ));
                }
                Err(problem) => row.state = State::Invalid(problem),
            },
            _ => {}
        }
    }
}

fn read_codex_config(config: &Path) -> Result<Option<toml_edit::DocumentMut>, String> {
    match fs::read_to_string(config) {
        Ok(text) => text
            .parse::<toml_edit::DocumentMut>()
            .map(Some)
            .map_err(|e| {
                format!(
                    "{} is not valid TOML: {}; fix it by hand, chock will not touch it",
                    config.display(),
                    e.to_string().trim()
                )
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot read {}: {e}", config.display())),
    }
}

/// `[projects."<path>"] trust_level = "trusted"` for the project or an ancestor.
fn codex_project_trusted(config: &Path, project: &Path) -> Result<bool, String> {
    let Some(doc) = read_codex_config(config)? else {
        return Ok(false);
    };
    let Some(projects) = doc.get("projects").and_then(|p| p.as_table_like()) else {
        return Ok(false);
    };
    Ok(project.ancestors().any(|dir| {
        projects
            .get(&dir.to_string_lossy())
            .and_then(|entry| entry.as_table_like())
            .and_then(|entry| entry.get("trust_level"))
            .and_then(|level| level.as_str())
            == Some("trusted")
    }))
}

/// Codex records hook trust as `[hooks.state."<key>"] trusted_hash = ...`.
/// The key's exact form is Codex's own; an entry whose key names this hooks
/// file and carries a hash is taken as trust recorded. Chock cannot check the
/// hash itself, so a changed hook still shows here until Codex re-trusts it.
fn codex_hook_trusted(config: &Path, hooks_file: &Path) -> bool {
    let Ok(Some(doc)) = read_codex_config(config) else {
        return false;
    };
    let Some(state) = doc
        .get("hooks")
        .and_then(|h| h.get("state"))
        .and_then(|s| s.as_table_like())
    else {
        return false;
    };
    let file = hooks_file.to_string_lossy();
    state.iter().any(|(key, entry)| {
        key.contains(file.as_ref())
            && entry
                .as_table_like()
                .and_then(|t| t.get("trusted_hash"))
                .and_then(|h| h.as_str())
                .is_some()
    })
}

/// `~/.gemini/trustedFolders.json`: `TRUST_FOLDER` on the project or an
/// ancestor, or `TRUST_PARENT` on a child of an ancestor.
fn gemini_folder_trusted(home: &Path, project: &Path) -> Result<bool, String> {
    let file = home.join(".gemini/trustedFolders.json");
    let text = match fs::read_to_string(&file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(format!("cannot read {}: {e}", file.display())),
    };
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        format!(
            "{} is not valid JSON at line {}, column {}: {e}",
            file.display(),
            e.line(),
            e.column()
        )
    })?;
    let Some(map) = value.as_object() else {
        return Ok(false);
    };
    let mut trusted = false;
    for (path, level) in map {
        let path = Path::new(path);
        match level.as_str() {
            Some("DO_NOT_TRUST") if path == project => return Ok(false),
            Some("TRUST_FOLDER") if project.starts_with(path) => trusted = true,
            Some("TRUST_PARENT") if path.parent().is_some_and(|p| project.starts_with(p)) => {
                trusted = true;
            }
            _ => {}
        }
    }
    Ok(trusted)
}
