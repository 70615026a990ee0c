//! The `.mcp` block of a chock.zon or config.zon: the MCP servers a session
//! starts, each by name, either a command run in the session's sandbox or a
//! url reached over streamable HTTP.
//!
//! ```zig
//! .mcp = .{
//!     .time = .{ .command = .{ "mcp-server-time", "--local-timezone", "UTC" } },
//!     .notes = .{ .url = "https://mcp.notes.example/mcp" },
//! },
//! ```
//!
//! Read here, beside the rules, because the same file holds both and one
//! pass reports every problem with its line and column: a server name that
//! cannot be one label of an action (`mcp.<server>.tool.<tool>`), a server
//! with both a command and a url or neither, a url that is not https (or
//! http to this machine's loopback), an empty command, an unknown field.
//! The block is data only; the runner decides and starts the servers.

use chock_zon::{Value, ValueKind};

use crate::action::Action;
use crate::check::{Walk, kind_name};

/// How long a server may take to start and list its tools, unless its
/// `.start_timeout_ms` says otherwise: room for a server that never answers
/// `server/discover`, which gets the handshake after the SDK's 10 s.
pub const DEFAULT_START_TIMEOUT_MS: u64 = 20_000;

/// The MCP revisions Chock speaks, newest first.
pub const REVISIONS: [&str; 2] = ["2026-07-28", "2025-11-25"];

/// How long one tool call may take, unless `.call_timeout_ms` says otherwise.
pub const DEFAULT_CALL_TIMEOUT_MS: u64 = 60_000;

/// One MCP server as a file names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServer {
    /// Its name: one label, the `<server>` of its actions.
    pub name: String,
    /// How it is reached.
    pub transport: McpTransport,
    /// Milliseconds it may take to start and list its tools.
    pub start_timeout_ms: u64,
    /// Milliseconds one tool call may take.
    pub call_timeout_ms: u64,
    /// The MCP revision to speak, when pinned (`2026-07-28`, `2025-11-25`);
    /// `None` tries `server/discover` and falls back to the handshake.
    pub revision: Option<String>,
    /// The file and line that named it, for notices.
    pub origin: String,
}

/// A local server's command or a remote server's url.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpTransport {
    /// Run in the session's sandbox: the program and its arguments, extra
    /// environment variables, and the working directory relative to the
    /// workspace.
    Command {
        argv: Vec<String>,
        env: Vec<(String, String)>,
        cwd: Option<String>,
    },
    /// Reached over streamable HTTP.
    Url(String),
}

/// The servers a session starts: the operator's (servers a person trusts
/// everywhere) and then the project's, with what was left out and why.
#[derive(Debug, Clone, Default)]
pub struct McpServers {
    /// In start order: the operator's, then the project's.
    pub servers: Vec<McpServer>,
    /// A project server that has an operator server's name is left out:
    /// the operator's stands, and this says so.
    pub shadowed: Vec<String>,
}

impl McpServers {
    pub(crate) fn of(operator: &[McpServer], project: &[McpServer]) -> McpServers {
        let mut servers = operator.to_vec();
        let mut shadowed = Vec::new();
        for server in project {
            if let Some(first) = servers.iter().find(|s| s.name == server.name) {
                shadowed.push(format!(
                    "the MCP server {} at {} is not started: the operator's config.zon names a server {} too ({}), and that one is used; rename the project's",
                    server.name, server.origin, server.name, first.origin
                ));
            } else {
                servers.push(server.clone());
            }
        }
        McpServers { servers, shadowed }
    }
}

/// The host a url names, when it is one Chock reaches: https anywhere, or
/// http to the loopback interface (a server on this machine, where nothing
/// crosses a network). Anything else says why not.
pub fn url_host(url: &str) -> Result<String, String> {
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| format!("{url:?} is not a url; write https://host/path"))?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.contains('@') {
        return Err(format!(
            "{url:?} carries credentials in the url; an MCP url names a host and a path only"
        ));
    }
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default().to_owned(),
        None => authority
            .rsplit_once(':')
            .map_or(authority, |(host, _)| host)
            .to_owned(),
    }
    .to_ascii_lowercase();
    if host.is_empty() {
        return Err(format!("{url:?} names no host"));
    }
    let loopback = matches!(host.as_str(), "localhost" | "127.0.0.1" | "::1");
    match scheme.to_ascii_lowercase().as_str() {
        "https" => Ok(host),
        "http" if loopback => Ok(host),
        "http" => Err(format!(
            "{url:?} is plain http to another machine; an MCP server is reached over https (http only to this machine's loopback)"
        )),
        other => Err(format!(
            "{url:?} has the scheme {other}; an MCP server is reached over https (http only to this machine's loopback)"
        )),
    }
}

impl Walk<'_> {
    /// The `.mcp` block: one field per server.
    pub(crate) fn mcp(&mut self, v: &Value) -> Vec<McpServer> {
        let mut servers = Vec::new();
        let Some(fields) = self.fields(v, ".mcp") else {
            return servers;
        };
        for f in fields {
            if let Err(err) = Action::mcp_server(&f.name) {
                self.problem(
                    &f.name_span,
                    format!(
                        "the MCP server name .{} cannot be one label of an action: {err}",
                        f.name
                    ),
                );
                continue;
            }
            if let Some(server) = self.server(&f.name, &f.value) {
                servers.push(server);
            }
        }
        servers
    }

    fn server(&mut self, name: &str, v: &Value) -> Option<McpServer> {
        let what = format!(".mcp.{name}");
        let fields = self.fields(v, &what)?;
        let mut argv = None;
        let mut url = None;
        let mut env = Vec::new();
        let mut cwd = None;
        let mut start_timeout_ms = DEFAULT_START_TIMEOUT_MS;
        let mut call_timeout_ms = DEFAULT_CALL_TIMEOUT_MS;
        let mut ok = true;
        let mut revision = None;
        for f in fields {
            match f.name.as_str() {
                "command" => argv = self.command(&what, &f.value),
                "url" => match &f.value.kind {
                    ValueKind::String(s) => match url_host(s) {
                        Ok(_) => url = Some((s.clone(), f.value.span)),
                        Err(err) => {
                            self.problem(&f.value.span, format!("{what}.url: {err}"));
                            ok = false;
                        }
                    },
                    other => {
                        self.problem(
                            &f.value.span,
                            format!(
                                "{what}.url is a string such as \"https://mcp.example.com/mcp\", not {}",
                                kind_name(other)
                            ),
                        );
                        ok = false;
                    }
                },
                "env" => env = self.env(&what, &f.value),
                "revision" => match &f.value.kind {
                    ValueKind::String(s) if REVISIONS.contains(&s.as_str()) => {
                        revision = Some(s.clone());
                    }
                    _ => self.problem(
                        &f.value.span,
                        format!(
                            "{what}.revision is \"2026-07-28\" or \"2025-11-25\" (leave it out to let Chock discover it)"
                        ),
                    ),
                },
                "cwd" => match &f.value.kind {
                    ValueKind::String(s) if crate::action::label::is_relative_path(s, true) => {
                        cwd = Some(s.clone());
                    }
                    _ => self.problem(
                        &f.value.span,
                        format!(
                            "{what}.cwd is a directory inside the workspace, relative to its root, such as \"tools\""
                        ),
                    ),
                },
                "start_timeout_ms" | "call_timeout_ms" => {
                    let slot = if f.name == "start_timeout_ms" {
                        &mut start_timeout_ms
                    } else {
                        &mut call_timeout_ms
                    };
                    match &f.value.kind {
                        ValueKind::Int(n) if (1..=3_600_000).contains(n) => {
                            *slot = u64::try_from(*n).unwrap_or(1);
                        }
                        _ => self.problem(
                            &f.value.span,
                            format!("{what}.{} is milliseconds, from 1 to 3600000", f.name),
                        ),
                    }
                }
                other => self.problem(
                    &f.name_span,
                    format!(
                        "unknown field .{other} in {what}: a server holds .command (with .env and .cwd) or .url, and .revision, .start_timeout_ms and .call_timeout_ms"
                    ),
                ),
            }
        }
        let transport = match (argv, url) {
            (Some(argv), None) => McpTransport::Command { argv, env, cwd },
            (None, Some((url, span))) => {
                if !env.is_empty() || cwd.is_some() {
                    self.problem(
                        &span,
                        format!(
                            "{what} is reached by url, so .env and .cwd mean nothing for it; remove them"
                        ),
                    );
                }
                McpTransport::Url(url)
            }
            (Some(_), Some((_, span))) => {
                self.problem(
                    &span,
                    format!(
                        "{what} has both .command and .url; a server is either run here (.command) or reached (.url): keep one"
                    ),
                );
                return None;
            }
            (None, None) => {
                if ok {
                    self.problem(
                        &v.span,
                        format!(
                            "{what} has neither .command nor .url; write .command = .{{ \"program\", \"arg\" }} or .url = \"https://...\""
                        ),
                    );
                }
                return None;
            }
        };
        Some(McpServer {
            name: name.to_owned(),
            transport,
            start_timeout_ms,
            call_timeout_ms,
            revision,
            origin: match self.file {
                Some(file) => format!("{}:{}", file.display(), v.span.start.line),
                None => format!("line {}", v.span.start.line),
            },
        })
    }

    pub(crate) fn command(&mut self, what: &str, v: &Value) -> Option<Vec<String>> {
        let shape = format!(
            "{what}.command is a list of strings, the program and its arguments, such as .{{ \"mcp-server-time\" }}"
        );
        let Some(items) = crate::check::items(v) else {
            self.problem(&v.span, shape);
            return None;
        };
        let mut argv = Vec::new();
        for item in items {
            match &item.kind {
                ValueKind::String(s) => argv.push(s.clone()),
                _ => {
                    self.problem(&item.span, shape);
                    return None;
                }
            }
        }
        match argv.first() {
            None => {
                self.problem(
                    &v.span,
                    format!("{what}.command is empty; name the program to run"),
                );
                None
            }
            Some(program) if program.is_empty() => {
                self.problem(&v.span, format!("{what}.command names an empty program"));
                None
            }
            Some(_) => Some(argv),
        }
    }

    pub(crate) fn env(&mut self, what: &str, v: &Value) -> Vec<(String, String)> {
        let mut env = Vec::new();
        let Some(fields) = self.fields(v, &format!("{what}.env")) else {
            return env;
        };
        for f in fields {
            let valid = !f.name.is_empty()
                && !f.name.starts_with(|c: char| c.is_ascii_digit())
                && f.name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_');
            match &f.value.kind {
                ValueKind::String(s) if valid => env.push((f.name.clone(), s.clone())),
                ValueKind::String(_) => self.problem(
                    &f.name_span,
                    format!(
                        "{what}.env.{} is not a variable name: letters, digits and _, not starting with a digit",
                        f.name
                    ),
                ),
                other => self.problem(
                    &f.value.span,
                    format!("{what}.env.{} is a string, not {}", f.name, kind_name(other)),
                ),
            }
        }
        env
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check_text;

    fn problems(text: &str) -> Vec<String> {
        check_text(text, None)
            .problems
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn a_command_server_and_a_url_server_are_read_with_every_field() {
        let checked = check_text(
            r#".{
    .mcp = .{
        .time = .{ .command = .{ "mcp-server-time", "--local-timezone", "UTC" }, .env = .{ .TZ = "UTC" }, .cwd = "tools", .call_timeout_ms = 500 },
        .notes = .{ .url = "https://mcp.notes.example/mcp", .start_timeout_ms = 2000 },
    },
}"#,
            None,
        );
        assert_eq!(checked.problems, vec![]);
        let servers = &checked.rules.mcp;
        assert_eq!(servers.len(), 2);
        assert_eq!(
            servers[0].transport,
            McpTransport::Command {
                argv: vec![
                    "mcp-server-time".into(),
                    "--local-timezone".into(),
                    "UTC".into()
                ],
                env: vec![("TZ".into(), "UTC".into())],
                cwd: Some("tools".into()),
            }
        );
        assert_eq!(servers[0].call_timeout_ms, 500);
        assert_eq!(servers[0].start_timeout_ms, DEFAULT_START_TIMEOUT_MS);
        assert_eq!(
            servers[1].transport,
            McpTransport::Url("https://mcp.notes.example/mcp".into())
        );
        assert_eq!(servers[1].start_timeout_ms, 2000);
    }

    #[test]
    fn a_bad_name_both_neither_and_a_bad_url_are_each_a_problem_at_their_place() {
        let found = problems(
            r#".{
    .mcp = .{
        .@"two words" = .{ .command = .{ "x" } },
        .both = .{ .command = .{ "x" }, .url = "https://a.example/mcp" },
        .neither = .{ .env = .{} },
        .ftp = .{ .url = "ftp://a.example/mcp" },
        .plain = .{ .url = "http://a.example/mcp" },
        .empty = .{ .command = .{} },
        .typo = .{ .comand = .{ "x" } },
    },
}"#,
        );
        let at = |line: u32, says: &str| {
            assert!(
                found
                    .iter()
                    .any(|p| p.starts_with(&format!("{line}:")) && p.contains(says)),
                "no problem on line {line} saying {says:?}: {found:#?}"
            );
        };
        at(3, "cannot be one label");
        at(4, "both .command and .url");
        at(5, "neither .command nor .url");
        at(6, "the scheme ftp");
        at(7, "plain http to another machine");
        at(8, "is empty");
        at(9, "unknown field .comand");
    }

    #[test]
    fn loopback_http_is_a_url_and_credentials_in_it_are_not() {
        assert_eq!(url_host("http://127.0.0.1:8123/mcp").unwrap(), "127.0.0.1");
        assert_eq!(
            url_host("https://MCP.Example.com/x").unwrap(),
            "mcp.example.com"
        );
        assert_eq!(url_host("http://[::1]:9/mcp").unwrap(), "::1");
        assert!(url_host("https://user:pw@mcp.example.com/").is_err());
        assert!(url_host("mcp.example.com").is_err());
    }

    #[test]
    fn the_network_key_is_its_own_and_a_tool_named_network_is_not_it() {
        let network: Action = "mcp.fetch.network".parse().unwrap();
        assert_eq!(network, Action::mcp_network("fetch").unwrap());
        let tool = Action::mcp_tool("fetch", "network").unwrap();
        assert_eq!(tool.as_str(), "mcp.fetch.tool.network");
        assert_ne!(tool, network);
    }

    #[test]
    fn every_tool_denied_is_told_apart_from_one_tool_permitted() {
        let policy = |rules: &[(&str, crate::Decision)]| {
            let rules = rules
                .iter()
                .map(|(a, d)| crate::Rule::parse(Some(a), *d).unwrap())
                .collect();
            crate::Policy::new(crate::Layers {
                project: Some(crate::RuleSet::new(rules)),
                ..crate::Layers::default()
            })
        };
        use crate::Decision::{Allow, Deny};
        assert!(policy(&[("mcp.*", Deny)]).denies_every("mcp.time.tool"));
        assert!(policy(&[("mcp.time.tool.*", Deny)]).denies_every("mcp.time.tool"));
        assert!(
            !policy(&[("mcp.*", Deny), ("mcp.time.tool.get_current_time", Allow)])
                .denies_every("mcp.time.tool")
        );
        assert!(
            !policy(&[]).denies_every("mcp.time.tool"),
            "no rule asks at the call"
        );
    }

    #[test]
    fn a_project_server_with_an_operator_servers_name_is_left_out_and_said() {
        let server = |name: &str, origin: &str| McpServer {
            name: name.to_owned(),
            transport: McpTransport::Url("https://a.example/mcp".to_owned()),
            start_timeout_ms: 1,
            call_timeout_ms: 1,
            revision: None,
            origin: origin.to_owned(),
        };
        let both = McpServers::of(
            &[server("time", "config.zon:3")],
            &[
                server("time", "chock.zon:2"),
                server("notes", "chock.zon:3"),
            ],
        );
        let names: Vec<&str> = both.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["time", "notes"]);
        assert_eq!(both.servers[0].origin, "config.zon:3");
        assert_eq!(both.shadowed.len(), 1);
        assert!(
            both.shadowed[0].contains("chock.zon:2"),
            "{}",
            both.shadowed[0]
        );
    }
}
