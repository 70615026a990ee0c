//! The session's plugins at its start (docs/plugins.md): which are found,
//! which of their tools are offered, which host functions each instance is
//! built with, and what the log says of each.
//!
//! Everything here is read before the first turn, when nobody can be asked:
//! a tool denied at `plugin.<name>.tool.<tool>` is kept out (no context
//! spent); a tool one of whose capabilities is not allowed outright at its
//! action (`fs.read`, `fs.write`) is not offered either, since the host
//! functions are linked once, now. The instance is then built with the
//! capabilities of the offered tools and no others, so an import of any
//! other cannot be satisfied and the plugin does not start. Each tool
//! offered is decided again at every call, by the judge, like any call.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::path::Path;
use std::rc::Rc;

use chock_log::event::Notice;
use chock_log::{LogWriter, StateDir, WriteError};
use chock_plugins::{Bounds, Capability, Engine, Manifest, ToolDecl};
use chock_policy::{Action, Decision, Policy};
use chock_tools::plugins::{PluginTools, WorkspaceFiles, find_plugin};

use crate::judge::decision_event;

/// Starts every plugin `policy` enables into `plugins`, its commands'
/// workspace at `root`, recording each decision and a notice per plugin.
pub(crate) fn start(
    policy: &Policy,
    project: &Path,
    root: &Path,
    state: &StateDir,
    writer: &RefCell<LogWriter>,
    plugins: &PluginTools,
) -> Result<(), WriteError> {
    if policy.plugins().is_empty() {
        return Ok(());
    }
    let engine = match Engine::new(Some(state.root().join("cache").join("plugins"))) {
        Ok(engine) => engine,
        Err(err) => return say(writer, format!("no plugin starts: {err}")),
    };
    for name in policy.plugins() {
        let text = match start_one(policy, project, root, &engine, writer, plugins, name)? {
            Ok(text) | Err(text) => text,
        };
        say(writer, text)?;
    }
    Ok(())
}

/// One plugin: `Ok` with the notice of what it offers, `Err` with why it
/// offers nothing.
fn start_one(
    policy: &Policy,
    project: &Path,
    root: &Path,
    engine: &Engine,
    writer: &RefCell<LogWriter>,
    plugins: &PluginTools,
    name: &str,
) -> Result<Result<String, String>, WriteError> {
    let not_started = |why: String| {
        Err(format!(
            "the plugin {name} did not start: {why}; its tools are not offered, and the session carries on without it"
        ))
    };
    let dir = match find_plugin(name, project) {
        Ok((_, dir)) => dir,
        Err(looked) => {
            return Ok(not_started(format!(
                "no layer holds {name}/{} (looked in {})",
                chock_plugins::MANIFEST,
                looked
                    .iter()
                    .map(|d| d.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    };
    let manifest = match Manifest::load(&dir) {
        Ok(manifest) if manifest.name == name => manifest,
        Ok(manifest) => {
            return Ok(not_started(format!(
                "{} names itself {}, not {name}",
                dir.join(chock_plugins::MANIFEST).display(),
                manifest.name
            )));
        }
        Err(err) => return Ok(not_started(err.to_string())),
    };
    let mut offered: Vec<&ToolDecl> = Vec::new();
    let mut kept_out: Vec<String> = Vec::new();
    for tool in &manifest.tools {
        let Ok(action) = Action::plugin_tool(name, &tool.name) else {
            continue;
        };
        if !policy.offered_at_start(&action) {
            writer
                .borrow_mut()
                .append(decision_event(&policy.decide(&action), None))?;
            kept_out.push(format!("{} (denied at {action})", tool.name));
            continue;
        }
        match refused_capability(policy, writer, tool)? {
            Some(why) => kept_out.push(format!("{} ({why})", tool.name)),
            None => offered.push(tool),
        }
    }
    let linked: BTreeSet<Capability> = offered
        .iter()
        .flat_map(|tool| tool.capabilities.iter().copied())
        .collect();
    let said_out = if kept_out.is_empty() {
        String::new()
    } else {
        format!("; not offered: {}", kept_out.join(", "))
    };
    if offered.is_empty() {
        return Ok(Err(format!(
            "the plugin {name} {} offers no tool{said_out}",
            manifest.version
        )));
    }
    let module = match engine.module(&dir.join(&manifest.module), &manifest) {
        Ok(module) => module,
        Err(err) => return Ok(not_started(format!("{err}{said_out}"))),
    };
    let files = Rc::new(WorkspaceFiles::new(root));
    let instance = match engine.instantiate(&module, &linked, files, Bounds::default()) {
        Ok(instance) => instance,
        Err(err) => return Ok(not_started(format!("{err}{said_out}"))),
    };
    plugins.add(name, &manifest.version, instance, &offered);
    let names: Vec<&str> = offered.iter().map(|t| t.name.as_str()).collect();
    let caps: Vec<&str> = linked.iter().map(|c| c.as_str()).collect();
    Ok(Ok(format!(
        "the plugin {name} {} started and offers {}: {}; linked with {}{said_out}",
        manifest.version,
        if names.len() == 1 {
            "1 tool".to_owned()
        } else {
            format!("{} tools", names.len())
        },
        names.join(", "),
        if caps.is_empty() {
            "no host function".to_owned()
        } else {
            caps.join(", ")
        }
    )))
}

/// The first capability of `tool` its action does not allow outright (read
/// now, before any guest code runs: only allow links a host function).
fn refused_capability(
    policy: &Policy,
    writer: &RefCell<LogWriter>,
    tool: &ToolDecl,
) -> Result<Option<String>, WriteError> {
    for cap in &tool.capabilities {
        let Some(name) = cap.action() else {
            continue;
        };
        let Ok(action) = name.parse::<Action>() else {
            continue;
        };
        let verdict = policy.decide_before_first_turn(&action);
        writer.borrow_mut().append(decision_event(&verdict, None))?;
        if verdict.decision != Decision::Allow {
            return Ok(Some(format!(
                "its capability {} needs {action} allowed outright, and the policy answers {}",
                cap.as_str(),
                verdict.decision
            )));
        }
    }
    Ok(None)
}

fn say(writer: &RefCell<LogWriter>, text: String) -> Result<(), WriteError> {
    tracing::info!(target: "chock::plugins", "{text}");
    writer.borrow_mut().append(Notice {
        subject: "plugins".to_owned(),
        text,
    })?;
    Ok(())
}
