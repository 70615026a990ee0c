//! Reading a written action name back into an [`Action`].
//!
//! A name is split at its namespace and handed to the builder that owns it,
//! and the builder's output must equal the text: that one comparison is what
//! keeps a rule from being written in a spelling no builder ever produces
//! (upper-case hex, an unreversed host, ...), which would never match.

use super::host::unreversed;
use super::{Action, ActionError, ExecClass, SkillLayer};

fn unknown(name: &str, reason: impl Into<String>) -> ActionError {
    ActionError::Unknown {
        name: name.to_owned(),
        reason: reason.into(),
    }
}

fn port(s: &str) -> Result<u16, ActionError> {
    match s.parse::<u16>() {
        Ok(p) if p > 0 && s.bytes().all(|b| b.is_ascii_digit()) && !s.starts_with('0') => Ok(p),
        _ => Err(ActionError::BadPort(s.to_owned())),
    }
}

fn usb_id(name: &str, s: &str) -> Result<u16, ActionError> {
    if super::label::is_usb_id(s) {
        u16::from_str_radix(s, 16)
            .map_err(|_| unknown(name, "a device id is four lower-case hex digits"))
    } else {
        Err(unknown(
            name,
            format!("device id `{s}` is not four lower-case hex digits"),
        ))
    }
}

impl Action {
    /// Reads a name as a rule or `chock policy explain` writes it.
    pub fn parse(name: &str) -> Result<Action, ActionError> {
        let built = Self::dispatch(name)?;
        if built.as_str() != name {
            return Err(ActionError::NotCanonical {
                name: name.to_owned(),
                canonical: built.name,
            });
        }
        Ok(built)
    }

    fn dispatch(name: &str) -> Result<Action, ActionError> {
        let segs: Vec<&str> = name.split('.').collect();
        let rest = |n: usize| segs.get(n..).map(|s| s.join(".")).unwrap_or_default();
        let need_rest = |n: usize, what: &str| {
            if segs.len() > n {
                Ok(rest(n))
            } else {
                Err(unknown(
                    name,
                    format!(
                        "write {what} after `{}.`",
                        segs[..n.min(segs.len())].join(".")
                    ),
                ))
            }
        };
        match segs.as_slice() {
            ["call", ..] => Action::call(&need_rest(1, "the tool")?),
            ["exec", "unparsed"] => Ok(Action::exec_unparsed()),
            ["exec", "devshell", ..] => {
                Action::exec(ExecClass::DevShell, &need_rest(2, "the program")?)
            }
            ["exec", "nix", "store", ..] => {
                Action::exec(ExecClass::NixStore, &need_rest(3, "the store hash")?)
            }
            ["exec", "workspace", ..] => {
                Action::exec(ExecClass::Workspace, &need_rest(2, "the path")?)
            }
            ["exec", "path", ..] => Action::exec(ExecClass::Path, &need_rest(2, "the program")?),
            ["exec", ..] => Err(unknown(
                name,
                "exec classes are devshell, nix.store, workspace, path and unparsed",
            )),
            ["net", "connect", host @ ..] if !host.is_empty() => {
                Action::net_connect(&unreversed(host))
            }
            ["net", "fetch", host @ ..] if !host.is_empty() => Action::net_fetch(&unreversed(host)),
            ["net", "serve", p] => Action::net_serve(port(p)?),
            ["net", "serve", ..] => Err(ActionError::BadPort(rest(2))),
            ["net", ..] => Err(unknown(
                name,
                "write net.connect.<host>, net.fetch.<host> or net.serve.<port>",
            )),
            ["web", "search"] => Ok(Action::web_search()),
            ["skill", "read", "operator"] => Ok(Action::skill_read(SkillLayer::Operator)),
            ["skill", "read", "project"] => Ok(Action::skill_read(SkillLayer::Project)),
            ["skill", "read", "packaged"] => Ok(Action::skill_read(SkillLayer::Packaged)),
            ["skill", ..] => Err(unknown(
                name,
                "the skill layers are skill.read.operator, skill.read.project and skill.read.packaged",
            )),
            ["secret", "use", ..] => Action::secret_use(&need_rest(2, "the secret's name")?),
            ["nix", "build", ..] => Action::nix_build(&need_rest(2, "the attribute")?),
            ["nix", "net", "build", "opaque"] => Ok(Action::nix_net_build_opaque()),
            ["nix", "net", host @ ..] if !host.is_empty() => Action::nix_net(&unreversed(host)),
            ["nix", ..] => Err(unknown(
                name,
                "write nix.build.<attribute> or nix.net.<host>",
            )),
            ["git", "unknown"] => Ok(Action::git_unknown()),
            ["git", ..] => Action::git(&need_rest(1, "the subcommand")?),
            ["lsp", ..] => Action::lsp(&need_rest(1, "the program")?),
            ["style", "parse"] => Ok(Action::style_parse()),
            ["device", "usb", v, p] => Ok(Action::device_usb(usb_id(name, v)?, usb_id(name, p)?)),
            ["device", "tty", "serial", s] => Action::device_tty_serial(s),
            ["device", "tty", v, p] => Ok(Action::device_tty(usb_id(name, v)?, usb_id(name, p)?)),
            ["device", ..] => Err(unknown(
                name,
                "write device.usb.<vendor>.<product>, device.tty.<vendor>.<product> or device.tty.serial.<serial>",
            )),
            ["mcp", server] => Action::mcp_server(server),
            ["mcp", server, "tool", tool] => Action::mcp_tool(server, tool),
            ["mcp", server, "network"] => Action::mcp_network(server),
            ["mcp", server, "host", host @ ..] if !host.is_empty() => {
                Action::mcp_host(server, &unreversed(host))
            }
            ["mcp", ..] => Err(unknown(
                name,
                "write mcp.<server>, mcp.<server>.tool.<tool>, mcp.<server>.network or mcp.<server>.host.<host>",
            )),
            ["plugin", p] => Action::plugin(p),
            ["plugin", p, "tool", tool] => Action::plugin_tool(p, tool),
            ["plugin", ..] => Err(unknown(
                name,
                "write plugin.<name> or plugin.<name>.tool.<tool>",
            )),
            ["fs", "read"] => Ok(Action::fs_read()),
            ["fs", "write"] => Ok(Action::fs_write()),
            ["provider", instance] => Action::provider(instance),
            ["provider", instance, ..] => Action::provider_model(instance, &rest(2)),
            ["model", "select"] => Err(unknown(
                name,
                "model.select is decided at provider.<instance> and provider.<instance>.<model>; name those",
            )),
            ["sandbox", "jit"] => Ok(Action::sandbox_jit()),
            ["workspace", "apply"] => Ok(Action::workspace_apply()),
            ["workspace", "integrate"] => Ok(Action::workspace_integrate()),
            ["workspace", "bind", ..] => Action::workspace_bind(&need_rest(2, "the bind's name")?),
            ["workspace", ..] => Err(unknown(
                name,
                "write workspace.apply, workspace.integrate or workspace.bind.<name>",
            )),
            ["policy", "widen"] => Ok(Action::policy_widen()),
            ["file", "write"] => Ok(Action::file_write()),
            _ => Err(unknown(
                name,
                "no such namespace; `chock policy explain --help` lists them",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builder_output_parses_back_to_itself() {
        let names = [
            "call.read_file",
            "exec.devshell.cargo",
            "exec.nix.store.0123456789abcdfghijklmnpqrsvwxyz",
            "exec.workspace.scripts/build.sh",
            "exec.path.python3.11",
            "exec.unparsed",
            "net.connect.com.github",
            "net.fetch.org.ziglang.docs",
            "net.connect.10.0.0.1",
            "net.connect.ipv6.0000.0000.0000.0000.0000.0000.0000.0001",
            "net.serve.3000",
            "web.search",
            "skill.read.packaged",
            "secret.use.GITHUB_TOKEN",
            "nix.build.packages.x86_64-linux.hello",
            "nix.net.org.nixos.cache",
            "nix.net.build.opaque",
            "git.commit",
            "git.branch.delete",
            "git.unknown",
            "lsp.zls",
            "style.parse",
            "device.usb.1d50.6018",
            "device.tty.serial.A9XYZ",
            "device.tty.0403.6001",
            "mcp.time",
            "mcp.time.tool.get_current_time",
            "mcp.notion.host.com.notion.mcp",
            "plugin.hello",
            "plugin.hello.tool.greet",
            "fs.write",
            "provider.openai",
            "provider.openai.gpt-4.1",
            "sandbox.jit",
            "workspace.apply",
            "workspace.integrate",
            "workspace.bind.scripts/release",
            "policy.widen",
            "file.write",
        ];
        for n in names {
            assert_eq!(Action::parse(n).map(|a| a.to_string()), Ok(n.to_owned()));
        }
    }

    #[test]
    fn serde_round_trips_through_parse() {
        let a = Action::net_fetch("docs.ziglang.org").unwrap();
        let json = serde_json::to_string(&a).unwrap();
        assert_eq!(json, "\"net.fetch.org.ziglang.docs\"");
        assert_eq!(serde_json::from_str::<Action>(&json).unwrap(), a);
        assert!(serde_json::from_str::<Action>("\"net.serve.http\"").is_err());
    }

    #[test]
    fn malformed_names_are_refused_with_a_reason() {
        for bad in [
            "",
            "call",
            "call.a.b",
            "net.serve.http",
            "net.serve.03000",
            "net.serve.70000",
            "net.fetch.ORG.ziglang",
            "secret.use.a-b",
            "device.usb.1D50.6018",
            "skill.read.mine",
            "model.select",
            "frob.nicate",
            "mcp.s.tool.a.b",
            "net.connect",
        ] {
            assert!(Action::parse(bad).is_err(), "{bad}");
        }
    }
}
