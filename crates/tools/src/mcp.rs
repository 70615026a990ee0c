//! The session's MCP servers as tools: starting a local one in the
//! session's sandbox (the same workspace, git directory and network rules
//! a command gets, and no host secrets) or reaching a remote one at its
//! url, offering the tools each lists under a name the model can call,
//! carrying out a decided call, and withdrawing a server that fails.
//!
//! What the session decides (which servers start, which tools are kept
//! out, whether a server's process gets a router) is the runner's; this
//! file is told. A server's tool is offered to the model as
//! `mcp__<server>__<tool>`, which every provider's name rules accept; the
//! call is looked up by that whole name (never split), and decided at
//! `mcp.<server>.tool.<tool>`.

use std::cell::RefCell;
use std::collections::HashSet;
use std::time::Duration;

use chock_mcp::{Bounds, Client, Connected, McpError};

use chock_policy::{Action, Decision, McpServer, McpTransport};
use chock_providers::ToolSpec;

use crate::output::{Effect, Image, ToolOutput};
use crate::run_command::Commands;
use crate::server_process::Process;
use crate::session_tools::ImageSupport;

/// The longest name a provider takes for a tool.
const MAX_MODEL_NAME: usize = 64;

/// The name the model calls a server's tool by.
pub fn model_name(server: &str, tool: &str) -> String {
    format!("mcp__{server}__{tool}")
}

/// The environment a local server starts with, beyond the sandbox's own
/// (locale, `PATH`, `HOME=/tmp`): the variables its `.env` sets. This is
/// the one place a server's environment is built, so a secret bound to a
/// server is added here.
pub fn server_env(server: &McpServer) -> Vec<(String, String)> {
    match &server.transport {
        McpTransport::Command { env, .. } => env.clone(),
        McpTransport::Url(_) => Vec::new(),
    }
}

/// A server that has started, before its tools are offered.
#[derive(Debug)]
pub struct Started {
    pub name: String,
    pub connected: Connected,
    process: Option<Process>,
}

fn bounds(server: &McpServer) -> Bounds {
    Bounds {
        start: Duration::from_millis(server.start_timeout_ms),
        call: Duration::from_millis(server.call_timeout_ms),
    }
}

/// Starts a local server in the session's sandbox, with a router when
/// `routed` (`mcp.<server>.network` allowed), and connects to it; `secrets`
/// are the variables of the secrets bound to it that were given.
pub async fn start_local(
    commands: &Commands,
    server: &McpServer,
    routed: bool,
    revision: Option<&str>,
    secrets: &[(String, String)],
) -> Result<Started, String> {
    let McpTransport::Command { argv, cwd, .. } = &server.transport else {
        return Err("it is reached by url, not run here".to_owned());
    };
    let mut env = server_env(server);
    env.extend(secrets.iter().cloned());
    let (mut process, from, to) = Process::spawn(commands, argv, env, cwd.as_deref(), routed)?;
    match chock_mcp::connect_stdio(from, to, bounds(server), revision).await {
        Ok(connected) => Ok(Started {
            name: server.name.clone(),
            connected,
            process: Some(process),
        }),
        Err(err) => {
            // Let a dying process finish writing why before it is read.
            tokio::time::sleep(Duration::from_millis(20)).await;
            Err(format!("{err}{}", process.said()))
        }
    }
}

/// Connects to a remote server at `url`, whose host the session allowed.
pub async fn start_remote(
    server: &McpServer,
    url: &str,
    host: &str,
    revision: Option<&str>,
) -> Result<Started, String> {
    chock_mcp::connect_url(url, host, bounds(server), revision)
        .await
        .map(|connected| Started {
            name: server.name.clone(),
            connected,
            process: None,
        })
        .map_err(|err| err.to_string())
}

/// One server's tool as the model is offered it.
#[derive(Debug, Clone)]
struct Offered {
    model_name: String,
    tool: String,
    spec: ToolSpec,
}

/// A started server and its offered tools.
#[derive(Debug)]
struct Server {
    name: String,
    client: Client,
    process: Option<Process>,
    tools: Vec<Offered>,
    /// Why its tools were withdrawn, once they were.
    withdrawn: Option<String>,
}

/// What offering a server's tools came to, for the session's notice.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct OfferReport {
    pub offered: Vec<String>,
    /// Kept out by a deny at `mcp.<server>.tool.<tool>`.
    pub denied: Vec<String>,
    /// Names that cannot be offered, each with why.
    pub refused: Vec<String>,
}

/// The session's MCP servers.
#[derive(Debug, Default)]
pub struct McpTools {
    servers: RefCell<Vec<Server>>,
}

impl McpTools {
    /// Offers `started`'s tools: each whose name is one label, not listed
    /// twice, and not denied at its `mcp.<server>.tool.<tool>` (`decide`
    /// answers the policy's own decision; only a deny is spent at start).
    pub fn add(&self, started: Started, decide: impl Fn(&Action) -> Decision) -> OfferReport {
        let mut report = OfferReport::default();
        let mut seen = HashSet::new();
        let mut tools = Vec::new();
        let listed = &started.connected.tools;
        for listed_tool in listed {
            let tool = &listed_tool.name;
            if listed.iter().filter(|t| &t.name == tool).count() > 1 {
                if seen.insert(tool.clone()) {
                    report
                        .refused
                        .push(format!("{tool:?} (listed more than once)"));
                }
                continue;
            }
            let action = match Action::mcp_tool(&started.name, tool) {
                Ok(action) => action,
                Err(err) => {
                    report.refused.push(format!("{tool:?} ({err})"));
                    continue;
                }
            };
            let name = model_name(&started.name, tool);
            if name.len() > MAX_MODEL_NAME {
                report.refused.push(format!(
                    "{tool:?} ({name} is over the {MAX_MODEL_NAME} characters a model's tool name may have)"
                ));
                continue;
            }
            if decide(&action) == Decision::Deny {
                report.denied.push(tool.clone());
                continue;
            }
            report.offered.push(tool.clone());
            tools.push(Offered {
                spec: ToolSpec {
                    name: name.clone(),
                    description: format!(
                        "{} (from the MCP server {})",
                        listed_tool.description.trim(),
                        started.name
                    ),
                    parameters: schema_of(&listed_tool.input_schema),
                },
                model_name: name,
                tool: tool.clone(),
            });
        }
        self.servers.borrow_mut().push(Server {
            name: started.name,
            client: started.connected.client,
            process: started.process,
            tools,
            withdrawn: None,
        });
        report
    }

    /// The specs of every tool still offered.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.servers
            .borrow()
            .iter()
            .filter(|s| s.withdrawn.is_none())
            .flat_map(|s| s.tools.iter().map(|t| t.spec.clone()))
            .collect()
    }

    /// The server and tool a model's tool name is, when it is one offered
    /// (or one that was, whose server has since been withdrawn).
    pub fn find(&self, model_name: &str) -> Option<(String, String)> {
        self.servers.borrow().iter().find_map(|server| {
            server
                .tools
                .iter()
                .find(|t| t.model_name == model_name)
                .map(|t| (server.name.clone(), t.tool.clone()))
        })
    }

    /// Withdraws every server that has failed since it was last looked at;
    /// a sentence for each.
    pub fn withdraw_failed(&self) -> Vec<String> {
        let mut said = Vec::new();
        for server in self.servers.borrow_mut().iter_mut() {
            if server.withdrawn.is_none()
                && let Some(fault) = server.client.fault()
            {
                said.push(withdraw(server, &fault));
            }
        }
        said
    }

    /// Carries out a decided call of `server`'s `tool`.
    pub(crate) async fn call(
        &self,
        server: &str,
        tool: &str,
        arguments: serde_json::Value,
        images: &ImageSupport,
    ) -> ToolOutput {
        // The borrow is not held across the wait: a server is only ever
        // withdrawn, never removed, so its index stays its own.
        let index = {
            let servers = self.servers.borrow();
            let Some(index) = servers.iter().position(|s| s.name == server) else {
                return ToolOutput::error(format!(
                    "nothing in this session provides the MCP server {server}"
                ));
            };
            if let Some(why) = &servers[index].withdrawn {
                return ToolOutput::error(format!(
                    "the MCP server {server} {why}, so its tools were withdrawn; {tool} was not run"
                ));
            }
            index
        };
        // The call owns what it needs, so no borrow is held across it.
        let caller = self.servers.borrow()[index].client.caller();
        let answer = caller.call(tool, arguments).await;
        match answer {
            Ok(answer) => {
                let mut output = if answer.is_error {
                    ToolOutput::error(answer.text)
                } else {
                    ToolOutput::ok(answer.text)
                };
                if let Some(image) = answer.images.into_iter().next() {
                    match images {
                        ImageSupport::Accepted => {
                            output.image = Some(Image {
                                media_type: image.media_type,
                                base64: image.base64,
                            });
                        }
                        ImageSupport::Refused(why) => {
                            output.text.push_str(&format!(
                                "\n[the server returned an image, which this session's model cannot be shown: {why}]"
                            ));
                        }
                    }
                }
                output
            }
            Err(err) if err.is_fatal() => {
                let said = {
                    let mut servers = self.servers.borrow_mut();
                    withdraw(&mut servers[index], &err)
                };
                ToolOutput::error(format!("{said}; {tool} did not complete")).with_effect(
                    Effect::Notice {
                        subject: "mcp".to_owned(),
                        text: said,
                    },
                )
            }
            Err(err) => ToolOutput::error(format!("the MCP server {server} {err}")),
        }
    }

    /// Stops every server: a local one's process is killed, a remote
    /// one's connection closed.
    pub fn stop(&self) {
        self.servers.borrow_mut().clear();
    }
}

/// Marks `server` withdrawn for `fault`; the sentence saying so.
fn withdraw(server: &mut Server, fault: &McpError) -> String {
    let process = server
        .process
        .as_mut()
        .map(Process::said)
        .unwrap_or_default();
    let why = format!("{fault}{process}");
    let said = format!(
        "the MCP server {} {why}; its tools are withdrawn for the rest of the session",
        server.name
    );
    tracing::warn!(target: "chock::mcp", "{said}");
    server.withdrawn = Some(why);
    said
}

/// A tool's input schema as a provider takes it: an object schema.
fn schema_of(schema: &serde_json::Value) -> serde_json::Value {
    match schema {
        serde_json::Value::Object(map)
            if map.get("type").and_then(|t| t.as_str()) == Some("object") =>
        {
            schema.clone()
        }
        serde_json::Value::Object(map) if !map.contains_key("type") => {
            let mut map = map.clone();
            map.insert("type".to_owned(), "object".into());
            serde_json::Value::Object(map)
        }
        _ => serde_json::json!({"type": "object"}),
    }
}
