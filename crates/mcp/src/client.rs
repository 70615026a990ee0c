//! One connected server: the SDK's running client, the bounds on its
//! waits, and the fault its transport recorded, which outranks whatever
//! the SDK saw (a closed pipe is "the server wrote garbage and was cut
//! off", not "transport closed").

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion,
};
use rmcp::service::{ClientLifecycleMode, RunningService, ServiceError};
use rmcp::transport::IntoTransport;
use serde_json::Value;

use crate::content::Answer;
use crate::error::McpError;

/// How long a server may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// To start: discover or initialize, then the whole tools/list.
    pub start: Duration,
    /// To answer one tools/call.
    pub call: Duration,
}

/// A tool as the server listed it.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedTool {
    pub name: String,
    pub description: String,
    /// The JSON Schema of its arguments.
    pub input_schema: Value,
}

/// A server that has started: the client, the revision it speaks, its tools.
#[derive(Debug)]
pub struct Connected {
    pub client: Client,
    /// `2026-07-28` or `2025-11-25` (or an older one the server chose).
    pub revision: String,
    /// Whether the revision was reached by `server/discover`.
    pub discovered: bool,
    pub tools: Vec<ListedTool>,
}

/// One server's calls, apart from its client.
#[derive(Debug, Clone)]
pub struct Caller {
    peer: rmcp::service::Peer<RoleClient>,
    fault: Fault,
    bound: Duration,
}

impl Caller {
    /// Calls `tool` with `arguments` (an object, or null for none), within
    /// the call bound.
    pub async fn call(&self, tool: &str, arguments: Value) -> Result<Answer, McpError> {
        if let Some(fault) = first_fault(&self.fault) {
            return Err(fault);
        }
        let arguments = match arguments {
            Value::Object(map) => map,
            Value::Null => serde_json::Map::new(),
            other => {
                return Err(McpError::Server {
                    message: format!("the arguments are {other}, and a tool takes an object"),
                });
            }
        };
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        let ms = u64::try_from(self.bound.as_millis()).unwrap_or(u64::MAX);
        match tokio::time::timeout(self.bound, self.peer.call_tool(params)).await {
            Err(_) => Err(first_fault(&self.fault).unwrap_or(McpError::Timeout {
                what: "the call",
                ms,
            })),
            Ok(Err(err)) => Err(first_fault(&self.fault).unwrap_or_else(|| said(err))),
            Ok(Ok(result)) => Ok(Answer::from_result(
                &serde_json::to_value(&result).unwrap_or_default(),
            )),
        }
    }
}

/// The fault a transport saw first, shared with the client.
pub(crate) type Fault = Arc<Mutex<Option<McpError>>>;

/// A connected server.
#[derive(Debug)]
pub struct Client {
    service: RunningService<RoleClient, ClientConfig>,
    fault: Fault,
    call_bound: Duration,
    /// The transport's own tasks, stopped with the client.
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for Client {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// The lifecycle for `revision`: either one pinned, or discover first and
/// fall back to the handshake.
fn lifecycle(revision: Option<&str>) -> Result<ClientLifecycleMode, McpError> {
    match revision {
        None => Ok(ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            legacy_version: Some(ProtocolVersion::V_2025_11_25),
        }),
        Some("2026-07-28") => Ok(ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        }),
        Some("2025-11-25") => Ok(ClientLifecycleMode::Initialize),
        Some(other) => Err(McpError::Start {
            detail: format!(
                "the revision {other} is not one Chock speaks (2026-07-28, 2025-11-25)"
            ),
        }),
    }
}

fn first_fault(fault: &Fault) -> Option<McpError> {
    fault.lock().ok().and_then(|held| held.clone())
}

/// An error and its causes on one line, each cause once: the SDK's own
/// message names the step, the causes say what went wrong (a refused
/// certificate, a connection refused).
pub(crate) fn chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let said = cause.to_string();
        if !text.contains(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        source = cause.source();
    }
    text
}

/// The SDK's error as the session says it.
fn said(err: ServiceError) -> McpError {
    match err {
        ServiceError::McpError(data) => McpError::Server {
            message: match data.data {
                Some(extra) => format!("{} ({extra})", data.message),
                None => data.message.into_owned(),
            },
        },
        ServiceError::TransportClosed => McpError::Closed {
            detail: "its connection closed".to_owned(),
        },
        ServiceError::Timeout { timeout } => McpError::Timeout {
            what: "a request",
            ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
        },
        other => McpError::Server {
            message: other.to_string(),
        },
    }
}

/// Starts the lifecycle over `transport` and lists the tools, within
/// `bounds.start`.
pub(crate) async fn connect<T, E, A>(
    transport: T,
    bounds: Bounds,
    revision: Option<&str>,
    fault: Fault,
    tasks: Vec<tokio::task::JoinHandle<()>>,
) -> Result<Connected, McpError>
where
    T: IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let info = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("chock", env!("CARGO_PKG_VERSION")),
    );
    let mode = lifecycle(revision)?;
    let discovering = !matches!(mode, ClientLifecycleMode::Initialize);
    let start = async {
        let service = rmcp::service::serve_client_with_lifecycle(info, transport, mode)
            .await
            .map_err(|err| McpError::Start {
                detail: chain(&err),
            })?;
        let tools = service.list_all_tools().await.map_err(said)?;
        Ok::<_, McpError>((service, tools))
    };
    let ms = u64::try_from(bounds.start.as_millis()).unwrap_or(u64::MAX);
    let started = tokio::time::timeout(bounds.start, start).await;
    let (service, tools) = match started {
        Ok(Ok(started)) => started,
        Ok(Err(err)) => {
            for task in &tasks {
                task.abort();
            }
            return Err(first_fault(&fault).unwrap_or(err));
        }
        Err(_) => {
            for task in &tasks {
                task.abort();
            }
            return Err(first_fault(&fault).unwrap_or(McpError::Timeout {
                what: "its start (discovery or the handshake, then tools/list)",
                ms,
            }));
        }
    };
    let revision = service
        .peer_info()
        .map(|info| info.protocol_version.to_string())
        .unwrap_or_default();
    let discovered = discovering && revision == ProtocolVersion::V_2026_07_28.to_string();
    let tools = tools
        .into_iter()
        .map(|tool| {
            let json = serde_json::to_value(&tool).unwrap_or_default();
            ListedTool {
                name: tool.name.to_string(),
                description: tool.description.as_deref().unwrap_or_default().to_owned(),
                input_schema: json
                    .get("inputSchema")
                    .cloned()
                    .unwrap_or_else(|| serde_json::json!({"type": "object"})),
            }
        })
        .collect();
    Ok(Connected {
        client: Client {
            service,
            fault,
            call_bound: bounds.call,
            tasks,
        },
        revision,
        discovered,
        tools,
    })
}

impl Client {
    /// What a call needs, owned, so that a caller need not hold the client
    /// while it waits.
    pub fn caller(&self) -> Caller {
        Caller {
            peer: self.service.peer().clone(),
            fault: Arc::clone(&self.fault),
            bound: self.call_bound,
        }
    }

    /// The fault that ended the server, once one has.
    pub fn fault(&self) -> Option<McpError> {
        first_fault(&self.fault).or_else(|| {
            self.service.is_closed().then(|| McpError::Closed {
                detail: "its connection closed".to_owned(),
            })
        })
    }
}
