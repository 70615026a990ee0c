//! Which tools a server may offer and which calls go ahead: the
//! `mcp.<server>.tool.<tool>` rows.
//!
//! A third party's tool is decided twice (see docs/policy.md): at server
//! start only a deny is spent, and it hides the tool from `tools/list` (calls
//! to it are refused); at each call the same row is decided again, and a deny
//! there refuses the call. The gateway has no person to ask, so answers that
//! need one (ask, agent_review, agent_then_human) are left to the agent
//! client's own approval prompt for MCP tools.
//!
//! The trait keeps the proxy testable without policy files; the binary passes
//! the project's [`PolicyRules`].

use std::collections::HashSet;
use std::fmt;

/// Decides, per tool, whether it is offered at all and whether a call goes ahead.
pub trait ToolRules: Send + Sync + fmt::Debug {
    /// `Err(reason)` hides the tool and refuses calls to it.
    fn at_start(&self, server: &str, tool: &str) -> Result<(), String>;

    /// `Err(reason)` refuses this one call of an offered tool.
    fn at_call(&self, _server: &str, _tool: &str) -> Result<(), String> {
        Ok(())
    }
}

/// The project's policy (`Policy::load`): the org bundle, the operator's
/// config.zon and the project's chock.zon, folded.
#[derive(Debug)]
pub struct PolicyRules(pub chock_policy::Policy);

impl PolicyRules {
    /// A tool name that cannot be spelt as one label in a rule is decided by
    /// the server's own row (`mcp.<server>`); a server name that cannot be
    /// spelt either has no row to decide it.
    fn action(server: &str, tool: &str) -> Option<chock_policy::Action> {
        chock_policy::Action::mcp_tool(server, tool)
            .or_else(|_| chock_policy::Action::mcp_server(server))
            .ok()
    }
}

impl ToolRules for PolicyRules {
    fn at_start(&self, server: &str, tool: &str) -> Result<(), String> {
        match Self::action(server, tool) {
            Some(action) if !self.0.offered_at_start(&action) => {
                Err(format!("{} is denied by policy", action.as_str()))
            }
            _ => Ok(()),
        }
    }

    fn at_call(&self, server: &str, tool: &str) -> Result<(), String> {
        let Some(action) = Self::action(server, tool) else {
            return Ok(());
        };
        let verdict = self.0.decide(&action);
        if verdict.refused() {
            let rule = verdict
                .rule
                .as_ref()
                .map(|r| format!(" by {}", r.text))
                .unwrap_or_default();
            Err(format!("{} is denied by policy{rule}", action.as_str()))
        } else {
            Ok(())
        }
    }
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
