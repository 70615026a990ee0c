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
            style: None,
            lsp: None,
        }
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

    /// The session's MCP servers, when it has any.
    pub fn mcp(&self) -> Option<&'a McpTools> {
        self.mcp
    }

    /// The specs of the MCP tools still offered.
    pub fn mcp_specs(&self) -> Vec<chock_providers::ToolSpec> {
        self.mcp.map(McpTools::specs).unwrap_or_default()
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
