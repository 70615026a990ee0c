//! The project's `.workspace` binds as one session gets them: each asked
//! under `workspace.bind.<name>` when the session starts, checked against
//! the host, copied where its mode says, and handed to the sandbox.
//!
//! The answer is read before the first turn, where nobody can be asked, so
//! only allow grants what the block asks for. For read_only and temp_copy
//! that decides whether the bind is made at all; for write and copy it is
//! folded with the mode and the narrower wins: deny makes nothing, allow
//! makes the bind as written, and anything between makes it read-only
//! (bound from the original, never copied). A deny in the org bundle
//! (`workspace.bind.*`) reaches every bind through the same fold.
//!
//! A copy lives in the session's directory (`binds/<name>`, made by the
//! host with `cp -a`), so a session handed over finds it where it left it;
//! a temp_copy is removed when the session ends, a copy stays until
//! `chock workspace apply` carries it back ([`crate::workspace::bind_apply`])
//! or the session's workspace is discarded. What a command wrote in a copy
//! is untrusted: it goes back only through that apply, which a person
//! approves.

use std::path::{Path, PathBuf};
use std::process::Command;

use chock_log::event::BoundPath;
use chock_policy::{BindMode, Decision, Policy, Verdict, WorkspaceBind};
use chock_sandbox::Bind;
use chock_tools::SANDBOX_ROOT;

use crate::judge::Judge;

/// What a session's start made of the block.
#[derive(Debug, Default)]
pub struct Decided {
    /// The binds for every command's sandbox.
    pub binds: Vec<Bind>,
    /// One verdict per bind, for the log's `decision` events.
    pub verdicts: Vec<Verdict>,
    /// One sentence per bind for the start's notice: where it is and how,
    /// or why it is not made.
    pub said: Vec<String>,
    /// The temp_copy directories to remove when the session ends.
    pub temporary: Vec<PathBuf>,
}

/// How one bind is made, after the fold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Made {
    Not,
    ReadOnly,
    Writable,
    Copied,
}

/// Where the session's copy of the bind `name` lives.
pub fn copy_dir(session_dir: &Path, name: &str) -> PathBuf {
    session_dir.join("binds").join(name)
}

/// One bind after the fold and the host's checks, before anything is
/// copied: what `workspace.open` records and the start then makes.
struct Planned<'p> {
    bind: &'p WorkspaceBind,
    verdict: Verdict,
    /// How it is made and its resolved source, or the sentence saying why
    /// it is not made.
    made: Result<(Made, PathBuf), String>,
}

/// Folds and checks every bind `policy`'s project block names, for a
/// session whose workspace is `workspace` (the tools' root); relative
/// paths are read against `project`. Nothing is made.
fn plan<'p>(policy: &'p Policy, project: &Path, workspace: &Path) -> Vec<Planned<'p>> {
    policy
        .workspace_binds()
        .iter()
        .map(|bind| {
            let verdict = Judge::before_first_turn(policy, &bind.action());
            let made = match fold(bind.mode, verdict.decision) {
                Made::Not => Err(refused(bind, &verdict)),
                made => source(bind, project, workspace)
                    .map(|real| (made, real))
                    .map_err(|why| {
                        format!(
                            "the bind {} ({}) is not made: {why}",
                            bind.name, bind.origin
                        )
                    }),
            };
            Planned {
                bind,
                verdict,
                made,
            }
        })
        .collect()
}

/// What `workspace.open` records of the binds: each as [`decide`] will
/// make it (nothing is copied here).
pub fn recorded(policy: &Policy, project: &Path, workspace: &Path) -> Vec<BoundPath> {
    plan(policy, project, workspace)
        .into_iter()
        .map(|p| {
            let (made, path) = match p.made {
                Ok((Made::ReadOnly, real)) => ("read_only", real),
                Ok((Made::Writable, real)) => ("read_write", real),
                Ok((Made::Copied, real)) => ("copy", real),
                Ok((Made::Not, real)) => ("not_made", real),
                Err(_) => ("not_made", project.join(&p.bind.path)),
            };
            BoundPath {
                name: p.bind.name.clone(),
                at: Path::new(SANDBOX_ROOT).join(&p.bind.at),
                path,
                mode: p.bind.mode.as_str().to_owned(),
                made: made.to_owned(),
            }
        })
        .collect()
}

/// Decides and prepares every bind `policy`'s project block names (see
/// `plan`), copying into `session_dir` what its mode copies.
pub fn decide(policy: &Policy, project: &Path, workspace: &Path, session_dir: &Path) -> Decided {
    let mut decided = Decided::default();
    for planned in plan(policy, project, workspace) {
        let bind = planned.bind;
        let sentence = match planned.made {
            Err(sentence) => sentence,
            Ok((made, real)) => match prepare(bind, made, &real, session_dir) {
                Ok((sandbox_bind, text)) => {
                    if bind.mode == BindMode::TempCopy {
                        decided.temporary.push(sandbox_bind.src.clone());
                    }
                    decided.binds.push(sandbox_bind);
                    text
                }
                Err(why) => format!(
                    "the bind {} ({}) is not made: {why}",
                    bind.name, bind.origin
                ),
            },
        };
        decided.said.push(sentence);
        decided.verdicts.push(planned.verdict);
    }
    decided
}

/// The mode folded with the answer: the narrower wins.
fn fold(mode: BindMode, decision: Decision) -> Made {
    match (mode, decision) {
        (_, Decision::Deny) => Made::Not,
        (BindMode::ReadOnly, Decision::Allow) => Made::ReadOnly,
        (BindMode::Write, Decision::Allow) => Made::Writable,
        (BindMode::TempCopy | BindMode::Copy, Decision::Allow) => Made::Copied,
        (BindMode::ReadOnly | BindMode::TempCopy, _) => Made::Not,
        (BindMode::Write | BindMode::Copy, _) => Made::ReadOnly,
    }
}

fn refused(bind: &WorkspaceBind, verdict: &Verdict) -> String {
    let action = bind.action();
    let why = match verdict.decision {
        Decision::Deny => format!(
            "the policy denies {action}{}",
            verdict.rule.as_ref().map_or_else(String::new, |r| format!(
                " ({}, {})",
                r.text,
                verdict.layer.describe()
            ))
        ),
        other => format!(
            "the policy answers {other} for {action}, and nobody can be asked before the first turn; only allow makes a {} bind: .{{ .action = \"{action}\", .decision = .allow }}",
            bind.mode.as_str()
        ),
    };
    format!(
        "the bind {} ({}) is not made: {why}",
        bind.name, bind.origin
    )
}

/// The host path a bind names, checked: it exists, and it is not inside
/// the session's workspace (which carries it already).
fn source(bind: &WorkspaceBind, project: &Path, workspace: &Path) -> Result<PathBuf, String> {
    let written = project.join(&bind.path);
    let real = std::fs::canonicalize(&written).map_err(|err| {
        format!(
            "{} cannot be found ({err}); create it, or fix the bind's .path",
            written.display()
        )
    })?;
    let root = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_owned());
    if real.starts_with(&root) {
        return Err(format!(
            "{} is inside the session's workspace already, which carries it; a bind names a path outside it",
            real.display()
        ));
    }
    Ok(real)
}

/// The sandbox's bind for `bind` made as `made`, and its sentence.
fn prepare(
    bind: &WorkspaceBind,
    made: Made,
    real: &Path,
    session_dir: &Path,
) -> Result<(Bind, String), String> {
    let real = real.to_owned();
    let dst = Path::new(SANDBOX_ROOT).join(&bind.at);
    let (src, writable, how) = match made {
        Made::Copied => {
            let copy = copy_dir(session_dir, &bind.name);
            let how = if copy.exists() {
                "carried on from before"
            } else {
                make_copy(&real, &copy)?;
                "made now"
            };
            let fate = if bind.mode == BindMode::Copy {
                "its changes come back only through an approved `chock workspace apply`"
            } else {
                "thrown away when the session ends"
            };
            (
                copy,
                true,
                format!("a private copy of {} ({how}; {fate})", real.display()),
            )
        }
        Made::Writable => (real.clone(), true, format!("{} read-write", real.display())),
        Made::ReadOnly if bind.mode == BindMode::ReadOnly => {
            (real.clone(), false, format!("{} read-only", real.display()))
        }
        Made::ReadOnly => (
            real.clone(),
            false,
            format!(
                "{} read-only; a {} bind is read-only until {} answers allow",
                real.display(),
                bind.mode.as_str(),
                bind.action()
            ),
        ),
        Made::Not => return Err("it is not made".to_owned()),
    };
    let text = format!("the bind {} is at {}: {how}", bind.name, dst.display());
    Ok((Bind { src, dst, writable }, text))
}

/// `cp -a` of `from` to `to`, sharing blocks where the file system can.
fn make_copy(from: &Path, to: &Path) -> Result<(), String> {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|err| format!("{} cannot be made: {err}", parent.display()))?;
    }
    let out = Command::new("cp")
        .args(["-a", "--reflink=auto", "--"])
        .arg(from)
        .arg(to)
        .output()
        .map_err(|err| format!("cp could not be run to copy {}: {err}", from.display()))?;
    if !out.status.success() {
        let _ = std::fs::remove_dir_all(to);
        return Err(format!(
            "copying {} failed: {}",
            from.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(())
}

/// Removes the session's temp_copy directories (the session has ended).
pub fn remove_temporary(dirs: &[PathBuf]) -> Vec<String> {
    dirs.iter()
        .filter_map(|dir| {
            let gone = if dir.is_dir() {
                std::fs::remove_dir_all(dir)
            } else {
                std::fs::remove_file(dir)
            };
            gone.err()
                .filter(|err| err.kind() != std::io::ErrorKind::NotFound)
                .map(|err| {
                    format!(
                        "the temporary copy {} could not be removed: {err}",
                        dir.display()
                    )
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_narrower_of_the_mode_and_the_answer_wins() {
        use BindMode::*;
        use Decision::*;
        assert_eq!(fold(ReadOnly, Allow), Made::ReadOnly);
        assert_eq!(fold(ReadOnly, Ask), Made::Not);
        assert_eq!(fold(TempCopy, AgentReview), Made::Not);
        assert_eq!(fold(TempCopy, Allow), Made::Copied);
        assert_eq!(fold(Write, Allow), Made::Writable);
        assert_eq!(fold(Write, Ask), Made::ReadOnly);
        assert_eq!(fold(Write, Deny), Made::Not);
        assert_eq!(fold(Copy, AgentThenHuman), Made::ReadOnly);
        assert_eq!(fold(Copy, Allow), Made::Copied);
        assert_eq!(fold(Copy, Deny), Made::Not);
    }

    fn policy(text: &str) -> Policy {
        let checked = chock_policy::check_file(text, None, chock_policy::FileKind::Project);
        assert!(checked.problems.is_empty(), "{:?}", checked.problems);
        Policy::new(chock_policy::Layers {
            project: Some(checked.rules),
            ..chock_policy::Layers::default()
        })
    }

    #[test]
    fn a_missing_path_and_one_inside_the_workspace_are_not_bound_and_said() {
        let dir = tempfile::tempdir().unwrap();
        let (project, workspace) = (dir.path().join("project"), dir.path().join("ws"));
        std::fs::create_dir_all(workspace.join("sub")).unwrap();
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir_all(dir.path().join("cache")).unwrap();
        let text = format!(
            ".{{ .workspace = .{{ .binds = .{{\n.{{ .name = \"gone\", .path = \"../nowhere\", .mode = .read_only }},\n.{{ .name = \"own\", .path = \"{}\", .mode = .read_only }},\n.{{ .name = \"cache\", .path = \"../cache\", .mode = .read_only }},\n}} }}, .policy = .{{ .rules = .{{ .{{ .action = \"workspace.bind.*\", .decision = .allow }} }} }} }}",
            workspace.join("sub").display()
        );
        let made = decide(
            &policy(&text),
            &project,
            &workspace,
            &dir.path().join("session"),
        );
        assert_eq!(made.binds.len(), 1, "{:?}", made.said);
        assert_eq!(made.binds[0].dst, Path::new("/workspace/cache"));
        assert!(!made.binds[0].writable);
        assert!(
            made.said[0].starts_with("the bind gone (line 2, column 1) is not made: ")
                && made.said[0].ends_with("cannot be found (No such file or directory (os error 2)); create it, or fix the bind's .path"),
            "{}",
            made.said[0]
        );
        assert!(
            made.said[1].ends_with("is inside the session's workspace already, which carries it; a bind names a path outside it"),
            "{}",
            made.said[1]
        );
        assert_eq!(made.verdicts.len(), 3);
    }
}
