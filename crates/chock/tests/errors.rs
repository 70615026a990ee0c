//! One error of each error type of the workspace, printed the way the
//! binary prints it (`chock: <error>: <cause>`, the whole chain through
//! [`chock_cli::error_line`]): each snapshot shows that a cause is said
//! once, and that the error still says what to do next.

#![expect(clippy::unwrap_used, reason = "test helpers fail loudly")]

use std::io;
use std::path::PathBuf;

use chock_control::Address;

/// The line the binary prints for `err`.
fn line(err: impl std::error::Error + Send + Sync + 'static) -> String {
    chock_cli::error_line(&anyhow::Error::new(err))
}

/// What the system says for `errno`.
fn os(errno: i32) -> io::Error {
    io::Error::from_raw_os_error(errno)
}

/// One line per error type: its name, then what the binary prints.
fn table(rows: &[(&str, String)]) -> String {
    rows.iter()
        .map(|(name, line)| format!("{name}\n  {line}\n"))
        .collect()
}

fn daemon() -> Address {
    Address::Unix(PathBuf::from("/run/user/1000/chock/daemon.sock"))
}

#[test]
fn control_errors() {
    use chock_control::approve::ApproveError;
    use chock_control::handover::HandoverError;
    use chock_control::{
        AddressError, ClientError, GreetingError, LineError, ListenError, PeerError, RequestError,
    };
    insta::assert_snapshot!(table(&[
        (
            "AddressError",
            line(AddressError::BadPort("localhost:http".to_owned())),
        ),
        (
            "ApproveError",
            line(ApproveError::Connect {
                path: "/state/sessions/s/approvals.sock".into(),
                error: os(libc::ECONNREFUSED),
            }),
        ),
        (
            "ClientError",
            line(ClientError::NotListening {
                address: daemon(),
                error: os(libc::ECONNREFUSED),
            }),
        ),
        (
            "GreetingError",
            line(GreetingError::Mismatch {
                daemon: 2,
                client: 1,
            }),
        ),
        (
            "HandoverError",
            line(HandoverError::Connect {
                path: "/state/sessions/s/handover.sock".into(),
                error: os(libc::ENOENT),
            }),
        ),
        ("LineError", line(LineError::Io(os(libc::ECONNRESET)))),
        (
            "ListenError",
            line(ListenError::Bind {
                address: "127.0.0.1:7300".to_owned(),
                error: os(libc::EADDRINUSE),
            }),
        ),
        (
            "PeerError",
            line(PeerError::Foreign {
                peer: 1001,
                own: 1000,
                whose: chock_control::Whose::Daemon,
            })
        ),
        (
            "PeerError (a session's socket)",
            line(PeerError::Foreign {
                peer: 1001,
                own: 1000,
                whose: chock_control::Whose::Session,
            })
        ),
        (
            "RequestError",
            line(RequestError::UnknownVerb {
                verb: "stat".to_owned(),
            }),
        ),
    ]));
}

#[test]
fn daemon_gate_gateway_and_serve_errors() {
    insta::assert_snapshot!(table(&[
        (
            "DaemonError",
            line(chock_daemon::DaemonError::Runtime(os(libc::EMFILE))),
        ),
        (
            "GateError",
            line(chock_gate::GateError::Io {
                action: "resolve",
                path: "/home/me/shop".into(),
                error: os(libc::ENOENT),
            }),
        ),
        (
            "GatewayError",
            line(chock_gateway::GatewayError::Spawn {
                command: "mcp-server-time".to_owned(),
                error: os(libc::ENOENT),
            }),
        ),
        (
            "ServeError",
            line(chock_serve::ServeError::Runtime(os(libc::EMFILE))),
        ),
    ]));
}

#[test]
fn log_errors() {
    use chock_log::id::SessionIdError;
    use chock_log::time::TimestampError;
    use chock_log::{FindError, PathError, ReadError, SessionId, WriteError};
    let id = SessionId::parse("20261129-192736-123-7f3a9c1e").unwrap();
    insta::assert_snapshot!(table(&[
        (
            "FindError",
            line(FindError::Unknown {
                id,
                dir: "/home/me/.local/state/chock".into(),
            }),
        ),
        (
            "PathError",
            line(PathError::Create {
                path: "/home/me/.local/state/chock".into(),
                error: os(libc::EACCES),
            }),
        ),
        (
            "ReadError",
            line(ReadError::Io {
                path: "/state/sessions/s/log.jsonl".into(),
                error: os(libc::EACCES),
            }),
        ),
        (
            "SessionIdError",
            line(SessionIdError {
                text: "../etc".to_owned(),
            }),
        ),
        (
            "TimestampError",
            line(TimestampError {
                text: "yesterday".to_owned(),
            }),
        ),
        (
            "WriteError",
            line(WriteError::Append {
                path: "/state/sessions/s/log.jsonl".into(),
                error: os(libc::ENOSPC),
            }),
        ),
    ]));
}

#[test]
fn policy_errors() {
    use chock_policy::{ActionError, LoadError, PromiseId, UnknownDecision, WidenError};
    insta::assert_snapshot!(table(&[
        ("ActionError", line(ActionError::BadPort("http".to_owned()))),
        (
            "LoadError",
            line(LoadError::Read {
                path: "/home/me/shop/chock.zon".into(),
                error: os(libc::EACCES),
            }),
        ),
        ("UnknownDecision", line(UnknownDecision("maybe".to_owned())),),
        ("WidenError", line(WidenError::Denied(PromiseId(2)))),
    ]));
}

#[test]
fn runner_errors() {
    use chock_runner::RunError;
    use chock_runner::approve::{ClientError, SocketError};
    use chock_runner::config::ConfigError;
    use chock_runner::detach::{DetachError, HandoverSocketError};
    use chock_runner::provider::ProviderError;
    use chock_runner::session::SessionError;
    use chock_runner::workspace::WorkspaceError;
    use chock_runner::workspace::session::StartError;
    use chock_runner::workspace::takeover::TakeoverError;
    let session = "20261129-192736-123-7f3a9c1e".to_owned();
    insta::assert_snapshot!(table(&[
        (
            "ClientError (approve)",
            line(ClientError::NothingPending {
                session: session.clone(),
            }),
        ),
        (
            "ConfigError",
            line(ConfigError::NoModel {
                path: "/home/me/.config/chock/config.zon".into(),
                known: "local".to_owned(),
            }),
        ),
        (
            "DetachError",
            line(DetachError::Daemon {
                session: session.clone(),
                error: chock_control::ClientError::NotListening {
                    address: daemon(),
                    error: os(libc::ECONNREFUSED),
                },
            }),
        ),
        (
            "HandoverSocketError",
            line(HandoverSocketError::Bind {
                path: "/state/sessions/s/handover.sock".into(),
                error: os(libc::EACCES),
            }),
        ),
        (
            "ProviderError",
            line(ProviderError::Connect {
                instance: "local".to_owned(),
                url: "http://127.0.0.1:11434/v1".to_owned(),
                detail: "error sending request: Connection refused (os error 111)".to_owned(),
            }),
        ),
        (
            "RunError",
            line(RunError::Project {
                path: "/home/me/shpo".into(),
                detail: os(libc::ENOENT).to_string(),
            }),
        ),
        (
            "SessionError",
            line(SessionError::Workspace {
                path: "/home/me/shop".into(),
                detail: "it is not a directory".to_owned(),
            }),
        ),
        (
            "SocketError",
            line(SocketError::Bind {
                path: "/state/sessions/s/approvals.sock".into(),
                error: os(libc::EACCES),
            }),
        ),
        (
            "StartError",
            line(StartError::Refused(
                "the session's log names no project".to_owned()
            )),
        ),
        (
            "TakeoverError",
            line(TakeoverError::NoWorkspace {
                session: session.clone(),
            }),
        ),
        (
            "WorkspaceError",
            line(WorkspaceError::Io {
                what: "create",
                path: "/home/me/.local/state/chock/workspaces/s".into(),
                error: os(libc::ENOSPC),
            }),
        ),
    ]));
}

#[test]
fn sandbox_errors() {
    use chock_sandbox::net::PublishError;
    use chock_sandbox::{SpawnError, SpecError};
    insta::assert_snapshot!(table(&[
        (
            "PublishError",
            line(PublishError::Bind {
                port: 8080,
                error: os(libc::EADDRNOTAVAIL),
            }),
        ),
        (
            "SpawnError",
            line(SpawnError::Setup {
                step: "bind /nix/store read-only".to_owned(),
                error: os(libc::EPERM),
            }),
        ),
        (
            "SpecError",
            line(SpecError::WorkspaceMissing {
                path: "/home/me/shpo".into(),
            }),
        ),
    ]));
}

#[test]
fn tools_errors() {
    use chock_runner::tools::push_credential::connect::ConnectError;
    use chock_runner::tools::push_credential::helper::HelperError;
    use chock_runner::tools::{PathError, ToolError};
    insta::assert_snapshot!(table(&[
        ("ConnectError", line(ConnectError::Io(os(libc::ECONNRESET)))),
        (
            "HelperError",
            line(HelperError::Connect {
                path: "/run/chock/push-credential.sock".into(),
                error: os(libc::ENOENT),
            }),
        ),
        (
            "PathError (tools)",
            line(PathError::Outside {
                given: "../secrets".to_owned(),
            }),
        ),
        (
            "ToolError",
            line(ToolError::Arguments {
                tool: "read_file",
                detail: "missing field `path`".to_owned(),
            }),
        ),
    ]));
}

#[test]
fn lsp_and_style_errors() {
    use chock_lsp::LspError;
    let rule = chock_policy::check_text(
        ".{ .style = .{ .bad = .{ .files = .{ \"*.rs\" }, .query = \"(nope) @n\" } } }",
        Some(std::path::Path::new("/home/ann/shop/chock.zon")),
    )
    .rules
    .style;
    let compile = chock_style::Rules::compile(&rule).unwrap_err();
    insta::assert_snapshot!(table(&[
        ("LspError::Io", line(LspError::Io(os(libc::EPIPE)))),
        (
            "LspError::Garbage",
            line(LspError::Garbage(
                "\"Traceback (most recent call last)\" where a Content-Length header belongs"
                    .to_owned()
            )),
        ),
        (
            "LspError::Timeout",
            line(LspError::Timeout {
                method: "initialize",
                after: std::time::Duration::from_millis(10_000),
            }),
        ),
        (
            "LspError::Answered",
            line(LspError::Answered {
                method: "initialize",
                code: -32603,
                message: "no workspace".to_owned(),
            }),
        ),
        ("LspError::Ended", line(LspError::Ended)),
        (
            "LspError::Flooded",
            line(LspError::Flooded(
                "more than 10000 messages since the last edit".to_owned()
            )),
        ),
        ("CompileError", line(compile.clone())),
        (
            "RunError::Style",
            line(chock_runner::RunError::Style(compile)),
        ),
    ]));
}

/// A subcommand's context over a library error over a system error: three
/// links, each said once.
#[test]
fn a_context_over_a_library_error() {
    let err = anyhow::Error::new(chock_log::PathError::Create {
        path: "/home/me/.local/state/chock".into(),
        error: os(libc::EACCES),
    })
    .context("cannot start the daemon");
    insta::assert_snapshot!(chock_cli::error_line(&err));
}

/// `chock` with a state directory and config of its own, run with `args`:
/// its exit code and stderr.
fn chock(args: &[&str]) -> (Option<i32>, String) {
    let state = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_chock"))
        .args(args)
        .env("CHOCK_STATE_DIR", state.path())
        .env("XDG_CONFIG_HOME", state.path().join("config"))
        .env("HOME", state.path())
        .env_remove("CHOCK_DAEMON")
        .env_remove("CHOCK_LOG")
        .current_dir(state.path())
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A project directory that does not exist: the system's word for it once,
/// then what to do.
#[test]
fn a_missing_project_directory_says_what_to_give() {
    let (code, stderr) = chock(&["run", "/nonexistent/shop", "hello"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(
        stderr.trim_end(),
        "chock: cannot use the project directory /nonexistent/shop: No such file or directory \
         (os error 2); give an existing directory, a git repository: chock run <project dir> <message>"
    );
}

/// A library error under a subcommand's context, through the binary: the
/// system's word is said once.
#[test]
fn stop_in_a_missing_directory_says_the_cause_once() {
    let (code, stderr) = chock(&["stop", "--project", "/nonexistent/shop"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(
        stderr.trim_end(),
        "chock: could not stop agents: cannot resolve /nonexistent/shop: No such file or directory (os error 2)"
    );
}

/// The rule itself, over the sources of every crate: no `#[error]` message
/// interpolates a field `thiserror` also returns as `source()` (a field
/// named `source`, or one marked `#[source]` or `#[from]`).
#[test]
fn no_error_says_its_source_in_its_message() {
    let crates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    let mut dirs = vec![crates];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() && !path.ends_with("tests") && !path.ends_with("target") {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    let mut said_twice = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (at, _) in text.match_indices("#[error(") {
            let rest = &text[at..];
            let attr_end = rest.find(")]\n").unwrap_or(rest.len());
            let attr = &rest[..attr_end];
            let body = &rest[attr_end..];
            let body_end = body[1..]
                .find("#[error(")
                .or_else(|| body.find("\n}"))
                .unwrap_or(body.len());
            let body = &body[..body_end];
            let marked = body.contains("#[source]") || body.contains("#[from]");
            if attr.contains("{source") || (marked && attr.contains("{0")) {
                let line = text[..at].lines().count() + 1;
                said_twice.push(format!("{}:{line}", file.display()));
            }
        }
    }
    assert!(files.len() > 100, "only {} source files found", files.len());
    assert!(said_twice.is_empty(), "{said_twice:#?}");
}
