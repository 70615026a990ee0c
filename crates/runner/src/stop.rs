//! The stop, as a session reads it: before every tool call, every
//! connection its commands open, every background command's start and every
//! run-time tool's call, the session reads the stop files that reach its
//! project (chock-gate's fail-closed reader: the repository's
//! `.chock/stop.json`, its registry entry and `_everywhere.json`, the
//! agent being `chock`). A stop in force, or a stop file that cannot be
//! read, refuses the action; the refusal is a `block` line in the decision
//! log beside the `decision` event in the session's own log, and the session
//! ends its turn and then itself with the reason `stopped`.

use std::path::{Path, PathBuf};

use chock_gate::{StopPaths, Stopped};

/// Where a session reads its stop and logs what it refused.
#[derive(Debug, Clone)]
pub(crate) struct StopCheck {
    /// The machine's stop registry (`~/.chock/stops`), or why there is none
    /// to read: then every action is refused, as the hooks refuse.
    paths: Result<StopPaths, String>,
    /// The person's project (never the session's checkout, whose files a
    /// command wrote).
    project: PathBuf,
    /// The machine's decision log.
    decisions: PathBuf,
}

impl StopCheck {
    /// The stops of the person's `project` on this machine (the registry
    /// under `$HOME`), refusals logged to `decisions`.
    pub(crate) fn new(project: &Path, decisions: PathBuf) -> StopCheck {
        StopCheck {
            paths: StopPaths::from_env().map_err(|err| err.to_string()),
            project: project.to_owned(),
            decisions,
        }
    }

    /// The stop in force for the project now, read fresh each time (a
    /// handful of `stat`s and at most three small reads).
    pub(crate) fn read(&self) -> Result<(), Stopped> {
        match &self.paths {
            Ok(paths) => chock_gate::check_stop_in(paths, &self.project),
            Err(err) => Err(Stopped::unreadable(Path::new("~/.chock/stops"), err)),
        }
    }

    /// Writes the refusal of `action` to the decision log: a `block` line
    /// with reason `stopped` and source `session`. The call is refused
    /// whatever happens here; a failure is only reported.
    pub(crate) fn log_block(&self, action: &str, stopped: &Stopped) {
        if let Err(err) =
            chock_gate::log_session_block(&self.decisions, &self.project, action, stopped)
        {
            tracing::warn!(
                target: "chock::stop",
                "the refusal of {action} could not be written to {}: {err}",
                self.decisions.display()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A check of `project`'s stops in a registry of its own.
    fn check(root: &Path, project: &Path) -> StopCheck {
        StopCheck {
            paths: Ok(StopPaths::under_home(&root.join("home"))),
            project: project.to_owned(),
            decisions: root.join("decisions.jsonl"),
        }
    }

    /// A way a stop file can be bad: what the refusal says, and how to make it.
    type BadStop = (&'static str, fn(&Path));

    #[test]
    fn the_stop_is_read_fresh_for_each_action_and_a_bad_stop_file_refuses() {
        let root = tempfile::tempdir().unwrap();
        let project = chock_testkit::git_repo(&root.path().join("shop"));
        let stop = check(root.path(), &project);
        assert!(stop.read().is_ok());
        let file = project.join(".chock/stop.json");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(
            &file,
            r#"{"version":1,"scope":"repo","reason":"lunch","who":"ada@example.org","when":"2026-12-01T12:00:00Z"}"#,
        )
        .unwrap();
        let refused = stop.read().unwrap_err().to_string();
        assert!(refused.starts_with("stopped: lunch (stopped by ada@example.org at 2026-12-01T12:00:00Z; a person lifts it with 'chock resume')"), "{refused}");
        std::fs::remove_file(&file).unwrap();
        assert!(stop.read().is_ok(), "lifted between two actions");
        let bad: [BadStop; 3] = [
            ("cannot be parsed", |file| {
                std::fs::write(file, r#"{"version":1,"sco"#).unwrap();
            }),
            ("is a directory", |file| std::fs::create_dir(file).unwrap()),
            ("is a symlink", |file| {
                std::os::unix::fs::symlink("/nonexistent/stop.json", file).unwrap();
            }),
        ];
        for (says, make) in bad {
            make(&file);
            let refused = stop.read().unwrap_err().to_string();
            assert!(refused.contains(says), "{refused}");
            assert!(refused.contains("so every agent is refused"), "{refused}");
            let _ = std::fs::remove_file(&file);
            let _ = std::fs::remove_dir(&file);
            assert!(stop.read().is_ok());
        }
    }

    #[test]
    fn with_no_registry_to_read_every_action_is_refused() {
        let stop = StopCheck {
            paths: Err("HOME is not set".to_owned()),
            project: PathBuf::from("/nonexistent"),
            decisions: PathBuf::from("/nonexistent/decisions.jsonl"),
        };
        let refused = stop.read().unwrap_err().to_string();
        assert!(refused.contains("~/.chock/stops"), "{refused}");
    }
}
