//! The `.lsp` block of a chock.zon or config.zon: the language servers a
//! session starts, each by name, with the files it serves.
//!
//! ```zig
//! .lsp = .{
//!     .pylsp = .{
//!         .command = .{ "pylsp" },
//!         .files = .{ "**/*.py" },
//!         .init = .{ .pylsp = .{ .plugins = .{ .pycodestyle = .{ .enabled = false } } } },
//!     },
//! },
//! ```
//!
//! A server serves the files its `.files` globs match (relative to the
//! workspace root) and the files of its `.languages` (by extension, from
//! [`LANGUAGES`]). The block is data only: the runner decides each start at
//! `lsp.<last path component of the program>` and runs the server in the
//! session's sandbox; a program whose name cannot be one label of an action
//! is not refused here but there, where the session says so.

use chock_zon::{Value, ValueKind};

use crate::check::{Walk, kind_name};

/// How long a server may take to answer `initialize`, unless
/// `.start_timeout_ms` says otherwise.
pub const DEFAULT_LSP_START_MS: u64 = 10_000;

/// How long an edit waits for a server's diagnostics, unless `.wait_ms`
/// says otherwise.
pub const DEFAULT_LSP_WAIT_MS: u64 = 2_000;

/// The languages `.languages` may name: the LSP language id and the file
/// extensions that are it.
pub const LANGUAGES: &[(&str, &[&str])] = &[
    ("c", &["c", "h"]),
    ("cpp", &["cc", "cpp", "cxx", "hpp", "hh"]),
    ("go", &["go"]),
    ("javascript", &["js", "mjs", "cjs"]),
    ("javascriptreact", &["jsx"]),
    ("nix", &["nix"]),
    ("python", &["py", "pyi"]),
    ("rust", &["rs"]),
    ("typescript", &["ts", "mts", "cts"]),
    ("typescriptreact", &["tsx"]),
    ("zig", &["zig"]),
];

/// The LSP language id of a file by its extension, when it is one of
/// [`LANGUAGES`].
pub fn language_of(path: &str) -> Option<&'static str> {
    let ext = path.rsplit_once('.')?.1;
    LANGUAGES
        .iter()
        .find(|(_, exts)| exts.contains(&ext))
        .map(|(id, _)| *id)
}

/// One language server as a file names it.
#[derive(Debug, Clone, PartialEq)]
pub struct LspServer {
    /// Its name in the block (for notices and the diagnostics it sends).
    pub name: String,
    /// The program and its arguments, run in the session's sandbox.
    pub argv: Vec<String>,
    /// Extra environment variables.
    pub env: Vec<(String, String)>,
    /// Globs of the files it serves, relative to the workspace root.
    pub files: Vec<String>,
    /// Language ids whose files it serves.
    pub languages: Vec<String>,
    /// Its `initializationOptions`, as written.
    pub init: Option<Value>,
    /// Milliseconds it may take to answer `initialize`.
    pub start_timeout_ms: u64,
    /// Milliseconds an edit waits for its diagnostics.
    pub wait_ms: u64,
    /// The file and line that named it, for notices.
    pub origin: String,
}

impl LspServer {
    /// The action its start is decided at (`lsp.<program>`), or why its
    /// program's name cannot be one.
    pub fn action(&self) -> Result<crate::Action, crate::ActionError> {
        crate::Action::lsp(self.argv.first().map_or("", String::as_str))
    }
}

impl Walk<'_> {
    /// The `.lsp` block: one field per server.
    pub(crate) fn lsp(&mut self, v: &Value) -> Vec<LspServer> {
        let mut servers = Vec::new();
        let Some(fields) = self.fields(v, ".lsp") else {
            return servers;
        };
        for f in fields {
            if let Some(server) = self.lsp_server(&f.name, &f.value) {
                servers.push(server);
            }
        }
        servers
    }

    fn lsp_server(&mut self, name: &str, v: &Value) -> Option<LspServer> {
        let what = format!(".lsp.{name}");
        let fields = self.fields(v, &what)?;
        let mut server = LspServer {
            name: name.to_owned(),
            argv: Vec::new(),
            env: Vec::new(),
            files: Vec::new(),
            languages: Vec::new(),
            init: None,
            start_timeout_ms: DEFAULT_LSP_START_MS,
            wait_ms: DEFAULT_LSP_WAIT_MS,
            origin: self.origin(v),
        };
        for f in fields {
            match f.name.as_str() {
                "command" => server.argv = self.command(&what, &f.value)?,
                "env" => server.env = self.env(&what, &f.value),
                "files" => server.files = self.strings(&format!("{what}.files"), &f.value),
                "languages" => {
                    for (lang, span) in self.spanned_strings(&format!("{what}.languages"), &f.value) {
                        if LANGUAGES.iter().any(|(id, _)| *id == lang) {
                            server.languages.push(lang);
                        } else {
                            self.problem(
                                &span,
                                format!(
                                    "{what}.languages names {lang:?}, which is not a language Chock knows the files of: {}; or name the files with .files",
                                    LANGUAGES.iter().map(|(id, _)| *id).collect::<Vec<_>>().join(", ")
                                ),
                            );
                        }
                    }
                }
                "init" => server.init = Some(f.value.clone()),
                "start_timeout_ms" => server.start_timeout_ms = self.millis(&what, f)?,
                "wait_ms" => server.wait_ms = self.millis(&what, f)?,
                other => self.problem(
                    &f.name_span,
                    format!(
                        "unknown field .{other} in {what}: a server holds .command, .files, .languages, .init, .env, .start_timeout_ms and .wait_ms"
                    ),
                ),
            }
        }
        if server.argv.is_empty() {
            self.problem(
                &v.span,
                format!("{what} has no .command; write .command = .{{ \"program\", \"arg\" }}"),
            );
            return None;
        }
        if server.files.is_empty() && server.languages.is_empty() {
            self.problem(
                &v.span,
                format!(
                    "{what} serves no files; write .files = .{{ \"**/*.py\" }} or .languages = .{{ \"python\" }}"
                ),
            );
            return None;
        }
        Some(server)
    }

    /// Where `v` was written, for notices: `<file>:<line>` or `line <n>`.
    pub(crate) fn origin(&self, v: &Value) -> String {
        match self.file {
            Some(file) => format!("{}:{}", file.display(), v.span.start.line),
            None => format!("line {}", v.span.start.line),
        }
    }

    /// A number of milliseconds from 1 to an hour.
    pub(crate) fn millis(&mut self, what: &str, f: &chock_zon::Field) -> Option<u64> {
        match &f.value.kind {
            ValueKind::Int(n) if (1..=3_600_000).contains(n) => u64::try_from(*n).ok(),
            _ => {
                self.problem(
                    &f.value.span,
                    format!("{what}.{} is milliseconds, from 1 to 3600000", f.name),
                );
                None
            }
        }
    }

    /// A list of strings (a problem for anything else in it).
    pub(crate) fn strings(&mut self, what: &str, v: &Value) -> Vec<String> {
        self.spanned_strings(what, v)
            .into_iter()
            .map(|(s, _)| s)
            .collect()
    }

    fn spanned_strings(&mut self, what: &str, v: &Value) -> Vec<(String, chock_zon::Span)> {
        let Some(items) = crate::check::items(v) else {
            self.problem(
                &v.span,
                format!(
                    "{what} is a list of strings, such as .{{ \"a\", \"b\" }}, not {}",
                    kind_name(&v.kind)
                ),
            );
            return Vec::new();
        };
        let mut out = Vec::new();
        for item in items {
            match &item.kind {
                ValueKind::String(s) => out.push((s.clone(), item.span)),
                other => self.problem(
                    &item.span,
                    format!("{what} holds strings, not {}", kind_name(other)),
                ),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check_text;

    #[test]
    fn a_server_is_read_with_every_field() {
        let checked = check_text(
            r#".{
    .lsp = .{
        .pylsp = .{
            .command = .{ "/opt/bin/pylsp", "-v" },
            .files = .{ "**/*.py" },
            .languages = .{ "python" },
            .init = .{ .a = 1 },
            .env = .{ .X = "1" },
            .start_timeout_ms = 500,
            .wait_ms = 300,
        },
    },
}"#,
            None,
        );
        assert_eq!(checked.problems, vec![]);
        let server = &checked.rules.lsp[0];
        assert_eq!(server.argv, ["/opt/bin/pylsp", "-v"]);
        assert_eq!(server.files, ["**/*.py"]);
        assert_eq!(server.languages, ["python"]);
        assert_eq!((server.start_timeout_ms, server.wait_ms), (500, 300));
        assert_eq!(server.action().unwrap().as_str(), "lsp.pylsp");
        assert!(server.init.is_some());
    }

    #[test]
    fn a_server_without_a_command_or_files_and_an_unknown_language_are_problems() {
        let checked = check_text(
            r#".{
    .lsp = .{
        .a = .{ .files = .{ "*.py" } },
        .b = .{ .command = .{ "x" } },
        .c = .{ .command = .{ "x" }, .languages = .{ "cobol" } },
        .d = .{ .command = .{ "x" }, .files = .{ "*.py" }, .wiat_ms = 3 },
    },
}"#,
            None,
        );
        let found: Vec<String> = checked.problems.iter().map(ToString::to_string).collect();
        let at = |line: u32, says: &str| {
            assert!(
                found
                    .iter()
                    .any(|p| p.starts_with(&format!("{line}:")) && p.contains(says)),
                "no problem on line {line} saying {says:?}: {found:#?}"
            );
        };
        at(3, "has no .command");
        at(4, "serves no files");
        at(5, "\"cobol\"");
        at(6, "unknown field .wiat_ms");
    }

    #[test]
    fn a_file_is_of_a_language_by_its_extension() {
        assert_eq!(language_of("src/a.py"), Some("python"));
        assert_eq!(language_of("x.tsx"), Some("typescriptreact"));
        assert_eq!(language_of("Makefile"), None);
    }
}
