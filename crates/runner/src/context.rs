//! What a session's first request is told besides the base prompt: the
//! project's guidance files at its root and the operator's own AGENTS.md,
//! the project's memory, each offered skill's name and description, and
//! the secrets a command can ask for (docs/skills.md, docs/secrets.md).
//!
//! Each file is bounded ([`FILE_BOUND`]) and cut with a note saying where
//! the rest is read, so a large AGENTS.md costs a known amount of context.
//! The project's files are read from the project directory, where chock.zon
//! is read, as the person's checkout holds them: the session's commands
//! cannot write there, and the checkout the session works in is still being
//! made when the first request goes out. `read_guidance` stays for nested
//! directories. The log records which files were read and their sizes
//! ([`StartContext::record`]), not their text.

use std::path::{Path, PathBuf};

use chock_policy::{BindTarget, Policy};
use chock_tools::{GUIDANCE_FILES, Skills};

/// Bytes of one guidance file, or of the memory, the instructions hold.
pub const FILE_BOUND: usize = 16 * 1024;

/// One file the instructions hold part or all of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loaded {
    /// What it is, as the log says it (`AGENTS.md`, `operator AGENTS.md at
    /// <path>`, `memory`).
    pub what: String,
    /// Its size in bytes.
    pub bytes: usize,
    /// Whether it was cut to [`FILE_BOUND`].
    pub cut: bool,
}

/// The session's start: the instructions, what they were made from, its
/// skills, and the sentences a person is told once.
#[derive(Debug, Default)]
pub struct StartContext {
    pub instructions: String,
    pub loaded: Vec<Loaded>,
    pub skills: Skills,
    /// Unread blocks of the policy files and skipped skills, one line each.
    pub notes: Vec<String>,
}

/// Where the session's start reads from.
#[derive(Debug)]
pub struct Sources<'a> {
    pub base: &'a str,
    pub project: &'a Path,
    /// `$XDG_CONFIG_HOME/chock/AGENTS.md`.
    pub operator_guidance: Option<PathBuf>,
    /// The project's memory file.
    pub memory: PathBuf,
    pub policy: &'a Policy,
    pub skills: Skills,
}

impl StartContext {
    /// Reads every source. Nothing here fails the session: a file that
    /// cannot be read is left out.
    pub fn gather(sources: Sources<'_>) -> StartContext {
        let mut loaded = Vec::new();
        let mut text = sources.base.to_owned();
        let mut guidance = String::new();
        if let Some(path) = &sources.operator_guidance
            && let Ok(body) = std::fs::read_to_string(path)
        {
            let what = format!("operator AGENTS.md at {}", path.display());
            guidance.push_str(&section(
                &what,
                &body,
                "read it with read_file if it matters",
                &mut loaded,
            ));
        }
        let root = sources.project.canonicalize().ok();
        for name in GUIDANCE_FILES {
            let path = sources.project.join(name);
            // A link out of the project is not followed, as read_guidance
            // does not follow one out of the workspace.
            let inside = path
                .canonicalize()
                .ok()
                .zip(root.as_ref())
                .is_some_and(|(real, root)| real.starts_with(root));
            if !inside {
                continue;
            }
            if let Ok(body) = std::fs::read_to_string(&path) {
                guidance.push_str(&section(
                    name,
                    &body,
                    "read_guidance reads it whole",
                    &mut loaded,
                ));
            }
        }
        if !guidance.is_empty() {
            text.push_str("\n\nThe project's guidance and the operator's, read at the start (read_guidance reads the files of nested directories):\n");
            text.push_str(&guidance);
        }
        if let Ok(notes) = std::fs::read_to_string(&sources.memory)
            && !notes.trim().is_empty()
        {
            text.push_str(
                "\n\nNotes earlier sessions of this project kept (write_memory replaces them):\n",
            );
            text.push_str(&section(
                "memory",
                &notes,
                "read_memory reads them whole",
                &mut loaded,
            ));
        }
        let skills = sources.skills.instructions();
        if !skills.is_empty() {
            text.push_str("\n\n");
            text.push_str(&skills);
        }
        let secrets: Vec<String> = sources
            .policy
            .secrets()
            .iter()
            .filter(|s| s.bind.target == BindTarget::Command)
            .map(|s| format!("{} (as ${})", s.name, s.bind.env))
            .collect();
        if !secrets.is_empty() {
            text.push_str(&format!(
                "\n\nSecrets a command can be given, by naming them in run_command's secrets (each use may be asked about; the value never shows, in output it reads as [secret NAME]): {}.\n",
                secrets.join(", ")
            ));
        }
        let mut notes: Vec<String> = sources.policy.unread_blocks().to_vec();
        notes.extend(sources.skills.skipped.iter().cloned());
        StartContext {
            instructions: text,
            loaded,
            skills: sources.skills,
            notes,
        }
    }

    /// What the log records of the start: the files read and their sizes,
    /// and the skills offered by layer.
    pub fn record(&self) -> String {
        let files: Vec<String> = self
            .loaded
            .iter()
            .map(|l| {
                if l.cut {
                    format!("{} ({} bytes, cut to {FILE_BOUND})", l.what, l.bytes)
                } else {
                    format!("{} ({} bytes)", l.what, l.bytes)
                }
            })
            .collect();
        let skills: Vec<String> = self
            .skills
            .offered
            .iter()
            .map(|s| format!("{} ({})", s.name, s.layer.as_str()))
            .collect();
        format!(
            "the instructions hold {}; skills offered: {}",
            if files.is_empty() {
                "no guidance or memory".to_owned()
            } else {
                files.join(", ")
            },
            if skills.is_empty() {
                "none".to_owned()
            } else {
                skills.join(", ")
            }
        )
    }
}

/// One file's text under a heading, cut to [`FILE_BOUND`] with a note
/// saying how much was kept and where the rest is.
fn section(what: &str, body: &str, whole: &str, loaded: &mut Vec<Loaded>) -> String {
    let bytes = body.len();
    let cut = bytes > FILE_BOUND;
    let mut kept = body;
    if cut {
        let mut end = FILE_BOUND;
        while !body.is_char_boundary(end) {
            end -= 1;
        }
        kept = &body[..end];
    }
    loaded.push(Loaded {
        what: what.to_owned(),
        bytes,
        cut,
    });
    let mut out = format!("== {what} ==\n{}\n", kept.trim_end());
    if cut {
        out.push_str(&format!(
            "[cut: the first {FILE_BOUND} of {bytes} bytes are shown; {whole}]\n"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_over_the_bound_is_cut_with_a_note() {
        let mut loaded = Vec::new();
        let body = "é".repeat(FILE_BOUND);
        let out = section(
            "AGENTS.md",
            &body,
            "read_guidance reads it whole",
            &mut loaded,
        );
        assert!(
            out.contains(&format!(
                "[cut: the first {FILE_BOUND} of {} bytes",
                body.len()
            )),
            "{out}"
        );
        assert!(out.len() < FILE_BOUND + 200);
        assert_eq!(
            loaded,
            vec![Loaded {
                what: "AGENTS.md".into(),
                bytes: body.len(),
                cut: true
            }]
        );
    }
}
