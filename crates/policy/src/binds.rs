//! The `.workspace` block of a project's chock.zon: paths the git worktree
//! does not carry (a dependency cache, a build directory, a data set, a
//! sibling checkout), each placed inside the session's workspace with a
//! mode.
//!
//! ```zig
//! .workspace = .{
//!     .binds = .{
//!         .{ .name = "node_modules", .path = "../cache/node_modules", .mode = .read_only },
//!         .{ .name = "data", .path = "/srv/data/set-3", .mode = .copy, .at = "fixtures/data" },
//!     },
//! },
//! ```
//!
//! Read here, beside the rules, so that one pass reports every problem with
//! its line and column: a name that cannot be the `<name>` of
//! `workspace.bind.<name>`, an unknown mode, a target that climbs out of the
//! workspace, two binds at one target. Whether a path exists, and whether it
//! lies inside the project already, depends on the directory the session
//! starts in, so the runner checks that (crates/runner, `workspace::binds`).
//! The block is data only: each bind is asked under its action when a
//! session starts.

use std::path::PathBuf;

use chock_zon::{Span, Value, ValueKind};

use crate::action::Action;
use crate::action::label::is_relative_path;
use crate::check::{Walk, items, kind_name};

/// What a session may do with a bound path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BindMode {
    /// Bound read-only.
    ReadOnly,
    /// A private copy the session may change, thrown away at its end.
    TempCopy,
    /// Bound read-write once `workspace.bind.<name>` answers allow;
    /// read-only otherwise.
    Write,
    /// A private copy whose changes come back only through an approved
    /// `chock workspace apply`.
    Copy,
}

impl BindMode {
    /// The word the block spells it with.
    pub fn as_str(self) -> &'static str {
        match self {
            BindMode::ReadOnly => "read_only",
            BindMode::TempCopy => "temp_copy",
            BindMode::Write => "write",
            BindMode::Copy => "copy",
        }
    }

    fn parse(word: &str) -> Option<BindMode> {
        [
            BindMode::ReadOnly,
            BindMode::TempCopy,
            BindMode::Write,
            BindMode::Copy,
        ]
        .into_iter()
        .find(|m| m.as_str() == word)
    }

    /// Whether the session works on a copy rather than the path itself.
    pub fn copies(self) -> bool {
        matches!(self, BindMode::TempCopy | BindMode::Copy)
    }
}

/// One bind as the block names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceBind {
    /// The name as the block spells it: the `<name>` of
    /// `workspace.bind.<name>`.
    pub name: String,
    /// The host path as written; a relative one is relative to the
    /// directory that holds the chock.zon.
    pub path: PathBuf,
    pub mode: BindMode,
    /// Where it appears, relative to the workspace's root (the name unless
    /// `.at` says otherwise).
    pub at: String,
    /// The file, line and column that named it, for notices.
    pub origin: String,
}

impl WorkspaceBind {
    /// The action it is asked under.
    pub fn action(&self) -> Action {
        // The name was checked when the block was read.
        Action::workspace_bind(&self.name).unwrap_or_else(|_| Action::workspace_apply())
    }
}

const SHAPE: &str = "a bind is .{ .name = \"node_modules\", .path = \"../cache/node_modules\", .mode = .read_only }";

impl Walk<'_> {
    /// The `.workspace` block: `.binds`, a list of binds.
    pub(crate) fn workspace(&mut self, v: &Value) -> Vec<WorkspaceBind> {
        let mut binds = Vec::new();
        let Some(fields) = self.fields(v, ".workspace") else {
            return binds;
        };
        for f in fields {
            if f.name != "binds" {
                self.problem(
                    &f.name_span,
                    format!("unknown field .{} in .workspace: it holds .binds", f.name),
                );
                continue;
            }
            let Some(list) = items(&f.value) else {
                self.problem(
                    &f.value.span,
                    format!(
                        ".workspace.binds holds {}; write a list of binds: {SHAPE}",
                        kind_name(&f.value.kind)
                    ),
                );
                continue;
            };
            let mut seen: Vec<(WorkspaceBind, Span)> = Vec::new();
            for item in list {
                let Some(bind) = self.workspace_bind(item) else {
                    continue;
                };
                let same_name = seen.iter().find(|(b, _)| b.name == bind.name);
                let same_target = seen.iter().find(|(b, _)| b.at == bind.at);
                if let Some((first, span)) = same_name.or(same_target) {
                    let what = if first.name == bind.name {
                        format!("a second bind named {:?}", bind.name)
                    } else {
                        format!(
                            "a second bind at {:?} (the bind {:?} is there)",
                            bind.at, first.name
                        )
                    };
                    self.problem(
                        &item.span,
                        format!(
                            "{what}: the first is at line {}, column {}; two binds cannot share a name or a target, so give this one another .name or .at",
                            span.start.line, span.start.column
                        ),
                    );
                    continue;
                }
                seen.push((bind, item.span));
            }
            binds.extend(seen.into_iter().map(|(b, _)| b));
        }
        binds
    }

    fn workspace_bind(&mut self, v: &Value) -> Option<WorkspaceBind> {
        let ValueKind::Struct(fields) = &v.kind else {
            self.problem(&v.span, format!("{SHAPE}, not {}", kind_name(&v.kind)));
            return None;
        };
        let (mut name, mut path, mut mode, mut at) = (None, None, None, None);
        let mut ok = true;
        for f in fields {
            let text = match &f.value.kind {
                ValueKind::String(s) => Some(s.as_str()),
                _ => None,
            };
            match (f.name.as_str(), text) {
                ("name", Some(s)) if Action::workspace_bind(s).is_ok() => name = Some(s.to_owned()),
                ("name", _) => {
                    self.problem(
                        &f.value.span,
                        "a bind's .name is the <name> of workspace.bind.<name>: a relative path of letters, digits, '_', '-' and '/', with no dot (\"scripts/release\")",
                    );
                    ok = false;
                }
                ("path", Some(s)) if !s.is_empty() && !s.contains('\0') => {
                    path = Some(PathBuf::from(s));
                }
                ("path", _) => {
                    self.problem(
                        &f.value.span,
                        "a bind's .path is the host directory or file to bind, absolute or relative to this file's directory",
                    );
                    ok = false;
                }
                ("at", Some(s))
                    if is_relative_path(s, true) && s != ".git" && !s.starts_with(".git/") =>
                {
                    at = Some(s.to_owned());
                }
                ("at", _) => {
                    self.problem(
                        &f.value.span,
                        "a bind's .at is where it appears, relative to the workspace's root, with no '..' and not in .git (\"fixtures/data\")",
                    );
                    ok = false;
                }
                ("mode", _) => match &f.value.kind {
                    ValueKind::EnumLiteral(w) if BindMode::parse(w).is_some() => {
                        mode = BindMode::parse(w);
                    }
                    _ => {
                        self.problem(
                            &f.value.span,
                            "a bind's .mode is one of .read_only, .temp_copy, .write, .copy",
                        );
                        ok = false;
                    }
                },
                (other, _) => {
                    self.problem(
                        &f.name_span,
                        format!("unknown field .{other} in a bind: a bind holds .name, .path, .mode and .at"),
                    );
                    ok = false;
                }
            }
        }
        let mut missing = |field: &str, found: bool| {
            if !found && ok {
                self.problem(&v.span, format!("this bind has no .{field}: {SHAPE}"));
            }
        };
        missing("name", name.is_some());
        missing("path", path.is_some());
        missing("mode", mode.is_some());
        let (name, path, mode) = (name?, path?, mode?);
        Some(WorkspaceBind {
            at: at.unwrap_or_else(|| name.clone()),
            name,
            path,
            mode,
            origin: self.place(&v.span),
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::check::check_file;
    use crate::{BindMode, FileKind};

    fn problems(text: &str) -> Vec<String> {
        check_file(text, None, FileKind::Project)
            .problems
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn the_four_modes_are_read_with_their_targets() {
        let text = r#".{ .workspace = .{ .binds = .{
            .{ .name = "node_modules", .path = "../cache", .mode = .read_only },
            .{ .name = "scratch", .path = "/srv/s", .mode = .temp_copy },
            .{ .name = "build/out", .path = "/srv/b", .mode = .write },
            .{ .name = "data", .path = "/srv/d", .mode = .copy, .at = "fixtures/data.v2" },
        } } }"#;
        let checked = check_file(text, None, FileKind::Project);
        assert!(checked.problems.is_empty(), "{:?}", checked.problems);
        let binds = &checked.rules.binds;
        let got: Vec<_> = binds
            .iter()
            .map(|b| (b.name.as_str(), b.mode, b.at.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("node_modules", BindMode::ReadOnly, "node_modules"),
                ("scratch", BindMode::TempCopy, "scratch"),
                ("build/out", BindMode::Write, "build/out"),
                ("data", BindMode::Copy, "fixtures/data.v2"),
            ]
        );
        assert_eq!(binds[2].action().as_str(), "workspace.bind.build/out");
        assert!(checked.unread.is_empty(), "{:?}", checked.unread);
    }

    #[test]
    fn a_bind_name_that_is_not_an_action_segment_is_refused_at_its_place() {
        let got = problems(
            ".{ .workspace = .{ .binds = .{\n.{ .name = \"cache.d\", .path = \"/x\", .mode = .write },\n} } }",
        );
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(
            got[0].starts_with("2:12: a bind's .name is the <name> of workspace.bind.<name>"),
            "{got:?}"
        );
    }

    #[test]
    fn two_binds_at_one_target_are_refused_naming_the_first() {
        let got = problems(
            ".{ .workspace = .{ .binds = .{\n.{ .name = \"a\", .path = \"/x\", .mode = .write, .at = \"t\" },\n.{ .name = \"t\", .path = \"/y\", .mode = .read_only },\n} } }",
        );
        assert_eq!(
            got,
            [
                "3:1: a second bind at \"t\" (the bind \"a\" is there): the first is at line 2, column 1; two binds cannot share a name or a target, so give this one another .name or .at"
            ]
        );
    }

    #[test]
    fn a_bad_mode_a_climbing_target_and_a_missing_path_are_each_said() {
        let got = problems(
            ".{ .workspace = .{ .binds = .{\n.{ .name = \"a\", .path = \"/x\", .mode = .rw },\n.{ .name = \"b\", .path = \"/x\", .mode = .copy, .at = \"../up\" },\n.{ .name = \"c\", .mode = .copy },\n} } }",
        );
        assert_eq!(got.len(), 3, "{got:?}");
        assert!(
            got[0].starts_with("2:39: a bind's .mode is one of"),
            "{got:?}"
        );
        assert!(
            got[1].starts_with("3:52: a bind's .at is where it appears"),
            "{got:?}"
        );
        assert!(got[2].starts_with("4:1: this bind has no .path"), "{got:?}");
    }
}
