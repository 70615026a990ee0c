//! `exec.*`: run_command names a program by the class it belongs to.
//!
//! The classes are the reference's: `exec.devshell.<program>` (a program in
//! the dev shell closure mounted at session start), `exec.nix.store.<hash>`
//! (any other store path: the hash names one immutable store object, and no
//! package-chosen name enters the key), `exec.workspace.<relative path>` (a
//! path inside the project), `exec.path.<program>` (a bare name looked up on
//! PATH) and `exec.unparsed` (a path Chock refuses to resolve lexically).
//! [`Action::exec_for`] sorts a program path into one of them without
//! touching the filesystem, so the answer depends on the text alone.

use std::path::{Component, Path, PathBuf};

use super::label::{is_program_name, is_relative_path};
use super::{Action, ActionError};

/// The class a program belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExecClass {
    /// In the Nix dev shell closure this session mounted at its start.
    DevShell,
    /// Any other store path; the program is its store hash.
    NixStore,
    /// A path inside the project, relative to its root.
    Workspace,
    /// A bare name looked up on PATH.
    Path,
}

/// What [`Action::exec_for`] needs to sort a path into a class.
#[derive(Debug, Clone)]
pub struct ExecContext {
    /// The project (workspace) root, absolute.
    pub project_root: PathBuf,
    /// The directory the command runs in, absolute.
    pub cwd: PathBuf,
    /// Store hashes (the 32 characters after `/nix/store/`) of the dev shell closure.
    pub devshell: std::collections::HashSet<String>,
    /// The directories of PATH, in order.
    pub path_dirs: Vec<PathBuf>,
}

/// Whether `s` is a store hash: 32 characters of Nix's base 32 (digits and
/// lower-case letters but e, o, u and t).
pub fn is_store_hash(s: &str) -> bool {
    s.len() == 32
        && s.bytes().all(|b| {
            b.is_ascii_digit()
                || (b.is_ascii_lowercase() && !matches!(b, b'e' | b'o' | b'u' | b't'))
        })
}

impl Action {
    /// `exec.<class>.<program>`. For [`ExecClass::NixStore`] `program` is the
    /// store hash; for [`ExecClass::Workspace`] a relative path in the project.
    pub fn exec(class: ExecClass, program: &str) -> Result<Action, ActionError> {
        let bad = |what, reason| ActionError::Malformed {
            what,
            value: program.to_owned(),
            reason,
        };
        let name = match class {
            ExecClass::DevShell | ExecClass::Path => {
                if !is_program_name(program) {
                    return Err(bad(
                        "program name",
                        "use letters, digits and '_-+', with single dots between parts",
                    ));
                }
                let ns = if class == ExecClass::DevShell {
                    "devshell"
                } else {
                    "path"
                };
                format!("exec.{ns}.{program}")
            }
            ExecClass::NixStore => {
                if !is_store_hash(program) {
                    return Err(bad(
                        "store hash",
                        "a store hash is 32 characters of Nix base-32",
                    ));
                }
                format!("exec.nix.store.{program}")
            }
            ExecClass::Workspace => {
                if !is_relative_path(program, true) {
                    return Err(bad(
                        "workspace path",
                        "use a relative path inside the project with no '.' or '..' component",
                    ));
                }
                format!("exec.workspace.{program}")
            }
        };
        Ok(Action::new(name))
    }

    /// `exec.unparsed`: a path Chock refuses to resolve lexically.
    pub fn exec_unparsed() -> Action {
        Action::new("exec.unparsed".to_owned())
    }

    /// Sorts the program `run_command` was given into its class, from the
    /// text alone. Anything that holds `..`, or that no class can name, is
    /// `exec.unparsed`, which ships no rule and so asks.
    pub fn exec_for(program: &str, ctx: &ExecContext) -> Action {
        Self::classify(program, ctx).unwrap_or_else(Action::exec_unparsed)
    }

    fn classify(program: &str, ctx: &ExecContext) -> Option<Action> {
        let path = Path::new(program);
        if path.components().any(|c| c == Component::ParentDir) || program.is_empty() {
            return None;
        }
        if !program.contains('/') {
            return Action::exec(ExecClass::Path, program).ok();
        }
        let abs = if path.is_absolute() {
            path.to_path_buf()
        } else {
            ctx.cwd.join(path)
        };
        // Lexical only: `.` components drop out, nothing is read from disk.
        let abs: PathBuf = abs
            .components()
            .filter(|c| *c != Component::CurDir)
            .collect();
        if let Ok(rest) = abs.strip_prefix("/nix/store") {
            let first = rest.components().next()?.as_os_str().to_str()?;
            let hash = first.split('-').next()?;
            let class = if ctx.devshell.contains(hash) {
                return Action::exec(ExecClass::DevShell, abs.file_name()?.to_str()?).ok();
            } else {
                ExecClass::NixStore
            };
            return Action::exec(class, hash).ok();
        }
        if let Ok(rel) = abs.strip_prefix(&ctx.project_root) {
            return Action::exec(ExecClass::Workspace, rel.to_str()?).ok();
        }
        let dir = abs.parent()?;
        if ctx.path_dirs.iter().any(|d| d == dir) {
            return Action::exec(ExecClass::Path, abs.file_name()?.to_str()?).ok();
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HASH: &str = "0123456789abcdfghijklmnpqrsvwxyz";

    fn ctx() -> ExecContext {
        ExecContext {
            project_root: "/home/p/proj".into(),
            cwd: "/home/p/proj/sub".into(),
            devshell: [HASH.to_owned()].into_iter().collect(),
            path_dirs: vec!["/usr/bin".into()],
        }
    }

    #[test]
    fn each_path_lands_in_its_class() {
        let c = ctx();
        let other = "11111111111111111111111111111111";
        let cases = [
            ("git", "exec.path.git"),
            ("/usr/bin/env", "exec.path.env"),
            (
                &format!("/nix/store/{HASH}-cargo/bin/cargo") as &str,
                "exec.devshell.cargo",
            ),
            (
                &format!("/nix/store/{other}-x/bin/y"),
                "exec.nix.store.11111111111111111111111111111111",
            ),
            ("./build.sh", "exec.workspace.sub/build.sh"),
            ("/home/p/proj/bin/run", "exec.workspace.bin/run"),
            ("../escape", "exec.unparsed"),
            ("/home/p/proj/../x", "exec.unparsed"),
            ("/opt/elsewhere/tool", "exec.unparsed"),
            ("bad name", "exec.unparsed"),
        ];
        for (program, want) in cases {
            assert_eq!(Action::exec_for(program, &c).as_str(), want, "{program}");
        }
    }
}
