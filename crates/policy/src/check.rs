//! Reading the policy block of a chock.zon, config.zon or org bundle, and
//! every problem in it with its line and column.
//!
//! The file is parsed into chock-zon's spanned tree and walked by hand rather
//! than deserialised, so that one pass reports every problem (an unknown
//! decision on line 4 does not hide a malformed action on line 9) and each
//! one points at the value that is wrong. `.policy` and `.secrets` are read
//! here; the runner's config blocks (providers, model, ...) are known and
//! left to it; any other top-level block is reported as unread
//! ([`NOT_ACTED_ON`] for the ones the design names and this version does
//! not act on). Inside `.policy` an unknown field is a problem, because a
//! misspelt `.rulse` would otherwise quietly permit less than was meant, or
//! more.

use std::fmt;
use std::path::Path;

use chock_zon::{Field, Span, Value, ValueKind};
use serde::Serialize;

use crate::decision::Decision;
use crate::net::{MAX_RESOLVER_PORTS, NetMode, NetSettings, ResolverMode};
use crate::pattern::Pattern;
use crate::policy::RuleSet;
use crate::rule::{Rule, RuleRef, rule_text};

/// One thing wrong with a policy file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// What is wrong and what to write instead.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

/// What a policy file holds: its rules and net words, and its problems.
#[derive(Debug, Clone)]
pub struct Checked {
    /// The rules that read cleanly, in file order.
    pub rules: RuleSet,
    /// Every problem, in file order. A file with any is not used.
    pub problems: Vec<Problem>,
    /// The top-level blocks Chock does not act on, each a problem for
    /// `chock policy check` and one line at a session's start (the file is
    /// still used: what it says elsewhere holds).
    pub unread: Vec<Problem>,
}

/// The top-level blocks a chock.zon or config.zon may hold that this
/// version reads and validates: the policy, the secrets, the MCP servers,
/// the workspace binds, the devices, the language servers and the style rules here, the rest
/// in the runner's config (docs/configuration.md lists them all).
pub const KNOWN_BLOCKS: &[&str] = &[
    "policy",
    "secrets",
    "mcp",
    "plugins",
    "workspace",
    "devices",
    "lsp",
    "style",
    "providers",
    "model",
    "reviewer",
    "context_window",
    "search",
    "skills_dir",
    "devshell",
    "subagents",
    "max_model_calls",
    "max_session_model_calls",
];

/// The blocks only config.zon holds (the runner reads them from there).
const CONFIG_BLOCKS: &[&str] = &[
    "providers",
    "model",
    "reviewer",
    "context_window",
    "search",
    "skills_dir",
    "devshell",
    "subagents",
    "max_model_calls",
    "max_session_model_calls",
];

/// The blocks only a project's chock.zon holds: what one project's
/// sessions are given beside the worktree.
const PROJECT_BLOCKS: &[&str] = &["workspace", "devices"];

/// Which file a text is, for the blocks it may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A project's chock.zon: `.policy` and `.secrets`.
    Project,
    /// The operator's config.zon: those and the config blocks.
    Operator,
    /// The org bundle: `.policy`.
    Org,
    /// Not known: every block any of them holds.
    Any,
}

impl FileKind {
    /// The kind a file's name says: `chock.zon`, `config.zon`, `org.zon`.
    pub fn of_path(path: &Path) -> FileKind {
        match path.file_name().and_then(|n| n.to_str()) {
            Some("chock.zon") => FileKind::Project,
            Some("config.zon") => FileKind::Operator,
            Some("org.zon") => FileKind::Org,
            _ => FileKind::Any,
        }
    }

    /// Why `name`, a block Chock reads elsewhere, is not read in this
    /// kind of file; `None` where it is read.
    fn misplaced(self, name: &str) -> Option<String> {
        let config = CONFIG_BLOCKS.contains(&name);
        let project = PROJECT_BLOCKS.contains(&name);
        match self {
            FileKind::Project if config => Some(format!(
                "the .{name} block belongs in your config.zon ($XDG_CONFIG_HOME/chock/config.zon): a project's chock.zon does not choose it, and nothing here reads it"
            )),
            FileKind::Operator if project => Some(format!(
                "the .{name} block belongs in a project's chock.zon: it names what one project's sessions are given, and nothing reads it here"
            )),
            FileKind::Org
                if matches!(name, "secrets" | "mcp" | "plugins" | "lsp" | "style")
                    || config
                    || project =>
            {
                Some(format!(
                    "an org bundle's .{name} block is not read: the bundle holds .policy, a ceiling over the other files"
                ))
            }
            FileKind::Project | FileKind::Operator | FileKind::Org | FileKind::Any => None,
        }
    }
}

/// The blocks the design names that this version does not act on yet. Each
/// leaves this list when the part of Chock that reads it lands; until then a
/// file naming one is told so rather than left to believe it applies.
pub const NOT_ACTED_ON: &[&str] = &[];

fn unread_block(name: &str) -> String {
    if NOT_ACTED_ON.contains(&name) {
        format!(
            "the .{name} block is not acted on by this version of Chock: nothing in it applies; remove it, or keep it for a version that reads it"
        )
    } else {
        format!(
            "unknown block .{name}: Chock reads {}; check the spelling (docs/configuration.md lists every key)",
            KNOWN_BLOCKS
                .iter()
                .map(|b| format!(".{b}"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

pub(crate) struct Walk<'a> {
    pub(crate) file: Option<&'a Path>,
    /// The file's text, for a value whose own source is needed (a style
    /// rule's query, to place a mistake inside it).
    pub(crate) source: &'a str,
    problems: Vec<Problem>,
}

impl Walk<'_> {
    /// `.plugins = .{ "hello", "notes" }`: the plugins enabled, each by
    /// its name, one label; a name twice is said once.
    pub(crate) fn plugins(&mut self, value: &Value) -> Vec<String> {
        let Some(items) = items(value) else {
            self.problem(
                &value.span,
                format!(
                    ".plugins is {}; write the names of the plugins to enable, .plugins = .{{ \"hello\" }}",
                    kind_name(&value.kind)
                ),
            );
            return Vec::new();
        };
        let mut names: Vec<String> = Vec::new();
        for item in items {
            match &item.kind {
                ValueKind::String(name) if crate::action::label::is_label(name) => {
                    if !names.contains(name) {
                        names.push(name.clone());
                    }
                }
                ValueKind::String(name) => self.problem(
                    &item.span,
                    format!(
                        "'{name}' cannot be a plugin's name: it is one label of plugin.<name>.tool.<tool> (letters, digits, '-' and '_')"
                    ),
                ),
                other => self.problem(
                    &item.span,
                    format!("a plugin is named by a string, not {}", kind_name(other)),
                ),
            }
        }
        names
    }

    /// Where `span` is, for a sentence that names an entry of the file:
    /// `file:line:column`, or the line and column of a text with no file.
    pub(crate) fn place(&self, span: &Span) -> String {
        match self.file {
            Some(file) => format!(
                "{}:{}:{}",
                file.display(),
                span.start.line,
                span.start.column
            ),
            None => format!("line {}, column {}", span.start.line, span.start.column),
        }
    }

    pub(crate) fn problem(&mut self, span: &Span, message: impl Into<String>) {
        self.problems.push(Problem {
            line: span.start.line,
            column: span.start.column,
            message: message.into(),
        });
    }
}

pub(crate) fn kind_name(kind: &ValueKind) -> &'static str {
    match kind {
        ValueKind::Struct(_) => "a struct",
        ValueKind::List(_) => "a list",
        ValueKind::EnumLiteral(_) => "an enum literal",
        ValueKind::String(_) => "a string",
        ValueKind::Int(_) => "a number",
        ValueKind::Float(_) => "a number",
        ValueKind::Bool(_) => "a bool",
        ValueKind::Null => "null",
        ValueKind::Char(_) => "a character",
    }
}

/// Reads `text` (the contents of `file`) and reports every problem in its
/// `.policy` and `.secrets` blocks. A file with no `.policy` block holds no
/// rules. Every block any file may hold is taken as known; see
/// [`check_file`] to check for one kind of file.
pub fn check_text(text: &str, file: Option<&Path>) -> Checked {
    check_file(text, file, FileKind::Any)
}

/// [`check_text`] for a file of `kind`: a block that kind does not hold
/// (a provider in a project's chock.zon) is unread, as an unknown one is.
pub fn check_file(text: &str, file: Option<&Path>, kind: FileKind) -> Checked {
    let mut walk = Walk {
        file,
        source: text,
        problems: Vec::new(),
    };
    let mut set = RuleSet {
        file: file.map(Path::to_path_buf),
        ..RuleSet::default()
    };
    let mut unread = Vec::new();
    let root = match chock_zon::parse(text) {
        Ok(v) => v,
        Err(e) => {
            walk.problems.push(Problem {
                line: e.line(),
                column: e.column(),
                message: format!("this is not ZON: {}", e.message()),
            });
            return Checked {
                rules: set,
                problems: walk.problems,
                unread,
            };
        }
    };
    match &root.kind {
        ValueKind::Struct(fields) => {
            for f in fields {
                let place = |message| Problem {
                    line: f.name_span.start.line,
                    column: f.name_span.start.column,
                    message,
                };
                if let Some(why) = kind.misplaced(&f.name) {
                    unread.push(place(why));
                    continue;
                }
                match f.name.as_str() {
                    "policy" => walk.policy(&f.value, &mut set),
                    "secrets" => {
                        set.secrets = walk.secrets(&f.value, kind == FileKind::Project);
                    }
                    // The MCP servers a session starts (crate::mcp).
                    "mcp" => set.mcp = walk.mcp(&f.value),
                    // The plugins a session enables (docs/plugins.md).
                    "plugins" => set.plugins = walk.plugins(&f.value),
                    // Paths and devices beside the worktree (crate::binds,
                    // crate::devices).
                    "workspace" => set.binds = walk.workspace(&f.value),
                    "devices" => set.devices = walk.devices(&f.value),
                    // The language servers a session starts and the
                    // project's style rules (crate::lsp, crate::style).
                    "lsp" => set.lsp = walk.lsp(&f.value),
                    "style" => set.style = walk.style(&f.value),
                    name if KNOWN_BLOCKS.contains(&name) => {}
                    name => unread.push(place(unread_block(name))),
                }
            }
        }
        ValueKind::List(items) if items.is_empty() => {}
        other => walk.problem(
            &root.span,
            format!(
                "the file holds {}; a policy file is one struct, .{{ .policy = .{{ ... }} }}",
                kind_name(other)
            ),
        ),
    }
    set.unread.clone_from(&unread);
    Checked {
        rules: set,
        problems: walk.problems,
        unread,
    }
}

/// An empty `.{}` reads as either an empty struct or an empty list.
pub(crate) fn items(v: &Value) -> Option<&[Value]> {
    match &v.kind {
        ValueKind::List(items) => Some(items),
        ValueKind::Struct(fields) if fields.is_empty() => Some(&[]),
        _ => None,
    }
}

impl Walk<'_> {
    fn policy(&mut self, v: &Value, set: &mut RuleSet) {
        let ValueKind::Struct(fields) = &v.kind else {
            self.problem(
                &v.span,
                format!(
                    ".policy holds {}; write .policy = .{{ .rules = .{{ ... }} }}",
                    kind_name(&v.kind)
                ),
            );
            return;
        };
        for f in fields {
            match f.name.as_str() {
                "rules" => self.rules(&f.value, set),
                "net" => set.net = self.net(&f.value),
                other => self.problem(
                    &f.name_span,
                    format!("unknown field .{other} in the policy block: it holds .rules and .net"),
                ),
            }
        }
    }

    fn net(&mut self, v: &Value) -> NetSettings {
        let mut net = NetSettings::default();
        let Some(fields) = self.fields(v, ".policy.net") else {
            return net;
        };
        for f in fields {
            let slot = match f.name.as_str() {
                "router" => &mut net.router,
                "background" => &mut net.background,
                "resolver" => {
                    match &f.value.kind {
                        ValueKind::EnumLiteral(w) if ResolverMode::parse(w).is_some() => {
                            net.resolver = ResolverMode::parse(w);
                        }
                        _ => self.problem(&f.value.span, ".resolver takes .none or .fake"),
                    }
                    continue;
                }
                "resolver_ports" => {
                    net.resolver_ports = self.ports(&f.value);
                    continue;
                }
                other => {
                    self.problem(&f.name_span, format!("unknown field .{other} in .policy.net: it holds .router, .background, .resolver and .resolver_ports"));
                    continue;
                }
            };
            match &f.value.kind {
                ValueKind::EnumLiteral(w) if NetMode::parse(w).is_some() => {
                    *slot = NetMode::parse(w);
                }
                _ => self.problem(
                    &f.value.span,
                    format!(".{} takes .auto, .none or .filtered", f.name),
                ),
            }
        }
        net
    }

    /// `.resolver_ports`: a list of ports, 1 to 65535, at most
    /// [`MAX_RESOLVER_PORTS`] of them.
    fn ports(&mut self, v: &Value) -> Option<Vec<u16>> {
        let ValueKind::List(items) = &v.kind else {
            self.problem(
                &v.span,
                ".resolver_ports holds a list of ports, such as .{ 22, 8080 }",
            );
            return None;
        };
        if items.len() > MAX_RESOLVER_PORTS {
            self.problem(
                &v.span,
                format!(
                    ".resolver_ports lists {} ports; at most {MAX_RESOLVER_PORTS} (each is a listener per name looked up)",
                    items.len()
                ),
            );
            return None;
        }
        let mut out = Vec::new();
        for item in items {
            match &item.kind {
                ValueKind::Int(n) if (1..=65535).contains(n) => {
                    out.push(u16::try_from(*n).unwrap_or(0));
                }
                _ => self.problem(
                    &item.span,
                    "a port in .resolver_ports is a number from 1 to 65535",
                ),
            }
        }
        Some(out)
    }

    pub(crate) fn fields<'v>(&mut self, v: &'v Value, what: &str) -> Option<&'v [Field]> {
        match &v.kind {
            ValueKind::Struct(fields) => Some(fields),
            ValueKind::List(items) if items.is_empty() => Some(&[]),
            other => {
                self.problem(
                    &v.span,
                    format!(
                        "{what} holds {}; it should be a struct .{{ ... }}",
                        kind_name(other)
                    ),
                );
                None
            }
        }
    }

    fn rules(&mut self, v: &Value, set: &mut RuleSet) {
        let Some(list) = items(v) else {
            self.problem(
                &v.span,
                format!(".rules holds {}; write a list of rules, .{{ .{{ .action = \"...\", .decision = .allow }}, }}", kind_name(&v.kind)),
            );
            return;
        };
        let mut seen: Vec<(Pattern, Span)> = Vec::new();
        for item in list {
            let Some(rule) = self.rule(item) else {
                continue;
            };
            if let Some((_, first)) = seen.iter().find(|(p, _)| *p == rule.pattern) {
                let message = format!(
                    "duplicate rule for {}: the first is at line {}, column {}; keep one",
                    rule.pattern, first.start.line, first.start.column
                );
                self.problem(&item.span, message);
                continue;
            }
            seen.push((rule.pattern.clone(), item.span));
            set.rules.push(rule);
        }
    }

    fn rule(&mut self, v: &Value) -> Option<Rule> {
        let ValueKind::Struct(fields) = &v.kind else {
            self.problem(
                &v.span,
                format!(
                    "a rule is a struct, .{{ .action = \"...\", .decision = .allow }}, not {}",
                    kind_name(&v.kind)
                ),
            );
            return None;
        };
        let mut pattern = Some(Pattern::CatchAll);
        let mut decision = None;
        let mut decision_seen = false;
        for f in fields {
            match f.name.as_str() {
                "action" => {
                    pattern = match &f.value.kind {
                        ValueKind::String(s) => match Pattern::parse(s) {
                            Ok(p) => Some(p),
                            Err(e) => {
                                self.problem(&f.value.span, e.to_string());
                                None
                            }
                        },
                        other => {
                            self.problem(&f.value.span, format!(".action is a string such as \"net.fetch.org.ziglang.*\", not {}", kind_name(other)));
                            None
                        }
                    };
                }
                "decision" => {
                    decision_seen = true;
                    decision = match &f.value.kind {
                        ValueKind::EnumLiteral(w) => match w.parse::<Decision>() {
                            Ok(d) => Some(d),
                            Err(e) => {
                                self.problem(&f.value.span, e.to_string());
                                None
                            }
                        },
                        other => {
                            self.problem(&f.value.span, format!(".decision is one of .deny, .agent_then_human, .ask, .agent_review, .allow, not {}", kind_name(other)));
                            None
                        }
                    };
                }
                other => self.problem(
                    &f.name_span,
                    format!("unknown field .{other} in a rule: a rule holds .action and .decision"),
                ),
            }
        }
        if !decision_seen {
            self.problem(&v.span, "this rule has no .decision: add one of .deny, .agent_then_human, .ask, .agent_review, .allow");
        }
        let (pattern, decision) = (pattern?, decision?);
        Some(Rule {
            origin: RuleRef {
                text: rule_text(&pattern, decision),
                file: self.file.map(Path::to_path_buf),
                line: Some(v.span.start.line),
                column: Some(v.span.start.column),
            },
            pattern,
            decision,
        })
    }
}
