//! The typed builders, one per namespace of the policy reference. Each one
//! checks every value it is given before it becomes a segment.

use super::label::{
    is_attr_path, is_git_subcommand, is_label, is_model_id, is_relative_path, is_secret_name,
};
use super::{Action, ActionError, SkillLayer, host};

/// Tools whose call is decided at a key that fits them better; a `call.`
/// rule for one of them would decide nothing.
const NOT_CALLS: &[(&str, &str)] = &[
    ("run_command", "exec.<class>.<program>"),
    (
        "spawn_agent",
        "the parent's own policy, which a subagent inherits",
    ),
    ("update_plan", "no key: it only records the plan"),
    ("restrict_self", "no key: a promise only narrows"),
    ("fetch_url", "net.fetch.<host>"),
    ("ask_user", "no key: it asks a person"),
    ("set_title", "no key: it only names the session"),
    ("request_action", "the key of the act it requests"),
    ("serve_port", "net.serve.<port>"),
    ("web_search", "web.search"),
];

fn label(what: &'static str, value: &str) -> Result<(), ActionError> {
    if is_label(value) {
        Ok(())
    } else {
        Err(ActionError::NotALabel {
            what,
            value: value.to_owned(),
        })
    }
}

fn fixed(name: &str) -> Action {
    Action::new(name.to_owned())
}

impl Action {
    /// `call.<tool>`: one ordinary tool call.
    pub fn call(tool: &str) -> Result<Action, ActionError> {
        if let Some((_, instead)) = NOT_CALLS.iter().find(|(t, _)| *t == tool) {
            return Err(ActionError::NotACall {
                tool: tool.to_owned(),
                instead,
            });
        }
        label("tool", tool)?;
        Ok(Action::new(format!("call.{tool}")))
    }

    /// `net.connect.<reversed host>`: the sandbox opening a socket.
    pub fn net_connect(host: &str) -> Result<Action, ActionError> {
        Ok(Action::new(format!(
            "net.connect.{}",
            host::reversed(host)?
        )))
    }

    /// `net.fetch.<reversed host>`: the fetch_url tool reading a page.
    pub fn net_fetch(host: &str) -> Result<Action, ActionError> {
        Ok(Action::new(format!("net.fetch.{}", host::reversed(host)?)))
    }

    /// `nix.net.<reversed host>`: a Nix build reaching a host.
    ///
    /// The host `opaque.build` is refused: reversed it would be
    /// `nix.net.build.opaque`, which names a build that names no URL.
    pub fn nix_net(host: &str) -> Result<Action, ActionError> {
        let rev = host::reversed(host)?;
        if rev == "build.opaque" {
            return Err(ActionError::BadHost {
                host: host.to_owned(),
                reason: "it would read as nix.net.build.opaque, a build that names no URL".into(),
            });
        }
        Ok(Action::new(format!("nix.net.{rev}")))
    }

    /// `nix.net.build.opaque`: a build that names no URL at all.
    pub fn nix_net_build_opaque() -> Action {
        fixed("nix.net.build.opaque")
    }

    /// `net.serve.<port>`: a port of a background command, published on this
    /// machine's 127.0.0.1 only.
    pub fn net_serve(port: u16) -> Result<Action, ActionError> {
        if port == 0 {
            return Err(ActionError::BadPort("0".into()));
        }
        Ok(Action::new(format!("net.serve.{port}")))
    }

    /// `web.search`: the web_search tool.
    pub fn web_search() -> Action {
        fixed("web.search")
    }

    /// `skill.read.<layer>`: reading a skill of that layer. The skill's own
    /// name is never part of the key.
    pub fn skill_read(layer: SkillLayer) -> Action {
        Action::new(format!("skill.read.{}", layer.as_str()))
    }

    /// `secret.use.<name>`: giving a tool call that secret.
    pub fn secret_use(name: &str) -> Result<Action, ActionError> {
        if !is_secret_name(name) {
            return Err(ActionError::BadSecretName(name.to_owned()));
        }
        Ok(Action::new(format!("secret.use.{name}")))
    }

    /// `nix.build.<attribute>`: one attribute, built on the person's machine.
    pub fn nix_build(attribute: &str) -> Result<Action, ActionError> {
        if !is_attr_path(attribute) {
            return Err(ActionError::Malformed {
                what: "nix attribute",
                value: attribute.to_owned(),
                reason: "write an unquoted attribute path such as packages.x86_64-linux.hello",
            });
        }
        Ok(Action::new(format!("nix.build.{attribute}")))
    }

    /// `git.<subcommand>` as the shim sorts it (`commit`, `branch.delete`).
    pub fn git(subcommand: &str) -> Result<Action, ActionError> {
        if subcommand == "unknown" || !is_git_subcommand(subcommand) {
            return Err(ActionError::Malformed {
                what: "git subcommand",
                value: subcommand.to_owned(),
                reason: "a subcommand the shim cannot read is asked as git.unknown",
            });
        }
        Ok(Action::new(format!("git.{subcommand}")))
    }

    /// `git.unknown`: an option the shim cannot read stopped it reading the
    /// subcommand at all.
    pub fn git_unknown() -> Action {
        fixed("git.unknown")
    }

    /// `lsp.<program>`: starting a language server, named after the last
    /// component of its path (`/nix/store/aaa/bin/zls` is `lsp.zls`).
    pub fn lsp(program_path: &str) -> Result<Action, ActionError> {
        let name = program_path.rsplit('/').next().unwrap_or(program_path);
        if !is_label(name) {
            return Err(ActionError::LspName {
                program: program_path.to_owned(),
                name: name.to_owned(),
            });
        }
        Ok(Action::new(format!("lsp.{name}")))
    }

    /// `style.parse`: whether the project's style rules may run.
    pub fn style_parse() -> Action {
        fixed("style.parse")
    }

    /// `device.usb.<vendor>.<product>`, in lower-case hex.
    pub fn device_usb(vendor: u16, product: u16) -> Action {
        Action::new(format!("device.usb.{vendor:04x}.{product:04x}"))
    }

    /// `device.tty.<vendor>.<product>`: a serial adapter with no serial of its own.
    pub fn device_tty(vendor: u16, product: u16) -> Action {
        Action::new(format!("device.tty.{vendor:04x}.{product:04x}"))
    }

    /// `device.tty.serial.<serial>`: a serial adapter by its own serial,
    /// kept in the case the device reports it.
    pub fn device_tty_serial(serial: &str) -> Result<Action, ActionError> {
        label("device serial", serial)?;
        Ok(Action::new(format!("device.tty.serial.{serial}")))
    }

    /// `mcp.<server>`: an MCP server as a whole.
    pub fn mcp_server(server: &str) -> Result<Action, ActionError> {
        label("MCP server", server)?;
        Ok(Action::new(format!("mcp.{server}")))
    }

    /// `mcp.<server>.tool.<tool>`: one tool of that server. The `tool`
    /// segment keeps a tool named `host` from reading as the host key.
    pub fn mcp_tool(server: &str, tool: &str) -> Result<Action, ActionError> {
        label("MCP server", server)?;
        label("MCP tool", tool)?;
        Ok(Action::new(format!("mcp.{server}.tool.{tool}")))
    }

    /// `mcp.<server>.network`: whether a local server's process reaches a
    /// host at all (its connections are then decided per host). A tool
    /// cannot be this key: tools live under `.tool.`.
    pub fn mcp_network(server: &str) -> Result<Action, ActionError> {
        label("MCP server", server)?;
        Ok(Action::new(format!("mcp.{server}.network")))
    }

    /// `mcp.<server>.host.<reversed host>`: the host a remote server is reached at.
    pub fn mcp_host(server: &str, host: &str) -> Result<Action, ActionError> {
        label("MCP server", server)?;
        Ok(Action::new(format!(
            "mcp.{server}.host.{}",
            host::reversed(host)?
        )))
    }

    /// `plugin.<name>`: a plugin as a whole.
    pub fn plugin(name: &str) -> Result<Action, ActionError> {
        label("plugin", name)?;
        Ok(Action::new(format!("plugin.{name}")))
    }

    /// `plugin.<name>.tool.<tool>`: one tool of a plugin.
    pub fn plugin_tool(plugin: &str, tool: &str) -> Result<Action, ActionError> {
        label("plugin", plugin)?;
        label("plugin tool", tool)?;
        Ok(Action::new(format!("plugin.{plugin}.tool.{tool}")))
    }

    /// `fs.read`: a plugin capability to read files.
    pub fn fs_read() -> Action {
        fixed("fs.read")
    }

    /// `fs.write`: a plugin capability to write files.
    pub fn fs_write() -> Action {
        fixed("fs.write")
    }

    /// `provider.<instance>`: a provider instance by its name in config.zon.
    pub fn provider(instance: &str) -> Result<Action, ActionError> {
        label("provider instance", instance)?;
        Ok(Action::new(format!("provider.{instance}")))
    }

    /// `provider.<instance>.<model>`: one model at that instance, by the id
    /// that goes on the wire. Dots in the id split it into segments.
    pub fn provider_model(instance: &str, model: &str) -> Result<Action, ActionError> {
        label("provider instance", instance)?;
        if !is_model_id(model) {
            return Err(ActionError::Malformed {
                what: "model id",
                value: model.to_owned(),
                reason: "use letters, digits and '_-+/:@', with single dots between parts",
            });
        }
        Ok(Action::new(format!("provider.{instance}.{model}")))
    }

    /// `sandbox.jit`: run with the write-xor-execute rule off.
    pub fn sandbox_jit() -> Action {
        fixed("sandbox.jit")
    }

    /// `workspace.apply`: carry the session's commit into the repository.
    pub fn workspace_apply() -> Action {
        fixed("workspace.apply")
    }

    /// `workspace.integrate`: let an approved apply move a checked-out branch.
    pub fn workspace_integrate() -> Action {
        fixed("workspace.integrate")
    }

    /// `workspace.bind.<name>`: a path the worktree does not carry, named as
    /// the workspace block spells it (`scripts/release`). A dot is refused:
    /// it would split the name into a class nobody wrote.
    pub fn workspace_bind(name: &str) -> Result<Action, ActionError> {
        if !is_relative_path(name, false) {
            return Err(ActionError::Malformed {
                what: "bind name",
                value: name.to_owned(),
                reason: "use a relative path of letters, digits, '_', '-' and '/', with no dot",
            });
        }
        Ok(Action::new(format!("workspace.bind.{name}")))
    }

    /// `policy.widen`: let a session out of a promise it made to itself.
    pub fn policy_widen() -> Action {
        fixed("policy.widen")
    }

    /// `file.write`: write a file on the host.
    pub fn file_write() -> Action {
        fixed("file.write")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builders_spell_the_reference_examples() {
        assert_eq!(
            Action::net_fetch("docs.ziglang.org").unwrap().as_str(),
            "net.fetch.org.ziglang.docs"
        );
        assert_eq!(
            Action::lsp("/nix/store/aaa/bin/zls").unwrap().as_str(),
            "lsp.zls"
        );
        assert_eq!(
            Action::device_usb(0x1d50, 0x6018).as_str(),
            "device.usb.1d50.6018"
        );
        assert_eq!(
            Action::workspace_bind("scripts/release").unwrap().as_str(),
            "workspace.bind.scripts/release"
        );
        assert_eq!(
            Action::mcp_tool("time", "get_current_time")
                .unwrap()
                .as_str(),
            "mcp.time.tool.get_current_time"
        );
        assert_eq!(
            Action::mcp_host("notion", "mcp.notion.com")
                .unwrap()
                .as_str(),
            "mcp.notion.host.com.notion.mcp"
        );
        assert_eq!(
            Action::skill_read(SkillLayer::Project).as_str(),
            "skill.read.project"
        );
    }

    #[test]
    fn builders_refuse_what_cannot_be_a_segment() {
        assert!(matches!(
            Action::secret_use("A.B"),
            Err(ActionError::BadSecretName(_))
        ));
        assert!(matches!(
            Action::lsp("/bin/zls.sh"),
            Err(ActionError::LspName { .. })
        ));
        assert!(matches!(
            Action::call("run_command"),
            Err(ActionError::NotACall { .. })
        ));
        assert!(Action::call("a.b").is_err());
        assert!(Action::mcp_tool("s", "x.y").is_err());
        assert!(Action::net_serve(0).is_err());
        assert!(Action::nix_net("opaque.build").is_err());
        assert!(Action::workspace_bind("../etc").is_err());
        assert!(Action::workspace_bind(".env").is_err());
    }
}
