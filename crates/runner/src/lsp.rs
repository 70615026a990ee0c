//! The session's language servers at its start: which start, and what the
//! log says of each.
//!
//! Each is decided at `lsp.<last path component of its program>` before
//! the first turn, when nobody can be asked, so only allow starts one (and
//! `lsp.*` ships allow). A program whose name cannot be one label of a
//! rule does not start, and says so. The servers start together, beside
//! the MCP servers; a server that does not start within its bound, or
//! fails to, is said by its name in a `notice`, and the session carries on
//! without it.

use std::cell::RefCell;

use chock_log::event::Notice;
use chock_log::{LogWriter, WriteError};
use chock_policy::{Decision, LspServer, Policy};
use chock_tools::{Commands, LspServers};

use crate::judge::{Judge, decision_event};

/// Starts every server `policy` names into `servers`, recording each
/// decision and a notice per server.
pub(crate) async fn start(
    policy: &Policy,
    commands: &Commands,
    writer: &RefCell<LogWriter>,
    servers: &LspServers,
) -> Result<(), WriteError> {
    let mut starting: Vec<&LspServer> = Vec::new();
    for server in policy.lsp_servers() {
        let Ok(action) = server.action() else {
            let program = server.argv.first().map_or("", String::as_str);
            let last = program.rsplit('/').next().unwrap_or(program);
            say(
                writer,
                format!(
                    "the language server {} ({}) does not start: its program {program:?} cannot be named in a rule, because the last part of its path, {last:?}, cannot be one label of lsp.<program> (letters, digits, '_' and '-' only); point .command at a link whose name is one",
                    server.name, server.origin
                ),
            )?;
            continue;
        };
        let verdict = Judge::before_first_turn(policy, &action);
        writer.borrow_mut().append(decision_event(&verdict, None))?;
        if verdict.decision == Decision::Allow {
            starting.push(server);
        } else {
            say(
                writer,
                format!(
                    "the language server {} is not started: {action} is {}, and a server's start is read before the first turn, when nobody can be asked, so only allow starts it",
                    server.name, verdict.decision
                ),
            )?;
        }
    }
    let started = futures_util::future::join_all(
        starting
            .iter()
            .map(|server| chock_tools::start_lsp(commands, server)),
    )
    .await;
    for (server, result) in starting.iter().zip(started) {
        match result {
            Ok(started) => {
                servers.add(started);
                let mut serves = server.files.clone();
                serves.extend(server.languages.iter().map(|l| format!("{l} files")));
                say(
                    writer,
                    format!(
                        "the language server {} started in the sandbox for {}",
                        server.name,
                        serves.join(", ")
                    ),
                )?;
            }
            Err(err) => {
                let text = format!(
                    "the language server {} ({}) did not start: {err}; the session carries on without it (its .command must start a server that speaks LSP on stdin and stdout, within .start_timeout_ms)",
                    server.name, server.origin
                );
                tracing::warn!(target: "chock::lsp", "{text}");
                say(writer, text)?;
            }
        }
    }
    Ok(())
}

fn say(writer: &RefCell<LogWriter>, text: String) -> Result<(), WriteError> {
    writer
        .borrow_mut()
        .append(Notice {
            subject: "lsp".to_owned(),
            text,
        })
        .map(drop)
}
