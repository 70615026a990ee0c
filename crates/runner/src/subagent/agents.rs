//! [`Agents`]: what a session needs to start subagents (the program, the
//! config, the bounds, the profiles, its depth) and, for a subagent, what it
//! is a child of.

use std::path::PathBuf;

use chock_log::SessionId;
use chock_tools::agents::{Profile, Profiles};

use super::lineage::Lineage;
use super::tree;
use crate::config::{Config, SubagentBounds};

/// What a session needs to start subagents, and to be one.
#[derive(Debug)]
pub struct Agents {
    /// The program that runs a child session (`chock-full` itself).
    pub(crate) exe: PathBuf,
    /// The operator's config, for the model a child is given.
    pub(crate) config: Config,
    pub(crate) config_path: PathBuf,
    pub(crate) bounds: SubagentBounds,
    /// The profiles a child may be given.
    pub(crate) profiles: Profiles,
    /// Sessions above this one (0 for a session a person started).
    pub(crate) depth: usize,
    /// What this session is a child of, when it is a subagent.
    pub(crate) lineage: Option<Lineage>,
}

impl Agents {
    /// Whether this session may start a subagent at all.
    pub(crate) fn can_spawn(&self) -> bool {
        self.depth < self.bounds.max_depth && self.bounds.max_live > 0
    }

    /// The built-in tools this session is narrowed to, when it is a child
    /// given a profile that names them.
    pub(crate) fn only_tools(&self) -> Option<Vec<&'static str>> {
        let tools = self.lineage.as_ref()?.profile.as_ref()?.tools.as_ref()?;
        Some(tools.iter().map(|t| t.as_str()).collect())
    }

    /// What a child's questions are prefixed with: both sessions.
    pub(crate) fn asker(&self, id: &SessionId) -> Option<String> {
        self.lineage
            .as_ref()
            .map(|l| format!("subagent {} of session {}", id.as_str(), l.parent.as_str()))
    }

    /// What the model is told of subagents beyond the tool's own
    /// description: the profiles it may name and, for a child, that it is
    /// one and its profile's instructions.
    pub(crate) fn instructions(&self) -> String {
        let mut out = String::new();
        if let Some(lineage) = &self.lineage {
            out.push_str(&format!(
                "\nYou are a subagent of session {}: it gave you the task below and reads only your final answer, so end with what you found or changed. You work in its workspace under its policy.\n",
                lineage.parent.as_str()
            ));
            if let Some(Profile {
                name, instructions, ..
            }) = &lineage.profile
                && !instructions.is_empty()
            {
                out.push_str(&format!("\nThe agent profile '{name}':\n{instructions}\n"));
            }
        }
        if self.can_spawn() {
            let listed = self.profiles.instructions();
            if !listed.is_empty() {
                out.push('\n');
                out.push_str(&listed);
            }
        }
        out
    }
}

impl Agents {
    /// A session's subagents as config.zon and the state directory say:
    /// its depth (its parent's and one), the bounds and the profiles.
    pub(crate) fn for_session(
        state: &chock_log::StateDir,
        config: &Config,
        config_path: &std::path::Path,
        project: &std::path::Path,
        lineage: Option<Lineage>,
    ) -> Agents {
        let depth = lineage
            .as_ref()
            .map_or(0, |l| tree::place(state, &l.parent).0 + 1);
        Agents {
            // Without its own program a session starts no child; it runs.
            exe: std::env::current_exe().unwrap_or_default(),
            config: config.clone(),
            config_path: config_path.to_owned(),
            bounds: config.subagents,
            profiles: Profiles::discover(project),
            depth,
            lineage,
        }
    }
}
