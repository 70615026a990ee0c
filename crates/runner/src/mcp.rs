//! The session's MCP servers at its start: which start, with what, and
//! what the log says of each.
//!
//! Everything here is read before the first turn, when nobody can be
//! asked, so only allow opens anything: `mcp.<server>.network` gives a
//! local server's process the router (its connections are then decided per
//! host, like a command's), and `mcp.<server>.host.<reversed host>` lets
//! Chock connect to a remote one. A server whose every tool is denied
//! (`mcp.*` deny, `mcp.<server>.tool.*` deny) is not started at all. Each
//! tool a started server lists is put to its `mcp.<server>.tool.<tool>`;
//! a deny keeps it out of the session, every other answer leaves it offered
//! and decided again at each call, by the judge, like any call.
//!
//! The servers start together: every spawn happens first, then every
//! lifecycle is awaited at once, so the session waits for the slowest
//! server, not for their sum. A server that fails is said in a `notice` by
//! its name (and on stderr), and the session carries on without it.

use std::cell::RefCell;

use chock_log::event::Notice;
use chock_log::{LogWriter, WriteError};
use chock_policy::{Action, Decision, McpServer, McpTransport, Policy, url_host};
use chock_tools::{Commands, McpTools, OfferReport, StartedServer};

use crate::judge::{Judge, decision_event};

/// Whether any server the policy names runs in the sandbox (and so needs
/// the workspace made before it starts).
pub(crate) fn any_local(policy: &Policy) -> bool {
    policy
        .mcp_servers()
        .servers
        .iter()
        .any(|s| matches!(s.transport, McpTransport::Command { .. }))
}

/// How one server is to be started, once its rows at start are read.
enum Plan<'p> {
    Local {
        server: &'p McpServer,
        routed: bool,
        /// The variables of the secrets bound to it, each given.
        secrets: Vec<(String, String)>,
    },
    Remote {
        server: &'p McpServer,
        url: &'p str,
        host: String,
    },
}

/// Starts every server `policy` names into `mcp`, recording each decision
/// and a notice per server.
pub(crate) async fn start(
    policy: &Policy,
    commands: &Commands,
    writer: &RefCell<LogWriter>,
    mcp: &McpTools,
    redactor: &crate::secrets::Redactor,
) -> Result<(), WriteError> {
    let servers = policy.mcp_servers();
    for text in &servers.shadowed {
        say(writer, text.clone())?;
    }
    let mut plans = Vec::new();
    for server in &servers.servers {
        if let Some(mut plan) = plan(policy, writer, server)? {
            if give_secrets(policy, writer, redactor, &mut plan).await? {
                plans.push(plan);
            }
        }
    }
    let started =
        futures_util::future::join_all(plans.iter().map(|plan| launch(plan, commands))).await;
    for (plan, result) in plans.iter().zip(started) {
        let (server, place) = match plan {
            Plan::Local { server, routed, .. } => (
                *server,
                if *routed {
                    "in the sandbox, with the router"
                } else {
                    "in the sandbox, with no network"
                },
            ),
            Plan::Remote { server, .. } => (*server, "at its url"),
        };
        match result {
            Ok(started) => {
                let revision = revision_said(&started);
                let denied = denials(policy, writer, &started)?;
                let report = mcp.add(started, |action| {
                    if denied.contains(&action.to_string()) {
                        Decision::Deny
                    } else {
                        Decision::Ask
                    }
                });
                say(writer, offered(&server.name, place, &revision, &report))?;
            }
            Err(err) => {
                let text = format!(
                    "the MCP server {} ({}) did not start: {err}; its tools are not offered, and the session carries on without it",
                    server.name, server.origin
                );
                tracing::warn!(target: "chock::mcp", "{text}");
                say(writer, text)?;
            }
        }
    }
    Ok(())
}

/// Reads a server's rows at start; `None` when it is not to start (and
/// says why).
fn plan<'p>(
    policy: &Policy,
    writer: &RefCell<LogWriter>,
    server: &'p McpServer,
) -> Result<Option<Plan<'p>>, WriteError> {
    let name = &server.name;
    if policy.denies_every(&format!("mcp.{name}.tool")) {
        say(
            writer,
            format!(
                "the MCP server {name} is not started: the policy denies every tool of it (mcp.{name}.tool.*)"
            ),
        )?;
        return Ok(None);
    }
    match &server.transport {
        McpTransport::Command { .. } => {
            let routed = match Action::mcp_network(name) {
                Ok(action) => {
                    let verdict = Judge::before_first_turn(policy, &action);
                    writer.borrow_mut().append(decision_event(&verdict, None))?;
                    verdict.decision == Decision::Allow
                }
                Err(_) => false,
            };
            Ok(Some(Plan::Local {
                server,
                routed,
                secrets: Vec::new(),
            }))
        }
        McpTransport::Url(url) => {
            let refused = |text: String| {
                say(
                    writer,
                    format!("the MCP server {name} is not started: {text}"),
                )
            };
            let host = match url_host(url) {
                Ok(host) => host,
                Err(err) => {
                    refused(err)?;
                    return Ok(None);
                }
            };
            let action = match Action::mcp_host(name, &host) {
                Ok(action) => action,
                Err(err) => {
                    refused(format!("its host {host} cannot be named in a rule ({err})"))?;
                    return Ok(None);
                }
            };
            let verdict = Judge::before_first_turn(policy, &action);
            writer.borrow_mut().append(decision_event(&verdict, None))?;
            if verdict.decision != Decision::Allow {
                refused(format!(
                    "{action} is {}, and a server's host is read before the first turn, when nobody can be asked, so only allow connects; to let it, add .{{ .action = \"{action}\", .decision = .allow }} to chock.zon",
                    verdict.decision
                ))?;
                return Ok(None);
            }
            Ok(Some(Plan::Remote { server, url, host }))
        }
    }
}

/// The secrets bound to a server, each decided at `secret.use.<name>`
/// before the first turn, where nobody can be asked: only allow gives it.
/// A secret not given, or whose value cannot be read, keeps the server from
/// starting (said, with the reason) rather than starting it without; a
/// remote server takes no environment, so a secret bound to one does too.
/// `false`: the server is not to start.
async fn give_secrets(
    policy: &Policy,
    writer: &RefCell<LogWriter>,
    redactor: &crate::secrets::Redactor,
    plan: &mut Plan<'_>,
) -> Result<bool, WriteError> {
    let (server, given) = match plan {
        Plan::Local {
            server, secrets, ..
        } => (*server, Some(secrets)),
        Plan::Remote { server, .. } => (*server, None),
    };
    let name = &server.name;
    let bound = policy
        .secrets()
        .iter()
        .filter(|s| matches!(&s.bind.target, chock_policy::BindTarget::Mcp(to) if to == name));
    let mut given = given;
    for spec in bound {
        let Some(env) = given.as_deref_mut() else {
            say(
                writer,
                format!(
                    "the MCP server {name} is not started: the secret {} is bound to it, and a server reached by url takes no environment; bind the secret to a local server or to run_command",
                    spec.name
                ),
            )?;
            return Ok(false);
        };
        let verdict = match Action::secret_use(&spec.name) {
            Ok(action) => Judge::before_first_turn(policy, &action),
            Err(_) => continue,
        };
        writer.borrow_mut().append(decision_event(&verdict, None))?;
        if verdict.decision != Decision::Allow {
            say(
                writer,
                format!(
                    "the MCP server {name} is not started: its secret {} is not given (secret.use.{} is {}, and a server's secrets are read before the first turn, when nobody can be asked, so only allow gives one)",
                    spec.name, spec.name, verdict.decision
                ),
            )?;
            return Ok(false);
        }
        match crate::secrets::read_value(spec).await {
            Ok(value) => {
                redactor.remember(&spec.name, &value);
                env.push((spec.bind.env.clone(), value));
                say(
                    writer,
                    format!(
                        "secret {} was given to the MCP server {name} as ${}",
                        spec.name, spec.bind.env
                    ),
                )?;
            }
            Err(why) => {
                say(
                    writer,
                    format!(
                        "the MCP server {name} is not started: its secret {} has no value ({why})",
                        spec.name
                    ),
                )?;
                return Ok(false);
            }
        }
    }
    Ok(true)
}

async fn launch(plan: &Plan<'_>, commands: &Commands) -> Result<StartedServer, String> {
    match plan {
        Plan::Local {
            server,
            routed,
            secrets,
        } => {
            chock_tools::start_local_mcp(
                commands,
                server,
                *routed,
                server.revision.as_deref(),
                secrets,
            )
            .await
        }
        Plan::Remote { server, url, host } => {
            chock_tools::start_remote_mcp(server, url, host, server.revision.as_deref()).await
        }
    }
}

/// The tools of `started` the policy denies, each decision recorded.
fn denials(
    policy: &Policy,
    writer: &RefCell<LogWriter>,
    started: &StartedServer,
) -> Result<Vec<String>, WriteError> {
    let mut denied = Vec::new();
    for tool in &started.connected.tools {
        let Ok(action) = Action::mcp_tool(&started.name, &tool.name) else {
            continue;
        };
        if !policy.offered_at_start(&action) {
            writer
                .borrow_mut()
                .append(decision_event(&policy.decide(&action), None))?;
            denied.push(action.to_string());
        }
    }
    Ok(denied)
}

fn revision_said(started: &StartedServer) -> String {
    let how = if started.connected.discovered {
        "by server/discover"
    } else {
        "by the initialize handshake"
    };
    format!("MCP {} {how}", started.connected.revision)
}

/// The notice for a started server.
fn offered(name: &str, place: &str, revision: &str, report: &OfferReport) -> String {
    let mut text = format!(
        "the MCP server {name} started ({place}; {revision}) and offers {} tool{}",
        report.offered.len(),
        if report.offered.len() == 1 { "" } else { "s" }
    );
    if !report.offered.is_empty() {
        text.push_str(&format!(": {}", report.offered.join(", ")));
    }
    if !report.denied.is_empty() {
        text.push_str(&format!(
            "; kept out by the policy (deny): {}",
            report.denied.join(", ")
        ));
    }
    if !report.refused.is_empty() {
        text.push_str(&format!("; not offered: {}", report.refused.join(", ")));
    }
    text
}

fn say(writer: &RefCell<LogWriter>, text: String) -> Result<(), WriteError> {
    writer
        .borrow_mut()
        .append(Notice {
            subject: "mcp".to_owned(),
            text,
        })
        .map(drop)
}
