//! Which tools a server may offer: the `mcp.<server>.tool.<tool>` rows, read
//! before the first turn. Nobody can be asked at server start, so anything
//! but `allow` hides the tool from `tools/list` and refuses calls to it.
//!
//! The trait keeps the proxy independent of how rules are stored; the binary
//! passes the project's policy.

use std::collections::HashSet;
use std::fmt;

/// Decides, per tool, whether it is offered at all.
pub trait ToolRules: Send + Sync + fmt::Debug {
    /// `Err(reason)` hides the tool and refuses calls to it.
    fn at_start(&self, server: &str, tool: &str) -> Result<(), String>;
}

/// Every tool allowed.
#[derive(Debug, Clone, Copy, Default)]
pub struct AllowAll;

impl ToolRules for AllowAll {
    fn at_start(&self, _server: &str, _tool: &str) -> Result<(), String> {
        Ok(())
    }
}

/// A fixed set of denied tools (tests, and callers that resolved rules already).
#[derive(Debug, Clone, Default)]
pub struct DenyTools(pub HashSet<String>);

impl ToolRules for DenyTools {
    fn at_start(&self, server: &str, tool: &str) -> Result<(), String> {
        if self.0.contains(tool) {
            Err(format!("mcp.{server}.tool.{tool} is denied by policy"))
        } else {
            Ok(())
        }
    }
}
