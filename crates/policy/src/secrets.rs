//! The `.secrets` block of a chock.zon or config.zon: each secret's name,
//! where its value comes from on the person's machine, and what it binds to.
//!
//! It is read here, beside the policy block, because the same walk that
//! reports a policy's problems with line:column reports a secret's, and
//! because every use of a secret is decided at `secret.use.<name>`: the
//! block and the action that decides it are one contract. Only the spelling
//! is checked here; the value is read by the session at the call, and never
//! by this crate.

use std::path::PathBuf;

use chock_zon::{Field, Value, ValueKind};

use crate::action::label::{is_label, is_secret_name};
use crate::check::Walk;

/// Seconds a command source may take when the block names no timeout.
pub const DEFAULT_COMMAND_TIMEOUT_SECS: u64 = 10;
/// The longest timeout a command source may name.
pub const MAX_COMMAND_TIMEOUT_SECS: u64 = 120;

/// Variable names a secret may not be bound to: the sandbox sets them, or
/// they change how every program is loaded.
const RESERVED_ENV: &[&str] = &["PATH", "HOME", "TMPDIR", "SHELL", "USER"];

/// One secret the block names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretSpec {
    /// Letters, digits and `_`: the segment after `secret.use.`.
    pub name: String,
    /// Where the value comes from.
    pub source: SecretSource,
    /// What it is given to.
    pub bind: SecretBind,
    /// The file and line:column the secret was named at.
    pub file: Option<PathBuf>,
    /// 1-based line of the secret's name.
    pub line: u32,
    /// 1-based column of the secret's name.
    pub column: u32,
}

/// Where a secret's value comes from on the person's machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretSource {
    /// An environment variable of the person (of the `chock` process).
    Env(String),
    /// A file only its owner can read; `~/` is the person's home.
    File(PathBuf),
    /// A program whose standard output is the value (`pass show x`).
    Command {
        /// The program and its arguments; no shell.
        argv: Vec<String>,
        /// Seconds it may take before the use is refused.
        timeout_secs: u64,
    },
}

/// What a secret is given to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretBind {
    /// The environment variable that holds the value there.
    pub env: String,
    /// The program it reaches.
    pub target: BindTarget,
}

/// The three things a secret can be bound to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BindTarget {
    /// The environment of a run_command call that asks for it (foreground
    /// or background).
    Command,
    /// The environment of an MCP server, by its name, at its start.
    Mcp(String),
    /// The environment of a plugin, by its name.
    Plugin(String),
}

impl SecretSource {
    /// The source in a few words, for a person (never the value).
    pub fn describe(&self) -> String {
        match self {
            SecretSource::Env(var) => format!("the environment variable {var}"),
            SecretSource::File(path) => format!("the file {}", path.display()),
            SecretSource::Command { argv, .. } => format!("the command `{}`", argv.join(" ")),
        }
    }
}

impl BindTarget {
    /// The target in a few words, for a person.
    pub fn describe(&self) -> String {
        match self {
            BindTarget::Command => "run_command".to_owned(),
            BindTarget::Mcp(server) => format!("the MCP server {server}"),
            BindTarget::Plugin(name) => format!("the plugin {name}"),
        }
    }
}

/// An environment variable's name: a letter or `_`, then letters, digits
/// and `_`.
pub(crate) fn is_env_name(s: &str) -> bool {
    let mut bytes = s.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

impl Walk<'_> {
    /// `.secrets = .{ .NAME = .{ .from = ..., .bind = ... }, ... }`.
    pub(crate) fn secrets(&mut self, v: &Value) -> Vec<SecretSpec> {
        let Some(fields) = self.fields(v, ".secrets") else {
            return Vec::new();
        };
        fields.iter().filter_map(|f| self.secret(f)).collect()
    }

    fn secret(&mut self, f: &Field) -> Option<SecretSpec> {
        let name = &f.name;
        let name_ok = is_secret_name(name);
        if !name_ok {
            self.problem(
                &f.name_span,
                format!("the secret name `{name}` may hold only letters, digits and '_' (it is the segment after secret.use., and a dot would name a class of actions nobody wrote): rename it, e.g. .{}", name.replace(|c: char| !c.is_ascii_alphanumeric(), "_")),
            );
        }
        let fields = self.fields(&f.value, &format!(".secrets.{name}"))?;
        let mut source = None;
        let mut bind = None;
        let mut timeout = None;
        for field in fields {
            match field.name.as_str() {
                "from" => source = self.source(&field.value, name),
                "bind" => bind = self.bind(&field.value, name),
                "timeout_secs" => timeout = self.timeout(&field.value),
                other => self.problem(
                    &field.name_span,
                    format!("unknown field .{other} in the secret {name}: a secret holds .from, .bind and, for a command, .timeout_secs"),
                ),
            }
        }
        if source.is_none() && !fields.iter().any(|x| x.name == "from") {
            self.problem(&f.value.span, format!("the secret {name} has no .from: add one of .from = .{{ .env = \"VAR\" }}, .{{ .file = \"~/.config/x/token\" }} or .{{ .command = .{{ \"pass\", \"show\", \"x\" }} }}"));
        }
        if bind.is_none() && !fields.iter().any(|x| x.name == "bind") {
            self.problem(&f.value.span, format!("the secret {name} has no .bind: add .bind = .{{ .env = \"VAR\" }} to give it to run_command as $VAR"));
        }
        let mut source = source?;
        if let SecretSource::Command { timeout_secs, .. } = &mut source {
            *timeout_secs = timeout.unwrap_or(DEFAULT_COMMAND_TIMEOUT_SECS);
        } else if timeout.is_some() {
            self.problem(
                &f.value.span,
                format!(
                    "the secret {name} names .timeout_secs, which only a .command source takes"
                ),
            );
        }
        let bind = bind?;
        name_ok.then(|| SecretSpec {
            name: name.clone(),
            source,
            bind,
            file: self.file.map(std::path::Path::to_path_buf),
            line: f.name_span.start.line,
            column: f.name_span.start.column,
        })
    }

    fn timeout(&mut self, v: &Value) -> Option<u64> {
        match &v.kind {
            ValueKind::Int(n) if (1..=i128::from(MAX_COMMAND_TIMEOUT_SECS)).contains(n) => {
                u64::try_from(*n).ok()
            }
            _ => {
                self.problem(
                    &v.span,
                    format!(
                        ".timeout_secs is a number of seconds from 1 to {MAX_COMMAND_TIMEOUT_SECS}"
                    ),
                );
                None
            }
        }
    }

    fn source(&mut self, v: &Value, name: &str) -> Option<SecretSource> {
        let fields = self.fields(v, &format!(".secrets.{name}.from"))?;
        let [field] = fields else {
            self.problem(
                &v.span,
                format!(".secrets.{name}.from names one source: .env, .file or .command"),
            );
            return None;
        };
        match field.name.as_str() {
            "env" => match &field.value.kind {
                ValueKind::String(var) if is_env_name(var) => Some(SecretSource::Env(var.clone())),
                _ => {
                    self.problem(
                        &field.value.span,
                        ".env names an environment variable, such as \"GITHUB_TOKEN\"",
                    );
                    None
                }
            },
            "file" => match &field.value.kind {
                ValueKind::String(path) if path.starts_with('/') || path.starts_with("~/") => {
                    Some(SecretSource::File(PathBuf::from(path)))
                }
                _ => {
                    self.problem(&field.value.span, ".file is an absolute path or one under ~/, such as \"~/.config/chock/github-token\" (a path in the project would put the secret in the repository)");
                    None
                }
            },
            "command" => {
                let argv = match &field.value.kind {
                    ValueKind::List(items) => items
                        .iter()
                        .map(|item| match &item.kind {
                            ValueKind::String(s) if !s.is_empty() => Some(s.clone()),
                            _ => None,
                        })
                        .collect::<Option<Vec<_>>>()
                        .filter(|argv| !argv.is_empty()),
                    _ => None,
                };
                if argv.is_none() {
                    self.problem(&field.value.span, ".command is the program and its arguments as a list of strings, such as .{ \"pass\", \"show\", \"github\" }");
                }
                argv.map(|argv| SecretSource::Command {
                    argv,
                    timeout_secs: DEFAULT_COMMAND_TIMEOUT_SECS,
                })
            }
            other => {
                self.problem(
                    &field.name_span,
                    format!("unknown source .{other}: a secret comes from .env, .file or .command"),
                );
                None
            }
        }
    }

    fn bind(&mut self, v: &Value, name: &str) -> Option<SecretBind> {
        let fields = self.fields(v, &format!(".secrets.{name}.bind"))?;
        let mut env = None;
        let mut target = BindTarget::Command;
        let mut targets = 0;
        for field in fields {
            let text = match &field.value.kind {
                ValueKind::String(s) => Some(s.clone()),
                _ => None,
            };
            match (field.name.as_str(), text) {
                ("env", Some(var)) if is_env_name(&var) && !reserved(&var) => env = Some(var),
                ("env", Some(var)) if is_env_name(&var) => self.problem(
                    &field.value.span,
                    format!("a secret cannot be bound to ${var}: the sandbox sets it, or it changes how every program loads; choose another name"),
                ),
                ("env", _) => self.problem(
                    &field.value.span,
                    ".env is the variable the value is given as, such as \"GH_TOKEN\"",
                ),
                ("mcp", Some(server)) if is_label(&server) => {
                    targets += 1;
                    target = BindTarget::Mcp(server);
                }
                ("plugin", Some(plugin)) if is_label(&plugin) => {
                    targets += 1;
                    target = BindTarget::Plugin(plugin);
                }
                ("mcp" | "plugin", _) => self.problem(
                    &field.value.span,
                    format!(".{} names one server or plugin as its configuration does, a label such as \"github\"", field.name),
                ),
                (other, _) => self.problem(
                    &field.name_span,
                    format!("unknown field .{other} in .secrets.{name}.bind: it holds .env, and .mcp or .plugin to give the secret to one of those instead of run_command"),
                ),
            }
        }
        if targets > 1 {
            self.problem(&v.span, format!(".secrets.{name}.bind names both .mcp and .plugin: a secret binds to one of them"));
            return None;
        }
        if env.is_none() && !fields.iter().any(|f| f.name == "env") {
            self.problem(&v.span, format!(".secrets.{name}.bind has no .env: name the variable the value is given as, .env = \"GH_TOKEN\""));
        }
        Some(SecretBind { env: env?, target })
    }
}

fn reserved(var: &str) -> bool {
    RESERVED_ENV.contains(&var) || var.starts_with("LD_") || var.starts_with("CHOCK_")
}

#[cfg(test)]
mod tests {
    use crate::check_text;

    use super::*;

    fn problems(text: &str) -> Vec<String> {
        check_text(text, None)
            .problems
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn each_source_and_target_reads() {
        let text = r#".{ .secrets = .{
    .GH = .{ .from = .{ .env = "GITHUB_TOKEN" }, .bind = .{ .env = "GH_TOKEN" } },
    .NPM = .{ .from = .{ .file = "~/.npm-token" }, .bind = .{ .env = "NPM_TOKEN", .mcp = "npm" } },
    .PASS = .{ .from = .{ .command = .{ "pass", "show", "x" } }, .timeout_secs = 3, .bind = .{ .env = "P", .plugin = "p" } },
} }"#;
        let checked = check_text(text, None);
        assert_eq!(checked.problems, vec![]);
        let s = &checked.rules.secrets;
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].source, SecretSource::Env("GITHUB_TOKEN".into()));
        assert_eq!(s[0].bind.target, BindTarget::Command);
        assert_eq!((s[0].line, s[0].column), (2, 5));
        assert_eq!(s[1].bind.target, BindTarget::Mcp("npm".into()));
        assert_eq!(
            s[2].source,
            SecretSource::Command {
                argv: vec!["pass".into(), "show".into(), "x".into()],
                timeout_secs: 3
            }
        );
        assert_eq!(s[2].bind.target, BindTarget::Plugin("p".into()));
    }

    #[test]
    fn a_name_with_a_dot_and_other_mistakes_are_problems_with_their_place() {
        let text = ".{ .secrets = .{\n    .@\"A.B\" = .{ .from = .{ .env = \"X\" }, .bind = .{ .env = \"Y\" } },\n    .C = .{ .from = .{ .file = \"token\" }, .bind = .{ .env = \"PATH\" } },\n    .D = .{ .bind = .{ .env = \"Z\" } },\n} }";
        let p = problems(text);
        assert_eq!(p.len(), 4, "{p:#?}");
        assert!(
            p[0].starts_with("2:5: the secret name `A.B` may hold only letters, digits and '_'"),
            "{}",
            p[0]
        );
        assert!(
            p[1].starts_with("3:32: .file is an absolute path"),
            "{}",
            p[1]
        );
        assert!(
            p[2].starts_with("3:61: a secret cannot be bound to $PATH"),
            "{}",
            p[2]
        );
        assert!(
            p[3].starts_with("4:10: the secret D has no .from"),
            "{}",
            p[3]
        );
    }
}
