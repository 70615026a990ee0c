//! The files `chock style check` reads: the ones named, each relative to
//! the project root for the rules' globs, or with none named every file
//! under the project a rule applies to (leaving out hidden directories,
//! `target` and `node_modules`, which hold what a build or a package
//! manager made rather than the project's own code).

use std::path::{Path, PathBuf};

use crate::{Report, Rules};

/// Directories a walk of the project does not enter.
const SKIPPED: &[&str] = &["target", "node_modules"];

/// One file's outcome: its report, or why it was not checked.
pub type Checked = Result<Report, String>;

impl Rules {
    /// Checks `files` (as a person named them, relative to the current
    /// directory), or every file under `project` a rule applies to.
    pub fn check_files(&self, project: &Path, files: &[PathBuf]) -> Vec<Checked> {
        if files.is_empty() {
            return walk(project)
                .into_iter()
                .filter(|rel| self.applies(rel))
                .map(|rel| self.check_one(&project.join(&rel), rel))
                .collect();
        }
        files
            .iter()
            .map(|file| {
                let full = file
                    .canonicalize()
                    .map_err(|err| format!("{}: cannot read it: {err}", file.display()))?;
                let rel = full
                    .strip_prefix(project)
                    .map_err(|_| {
                        format!(
                            "{}: it is outside the project {}, whose rules are read; pass --project",
                            file.display(),
                            project.display()
                        )
                    })?
                    .to_string_lossy()
                    .into_owned();
                self.check_one(&full, rel)
            })
            .collect()
    }

    fn check_one(&self, full: &Path, rel: String) -> Checked {
        let content = std::fs::read(full).map_err(|err| format!("{rel}: cannot read it: {err}"))?;
        let text = String::from_utf8(content)
            .map_err(|_| format!("{rel}: it is not UTF-8 text, so no rule parses it"))?;
        Ok(self.check(&rel, &text))
    }
}

/// Every file under `root`, relative to it, sorted.
fn walk(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(root.join(&rel)) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = rel.join(&*name);
            if kind.is_dir() {
                if !name.starts_with('.') && !SKIPPED.contains(&&*name) {
                    stack.push(path);
                }
            } else if kind.is_file() {
                out.push(path.to_string_lossy().into_owned());
            }
        }
    }
    out.sort();
    out
}
