//! What the tools that reach past the workspace share for one session: the
//! policy (a redirect hop and an address a name resolves to are decided
//! while the tool runs), the HTTP client with its per-host robots.txt cache,
//! the operator's search engine, the project's memory file, and whether the
//! session's provider can take an image.
//!
//! One value lives for the whole session, so robots.txt is fetched once per
//! host per session and the client's connections are reused across calls.

use std::path::PathBuf;

use chock_policy::Policy;

use super::fetch_url::{self, Web};
use super::{
    ToolError, ToolOutput, Workspace, read_image, read_memory, read_skill, web_search, write_memory,
};
use crate::lsp::LspServers;
use crate::mcp::McpTools;
use crate::skills::Skills;
use crate::web_search::SearchConfig;
use crate::write::Pending;

pub use chock_providers::ImageSupport;

/// The session's state for fetch_url, web_search, read_image, read_memory
/// and write_memory.
#[derive(Debug)]
pub struct SessionTools<'a> {
    policy: &'a Policy,
    web: Web,
    search: Option<&'a SearchConfig>,
    memory: PathBuf,
    images: ImageSupport,
    skills: Skills,
    /// The session's MCP servers, when it started any.
    mcp: Option<&'a McpTools>,
    /// nix_eval's and provide_tool's share, where the session has it.
    nix: Option<crate::nix::NixTools>,
    /// The session's plugins, when it enabled any.
    plugins: Option<&'a crate::plugins::PluginTools>,
    /// Whether the session can start a subagent (spawn_agent is offered).
    spawn: bool,
    /// The built-in tools an agent profile narrowed the session to, by
    /// name.
    only: Option<Vec<&'static str>>,
    /// The project's style rules, when `style.parse` let them run.
    style: Option<&'a chock_style::Rules>,
    /// The session's language servers.
    lsp: Option<&'a LspServers>,
}

impl<'a> SessionTools<'a> {
    /// `memory` is the project's memory file ([`super::memory_file`]).
    pub fn new(
        policy: &'a Policy,
        memory: PathBuf,
        search: Option<&'a SearchConfig>,
        images: ImageSupport,
    ) -> Self {
        Self {
            policy,
            web: Web::default(),
            search,
            memory,
            images,
            skills: Skills::default(),
            mcp: None,
            nix: None,
            plugins: None,
            spawn: false,
            only: None,
            style: None,
            lsp: None,
        }
    }

    /// Lets the session start subagents, and narrows its built-in tools to
    /// `only` when an agent profile named them (builder style).
    #[must_use]
    pub fn with_agents(mut self, spawn: bool, only: Option<Vec<&'static str>>) -> Self {
        self.spawn = spawn;
        self.only = only;
        self
    }

    /// Whether spawn_agent is offered.
    pub fn can_spawn(&self) -> bool {
        use crate::tool::Tool as _;
        self.spawn && self.allows(crate::spawn_agent::Args::NAME)
    }

    /// Whether an agent profile's tool list leaves the built-in tool named
    /// `tool` to the session.
    pub fn allows(&self, tool: &str) -> bool {
        self.only.as_ref().is_none_or(|only| only.contains(&tool))
    }

    /// Checks every write against `rules` (builder style).
    #[must_use]
    pub fn with_style(mut self, rules: &'a chock_style::Rules) -> Self {
        self.style = Some(rules);
        self
    }

    /// Tells `servers` of every write, and hands their diagnostics back
    /// with the write's result (builder style).
    #[must_use]
    pub fn with_lsp(mut self, servers: &'a LspServers) -> Self {
        self.lsp = Some(servers);
        self
    }

    /// The session's language servers, when it has any.
    pub fn lsp(&self) -> Option<&'a LspServers> {
        self.lsp
    }

    /// What the language servers say of the files they were told of that a
    /// command changed.
    pub(super) async fn after_command(&self, workspace: &Workspace) -> Option<String> {
        self.lsp?.after_command(workspace.root()).await
    }

    /// Makes a planned write: refused, the file untouched, when it would
    /// break a style rule; else written, and the diagnostics the language
    /// servers for the file publish within their bound said after it.
    pub(super) async fn write(&self, pending: Pending) -> ToolOutput {
        let mut noted = None;
        if let Some(rules) = self.style.filter(|rules| rules.applies(&pending.shown)) {
            let report = rules.check(&pending.shown, &pending.content);
            if let Some(refusal) = report.refusal() {
                return ToolOutput::error(refusal);
            }
            noted = report.syntax_note();
        }
        let mut output = match pending.commit() {
            Ok(output) => output,
            Err(err) => return ToolOutput::error(err.to_string()),
        };
        if let Some(note) = noted {
            output.text.push_str(&format!("\n({note})"));
        }
        if let Some(said) = match self.lsp {
            Some(lsp) => lsp.after_write(&pending.shown, &pending.content).await,
            None => None,
        } {
            output.text.push_str("\n\n");
            output.text.push_str(&said);
        }
        output
    }

    /// Gives the session's MCP servers' tools (builder style).
    #[must_use]
    pub fn with_mcp(mut self, mcp: &'a McpTools) -> Self {
        self.mcp = Some(mcp);
        self
    }

    /// Gives the session nix_eval and provide_tool (builder style).
    #[must_use]
    pub fn with_nix(mut self, nix: crate::nix::NixTools) -> Self {
        self.nix = Some(nix);
        self
    }

    /// The Nix tools' share, where the session has it.
    pub fn nix(&self) -> Option<&crate::nix::NixTools> {
        self.nix.as_ref()
    }

    /// Whether some rule permits a `nix.build` (provide_tool is offered
    /// only then).
    pub fn could_build(&self) -> bool {
        self.policy.could_permit("nix.build")
    }

    /// nix_eval, decided at `call.nix_eval`: the evaluator in the session's
    /// sandbox.
    pub(super) async fn nix_eval(
        &self,
        args: crate::nix::eval::Args,
        commands: &crate::Commands,
    ) -> ToolOutput {
        if self.nix.as_ref().is_none_or(|nix| !nix.installed) {
            return ToolOutput::error(
                "nix_eval is not offered in this session: Nix is not installed on this machine (on Debian: apt-get install nix-bin)",
            );
        }
        let argv = args.argv(
            crate::workspace::SANDBOX_ROOT,
            &crate::nix::eval::store_search_path(),
        );
        let timeout = args.timeout();
        match commands.run_own(&argv, timeout).await {
            Ok((status, stdout, stderr)) => {
                crate::nix::eval::answer(status, &stdout, &stderr, timeout)
            }
            Err(err) => ToolOutput::error(format!("the evaluator could not run: {err}")),
        }
    }

    /// provide_tool, permitted at its `nix.build.<key>`.
    pub(super) async fn provide(
        &self,
        args: crate::nix::provide::Args,
        commands: &crate::Commands,
    ) -> ToolOutput {
        match &self.nix {
            Some(nix) if nix.installed && self.could_build() => nix.provide(args, commands).await,
            _ => ToolOutput::error(
                "provide_tool is not offered in this session: no rule permits a nix.build.<attribute>, or Nix is not installed",
            ),
        }
    }

    /// The session's MCP servers, when it has any.
    pub fn mcp(&self) -> Option<&'a McpTools> {
        self.mcp
    }

    /// Gives the session's plugins' tools (builder style).
    #[must_use]
    pub fn with_plugins(mut self, plugins: &'a crate::plugins::PluginTools) -> Self {
        self.plugins = Some(plugins);
        self
    }

    /// The specs of the tools third parties supply: the MCP tools still
    /// offered, then the plugins'.
    pub fn external_specs(&self) -> Vec<chock_providers::ToolSpec> {
        let mut specs = self.mcp.map(McpTools::specs).unwrap_or_default();
        specs.extend(
            self.plugins
                .map(crate::plugins::PluginTools::specs)
                .unwrap_or_default(),
        );
        specs
    }

    /// Where a model's tool name that is no built-in tool comes from: an
    /// MCP server's tool or a plugin's, when one offered has the name.
    pub fn find_external(&self, model_name: &str) -> Option<(crate::source::Source, String)> {
        if let Some((server, tool)) = self.mcp.and_then(|mcp| mcp.find(model_name)) {
            return Some((crate::source::Source::Mcp(server), tool));
        }
        self.plugins
            .and_then(|plugins| plugins.find(model_name))
            .map(|(plugin, tool)| (crate::source::Source::Plugin(plugin), tool))
    }

    /// A decided call of a plugin's tool.
    pub(super) fn plugin_call(
        &self,
        plugin: &str,
        tool: &str,
        arguments: &serde_json::Value,
    ) -> ToolOutput {
        match self.plugins {
            Some(plugins) => plugins.call(plugin, tool, arguments),
            None => ToolOutput::error(format!(
                "nothing in this session provides the plugin {plugin}"
            )),
        }
    }

    /// A decided call of an MCP server's tool.
    pub(super) async fn mcp_call(
        &self,
        server: &str,
        tool: &str,
        arguments: serde_json::Value,
    ) -> ToolOutput {
        match self.mcp {
            Some(mcp) => mcp.call(server, tool, arguments, &self.images).await,
            None => ToolOutput::error(format!(
                "nothing in this session provides the MCP server {server}"
            )),
        }
    }

    /// Offers `skills` to read_skill (builder style).
    #[must_use]
    pub fn with_skills(mut self, skills: Skills) -> Self {
        self.skills = skills;
        self
    }

    /// The session's skills.
    pub fn skills(&self) -> &Skills {
        &self.skills
    }

    /// read_skill; decided at the skill's `skill.read.<layer>`.
    pub(super) fn read_skill(&self, args: read_skill::Args) -> Result<ToolOutput, ToolError> {
        read_skill::run(&self.skills, args)
    }

    /// Whether a search engine is configured (web_search is decided at
    /// `web.search` only where it could run).
    pub fn can_search(&self) -> bool {
        self.search.is_some()
    }

    /// fetch_url; the call has been decided at its `net.fetch` action.
    pub(super) async fn fetch(&self, args: fetch_url::Args) -> ToolOutput {
        fetch_url::run(&self.web, self.policy, args).await
    }

    /// web_search; decided at `web.search`.
    pub(super) async fn search(&self, args: web_search::Args) -> Result<ToolOutput, ToolError> {
        web_search::run(&self.web, self.search, args).await
    }

    /// read_image, as the provider takes images.
    pub(super) fn read_image(
        &self,
        workspace: &Workspace,
        args: read_image::Args,
    ) -> Result<ToolOutput, ToolError> {
        read_image::run(workspace, &self.images, args)
    }

    /// read_memory of the project's memory file.
    pub(super) fn read_memory(&self, args: read_memory::Args) -> Result<ToolOutput, ToolError> {
        read_memory::run(&self.memory, args)
    }

    /// write_memory to the project's memory file.
    pub(super) fn write_memory(&self, args: write_memory::Args) -> Result<ToolOutput, ToolError> {
        write_memory::run(&self.memory, args)
    }
}
