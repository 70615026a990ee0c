//! `diagnostics`: what the session's language servers say about one file
//! now. The file's content on disk is sent to every server for it (so a
//! change a command made is seen too), and what each publishes within its
//! bound is said, one line a diagnostic.
//!
//! Offered only where a language server is running. It is decided at
//! nothing: the server was decided at `lsp.<program>` when it started, and
//! the call reads a file of the workspace and what the server says of it,
//! which every write's result already carries.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{ToolError, ToolOutput, Workspace};
use crate::error::io_error;
use crate::lsp::LspServers;
use crate::tool::Tool;

/// Read the diagnostics (errors, warnings) the project's language servers
/// report for a file of the workspace as it is on disk now.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Path relative to the workspace root
    path: String,
}

impl Tool for Args {
    const NAME: &'static str = "diagnostics";
}

pub(super) async fn run(
    workspace: &Workspace,
    servers: Option<&LspServers>,
    args: Args,
) -> Result<ToolOutput, ToolError> {
    let Some(servers) = servers.filter(|s| !s.is_empty()) else {
        return Err(ToolError::Failed(
            "this session runs no language server (a project names them in the .lsp block of chock.zon)".to_owned(),
        ));
    };
    let path = workspace.resolve(&args.path)?;
    let content =
        std::fs::read_to_string(&path).map_err(|err| io_error("read", &args.path, &err))?;
    let shown = workspace.display(&path);
    servers
        .after_write(&shown, &content)
        .await
        .map(ToolOutput::ok)
        .ok_or_else(|| {
            ToolError::Failed(format!("no language server of this session serves {shown}"))
        })
}
