//! Agent profiles: files that give a subagent a name, a description, its
//! instructions, and optionally a narrower tool list and a model. They are
//! found in the same three layers as skills, by the same code
//! ([`SkillDirs::discover_named`]), and the first layer to name a profile
//! wins (docs/subagents.md, "Agent profiles").
//!
//! A profile is one Markdown file, `<name>.md`, with the skills' front
//! matter and two more keys:
//!
//! ```text
//! ---
//! name: reviewer
//! description: Reads a change and says what is wrong with it
//! tools: read_file, grep, glob
//! model: local/qwen2.5-coder
//! ---
//! You review changes. ...
//! ```
//!
//! `tools` can only narrow: a subagent is offered the tools it names that
//! its session would offer anyway, and nothing it does not name.

use std::path::{Path, PathBuf};

use chock_policy::SkillLayer;

use crate::ToolName;
use crate::skills::{LayerNames, SkillDirs, front_matter, name_and_description, read_below};

/// Where agent profiles live.
pub const AGENT_LAYERS: LayerNames = LayerNames {
    dir: "agents",
    project: ".chock/agents",
    env: "CHOCK_AGENTS_PATH",
};

/// Most bytes of a profile's file.
const MAX_PROFILE: usize = 64 * 1024;

/// One agent profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    pub name: String,
    pub description: String,
    pub layer: SkillLayer,
    /// The file it was read from.
    pub file: PathBuf,
    /// What the subagent is told before its task.
    pub instructions: String,
    /// The built-in tools it may use, when the profile narrows them.
    pub tools: Option<Vec<ToolName>>,
    /// Its model, `instance/model`, when the profile names one.
    pub model: Option<String>,
}

/// Every profile of a session, and a sentence for each file skipped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Profiles {
    pub offered: Vec<Profile>,
    pub skipped: Vec<String>,
}

impl Profiles {
    /// The profiles of every layer of `dirs` (made with [`AGENT_LAYERS`]).
    pub fn load(dirs: &SkillDirs) -> Profiles {
        let mut profiles = Profiles::default();
        let mut seen: Vec<PathBuf> = Vec::new();
        for (layer, dir, guessed) in dirs.each() {
            let real = dir.canonicalize().unwrap_or_else(|_| dir.to_owned());
            if seen.contains(&real) || (guessed && std::fs::metadata(dir).is_err()) {
                continue;
            }
            seen.push(real);
            profiles.read_layer(layer, dir);
        }
        profiles
    }

    /// The layers' profiles from the environment, for `project`.
    pub fn discover(project: &Path) -> Profiles {
        Profiles::load(&SkillDirs::discover_named(AGENT_LAYERS, None, project))
    }

    fn read_layer(&mut self, layer: SkillLayer, dir: &Path) {
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return,
            Err(err) => {
                self.skipped.push(format!(
                    "the {} agents directory {} cannot be read ({err}), so none of its profiles are offered: fix its permissions or remove it",
                    layer.as_str(),
                    dir.display()
                ));
                return;
            }
        };
        let top = (layer == SkillLayer::Project).then(|| dir.canonicalize().ok());
        let mut files: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "md"))
            .collect();
        files.sort();
        for file in files {
            let Some(rel) = file.file_name().map(Path::new) else {
                continue;
            };
            let read = read_below(top.as_ref().map(Option::as_deref), dir, rel)
                .and_then(|text| profile(layer, &file, &text));
            match read {
                Ok(p) if self.find(&p.name).is_some() => {}
                Ok(p) => self.offered.push(p),
                Err(why) => self.skipped.push(format!(
                    "the {} agent profile {} is skipped: {why}",
                    layer.as_str(),
                    file.display()
                )),
            }
        }
    }

    /// The offered profile named `name`.
    pub fn find(&self, name: &str) -> Option<&Profile> {
        self.offered.iter().find(|p| p.name == name)
    }

    /// The names, for an error that says which exist.
    pub fn names(&self) -> String {
        if self.offered.is_empty() {
            return "there are none".to_owned();
        }
        let names: Vec<&str> = self.offered.iter().map(|p| p.name.as_str()).collect();
        format!("the profiles are: {}", names.join(", "))
    }

    /// What the model is told at the start: each profile's name, layer and
    /// description. Empty when there are none.
    pub fn instructions(&self) -> String {
        if self.offered.is_empty() {
            return String::new();
        }
        let mut out = String::from(
            "Agent profiles you can name in spawn_agent's \"agent\" (a profile gives the subagent its instructions and may narrow its tools):\n",
        );
        for p in &self.offered {
            out.push_str(&format!(
                "- {} ({}): {}\n",
                p.name,
                p.layer.as_str(),
                p.description
            ));
        }
        out
    }
}

/// A profile file's fields, or what is wrong with them.
fn profile(layer: SkillLayer, file: &Path, text: &str) -> Result<Profile, String> {
    if text.len() > MAX_PROFILE {
        return Err(format!(
            "it is over {MAX_PROFILE} bytes: keep a profile's instructions short"
        ));
    }
    let (front, body) = front_matter(text)?;
    let (name, description) = name_and_description(&front)?;
    let get = |want: &str| {
        front
            .iter()
            .rev()
            .find(|(key, _)| key == want)
            .map(|(_, value)| value.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    let tools = match get("tools") {
        None => None,
        Some(list) => {
            let mut tools = Vec::new();
            for word in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
                let tool = ToolName::parse(word).ok_or_else(|| {
                    format!(
                        "its tools name '{word}', which is no tool: the tools are {}",
                        ToolName::ALL.map(ToolName::as_str).join(", ")
                    )
                })?;
                tools.push(tool);
            }
            Some(tools)
        }
    };
    Ok(Profile {
        name,
        description,
        layer,
        file: file.to_owned(),
        instructions: body.trim().to_owned(),
        tools,
        model: get("model"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirs(root: &Path) -> SkillDirs {
        SkillDirs {
            operator: Some(root.join("op")),
            project: Some(root.join("pr/.chock/agents")),
            packaged: vec![root.join("pk")],
            profiles: Vec::new(),
        }
    }

    fn write(dir: &Path, name: &str, text: &str) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join(format!("{name}.md")), text).unwrap();
    }

    #[test]
    fn a_profile_gives_its_instructions_tools_and_model_and_the_first_layer_wins() {
        let root = tempfile::tempdir().unwrap();
        write(
            &root.path().join("op"),
            "reviewer",
            "---\nname: reviewer\ndescription: reads a change\ntools: read_file, grep\nmodel: fake/m\n---\nBe strict.\n",
        );
        write(
            &root.path().join("pr/.chock/agents"),
            "reviewer",
            "---\nname: reviewer\ndescription: the project's\n---\nBe kind.\n",
        );
        write(
            &root.path().join("pk"),
            "broken",
            "---\nname: broken\ndescription: x\ntools: read_file, teleport\n---\n",
        );
        let profiles = Profiles::load(&dirs(root.path()));
        let reviewer = profiles.find("reviewer").unwrap();
        assert_eq!(reviewer.layer, SkillLayer::Operator);
        assert_eq!(reviewer.instructions, "Be strict.");
        assert_eq!(
            reviewer.tools,
            Some(vec![ToolName::ReadFile, ToolName::Grep])
        );
        assert_eq!(reviewer.model.as_deref(), Some("fake/m"));
        assert!(profiles.find("broken").is_none());
        assert!(
            profiles.skipped[0].contains("'teleport', which is no tool"),
            "{:?}",
            profiles.skipped
        );
        assert!(
            profiles
                .instructions()
                .contains("- reviewer (operator): reads a change")
        );
    }
}
