//! The session's plugins' tools (docs/plugins.md): each instance made at
//! the session's start, the specs of the tools offered, the model's name of
//! each (`plugin__<plugin>__<tool>`), and a decided call carried out on the
//! session's thread within the plugin's bounds. Which tools are offered and
//! which host functions are linked is decided before any of this, by the
//! runner at the session's start.

use std::cell::RefCell;
use std::path::Path;

use chock_plugins::{Called, Instance, ToolDecl};
use chock_providers::ToolSpec;

use crate::{Effect, ToolOutput, Workspace};

/// The name the model calls a plugin's tool by.
pub fn model_name(plugin: &str, tool: &str) -> String {
    format!("plugin__{plugin}__{tool}")
}

/// One plugin's instance and the tools of it offered.
#[derive(Debug)]
struct Loaded {
    name: String,
    instance: Instance,
    tools: Vec<(String, ToolSpec)>,
}

/// The plugins of one session.
#[derive(Debug, Default)]
pub struct PluginTools {
    loaded: RefCell<Vec<Loaded>>,
}

impl PluginTools {
    /// Offers `tools` of the plugin `name` (`version`), whose instance is
    /// `instance`.
    pub fn add(&self, name: &str, version: &str, instance: Instance, tools: &[&ToolDecl]) {
        let tools = tools
            .iter()
            .map(|tool| {
                let description = if tool.description.trim().is_empty() {
                    format!("(from the plugin {name} {version})")
                } else {
                    format!(
                        "{} (from the plugin {name} {version})",
                        tool.description.trim()
                    )
                };
                (
                    tool.name.clone(),
                    ToolSpec {
                        name: model_name(name, &tool.name),
                        description,
                        parameters: tool.parameters.clone(),
                    },
                )
            })
            .collect();
        self.loaded.borrow_mut().push(Loaded {
            name: name.to_owned(),
            instance,
            tools,
        });
    }

    /// The specs of every tool offered.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.loaded
            .borrow()
            .iter()
            .flat_map(|p| p.tools.iter().map(|(_, spec)| spec.clone()))
            .collect()
    }

    /// The plugin and tool a model's tool name is, when it is one offered.
    pub fn find(&self, model_name: &str) -> Option<(String, String)> {
        self.loaded.borrow().iter().find_map(|plugin| {
            plugin
                .tools
                .iter()
                .find(|(_, spec)| spec.name == model_name)
                .map(|(tool, _)| (plugin.name.clone(), tool.clone()))
        })
    }

    /// Carries out a decided call of `plugin`'s `tool`: what it logged is
    /// the call's notice, a trap or a bound its result, named.
    pub(crate) fn call(
        &self,
        plugin: &str,
        tool: &str,
        arguments: &serde_json::Value,
    ) -> ToolOutput {
        let mut loaded = self.loaded.borrow_mut();
        let Some(found) = loaded.iter_mut().find(|p| p.name == plugin) else {
            return ToolOutput::error(format!(
                "nothing in this session provides the plugin {plugin}"
            ));
        };
        let Called { result, said } = found.instance.call(tool, &arguments.to_string());
        let output = match result {
            Ok(text) => ToolOutput::ok(text),
            Err(err) => ToolOutput::error(format!(
                "the plugin {plugin}'s tool {tool} gave no result: {err}; the session carries on"
            )),
        };
        if said.is_empty() {
            output
        } else {
            output.with_effect(Effect::Notice {
                subject: "plugin".to_owned(),
                text: said
                    .iter()
                    .map(|line| format!("{plugin}: {line}"))
                    .collect::<Vec<_>>()
                    .join("\n"),
            })
        }
    }
}

/// The workspace as a plugin's `fs.read` and `fs.write` reach it: through
/// the same confinement the file tools have (a path outside the workspace,
/// or through a link out of it, is refused).
#[derive(Debug)]
pub struct WorkspaceFiles {
    workspace: Workspace,
}

impl WorkspaceFiles {
    /// The workspace at `root`, which may still be being made.
    pub fn new(root: &Path) -> WorkspaceFiles {
        WorkspaceFiles {
            workspace: Workspace::planned(root.to_owned()),
        }
    }
}

impl chock_plugins::Files for WorkspaceFiles {
    fn read(&self, path: &str) -> Result<Vec<u8>, String> {
        let path = self
            .workspace
            .resolve(path)
            .map_err(|err| err.to_string())?;
        std::fs::read(path).map_err(|err| err.to_string())
    }

    fn write(&self, path: &str, data: &[u8]) -> Result<(), String> {
        let path = self
            .workspace
            .resolve_for_write(path)
            .map_err(|err| err.to_string())?;
        std::fs::write(path, data).map_err(|err| err.to_string())
    }
}

/// Where plugins live: the same three layers as skills.
pub const PLUGIN_LAYERS: crate::skills::LayerNames = crate::skills::LayerNames {
    dir: "plugins",
    project: ".chock/plugins",
    env: "CHOCK_PLUGINS_PATH",
};

/// The directory of the plugin `name`: the first layer (operator, project,
/// packaged) that holds `<name>/plugin.json`, with the layer; else every
/// directory looked in.
pub fn find_plugin(
    name: &str,
    project: &Path,
) -> Result<(chock_policy::SkillLayer, std::path::PathBuf), Vec<std::path::PathBuf>> {
    let dirs = crate::SkillDirs::discover_named(PLUGIN_LAYERS, None, project);
    let mut looked = Vec::new();
    for (layer, dir, _guessed) in dirs.each() {
        let candidate = dir.join(name);
        if candidate.join(chock_plugins::MANIFEST).is_file() {
            return Ok((layer, candidate));
        }
        looked.push(dir.to_owned());
    }
    Err(looked)
}
