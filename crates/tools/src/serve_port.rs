//! `serve_port`: publishes a port a background job listens on as
//! `127.0.0.1:<port>` on the person's machine. Decided at
//! `net.serve.<port>` before it runs (the session's `before_tool`), and
//! offered to the model only where some rule could permit a port. What
//! cannot be published is reported, never guessed: a port under 1024, a
//! port something on the host already listens on, more than a sandbox may
//! publish (chock-sandbox's `PublishError`).

use schemars::JsonSchema;
use serde::Deserialize;

use chock_policy::Action;

use super::{Decide, ToolError};
use crate::tool::{Offered, Tool};

/// Publish a port a background job's server listens on (inside its sandbox, on
/// 127.0.0.1) as 127.0.0.1:<port> on the person's machine, so they can open it.
/// Start the server with run_command and "background": true first, and call
/// this once it listens. Decided by the policy at net.serve.<port>.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The port the server listens on
    #[schemars(range(min = 1))]
    pub port: u16,
    /// The background job serving it (default: the latest one running)
    pub job: Option<String>,
}

impl Tool for Args {
    const NAME: &'static str = "serve_port";

    fn check(self) -> Result<Self, ToolError> {
        if self.port == 0 {
            return Err(ToolError::Arguments {
                tool: "serve_port",
                detail: "port 0 is not a port a server listens on".to_owned(),
            });
        }
        Ok(self)
    }

    /// Decided at `net.serve.<port>` where some rule could permit a port;
    /// elsewhere the tool answers that it is not offered.
    fn decided_at(&self, offered: Offered<'_>) -> Decide {
        match Action::net_serve(self.port) {
            Ok(action) if offered.serve => Decide::At(action),
            _ => Decide::Nothing,
        }
    }
}
