//! What the tools that reach past the workspace share for one session: the
//! policy (a redirect hop and an address a name resolves to are decided
//! while the tool runs), the HTTP client with its per-host robots.txt cache,
//! the operator's search engine, the project's memory file, and whether the
//! session's provider can take an image.
//!
//! One value lives for the whole session, so robots.txt is fetched once per
//! host per session and the client's connections are reused across calls.

use std::path::PathBuf;

use chock_policy::{Action, Policy};

use super::fetch_url::{self, Web};
use super::{
    ToolError, ToolName, ToolOutput, Workspace, parse, read_image, read_memory, web_search,
    write_memory,
};
use crate::config::SearchConfig;

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
        }
    }

    /// The action a call of `tool` with `arguments` is decided at before it
    /// runs, for the tools whose key is not `call.<tool>`: fetch_url at
    /// `net.fetch.<reversed host>` of its URL, web_search at `web.search`.
    /// `None` where the call cannot run anyway (a URL that does not parse,
    /// no search engine configured): the tool itself says why, and nobody
    /// is asked about a call that would fail.
    pub fn action(&self, tool: ToolName, arguments: &str) -> Option<Action> {
        match tool {
            ToolName::FetchUrl => fetch_url::action(arguments),
            ToolName::WebSearch => self.search.map(|_| Action::web_search()),
            _ => None,
        }
    }

    /// Runs one of the tools this value serves; the call has already been
    /// decided at its action.
    pub(super) async fn run(
        &self,
        tool: ToolName,
        workspace: &Workspace,
        arguments: &str,
    ) -> ToolOutput {
        let result = match tool {
            ToolName::FetchUrl => match parse(tool, arguments) {
                Ok(args) => Ok(fetch_url::run(&self.web, self.policy, args).await),
                Err(err) => Err(err),
            },
            ToolName::WebSearch => match parse(tool, arguments) {
                Ok(args) => web_search::run(&self.web, self.search, args).await,
                Err(err) => Err(err),
            },
            ToolName::ReadImage => parse(tool, arguments)
                .and_then(|args| read_image::run(workspace, &self.images, args)),
            ToolName::ReadMemory => {
                parse(tool, arguments).and_then(|args| read_memory::run(&self.memory, args))
            }
            ToolName::WriteMemory => {
                parse(tool, arguments).and_then(|args| write_memory::run(&self.memory, args))
            }
            _ => Err(ToolError::Failed(format!(
                "{} does not run through the session's tools",
                tool.as_str()
            ))),
        };
        result.unwrap_or_else(|err| ToolOutput::error(err.to_string()))
    }
}
