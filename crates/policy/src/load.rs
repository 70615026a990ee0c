//! Finding and reading the three policy files (paths per DESIGN.md).
//!
//! - org bundle: `$CHOCK_ORG_BUNDLE`, else `/etc/chock/org.zon`;
//! - operator: `$XDG_CONFIG_HOME/chock/config.zon`, else `~/.config/chock/config.zon`;
//! - project: `<project dir>/chock.zon`.
//!
//! Nothing falls back to a more permissive policy because a file could not
//! be read. A project or operator file that is missing is simply absent, but
//! one that exists and cannot be read, or holds any problem, is an error for
//! the session. An org bundle that exists and cannot be read (or one named by
//! `$CHOCK_ORG_BUNDLE` that is missing) becomes a ceiling of deny over
//! everything, which says why.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use crate::check::{FileKind, Problem, check_file};
use crate::policy::{Layers, Org, Policy, RuleSet};

/// Where each policy file is (or would be).
#[derive(Debug, Clone, Default)]
pub struct Sources {
    /// The org bundle.
    pub org: Option<PathBuf>,
    /// Whether the bundle was named explicitly, so that its absence refuses
    /// everything rather than meaning "no bundle".
    pub org_required: bool,
    /// The operator's config.zon.
    pub operator: Option<PathBuf>,
    /// The project's chock.zon.
    pub project: Option<PathBuf>,
}

impl Sources {
    /// The paths for a project directory, from the environment.
    pub fn discover(project_dir: &Path) -> Sources {
        let env = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let (org, org_required) = match env("CHOCK_ORG_BUNDLE") {
            Some(p) => (Some(p), true),
            None => (Some(PathBuf::from("/etc/chock/org.zon")), false),
        };
        let config = env("XDG_CONFIG_HOME")
            .filter(|p| p.is_absolute())
            .or_else(|| env("HOME").map(|h| h.join(".config")));
        Sources {
            org,
            org_required,
            operator: config.map(|c| c.join("chock").join("config.zon")),
            project: Some(project_dir.join("chock.zon")),
        }
    }
}

/// A policy file that exists and cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file exists and could not be read.
    #[error("cannot read the policy file {}: {error}; fix its permissions or move it away", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        error: io::Error,
    },
    /// The operator's own config can be written by every user.
    #[error(
        "{} can be written by every user on this machine (mode {mode:o}), so anyone could widen your rules or point your provider elsewhere; nothing runs under it: run `chmod o-w {}`",
        path.display(),
        path.display()
    )]
    OpenToOthers {
        /// The file, or the directory holding it.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// The file was read and holds problems.
    #[error("{}", invalid(.path, .problems))]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Every problem in it.
        problems: Vec<Problem>,
    },
}

fn invalid<'a>(path: &'a Path, problems: &'a [Problem]) -> Invalid<'a> {
    Invalid { path, problems }
}

struct Invalid<'a> {
    path: &'a Path,
    problems: &'a [Problem],
}

impl fmt::Display for Invalid<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.problems.len();
        let s = if n == 1 { "" } else { "s" };
        write!(
            f,
            "the policy file {} has {n} problem{s}, and nothing runs under a policy that could not be read whole; fix it (`chock policy check {}` lists them):",
            self.path.display(),
            self.path.display()
        )?;
        for p in self.problems {
            write!(f, "\n  {}:{p}", self.path.display())?;
        }
        Ok(())
    }
}

/// Reads a file that may be absent; `Ok(None)` only for "not found".
fn read_optional(path: &Path) -> Result<Option<String>, LoadError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(LoadError::Read {
            path: path.to_owned(),
            error: source,
        }),
    }
}

/// Refuses a person's own config file that every user could write: the
/// file, or the directory holding it (unless that directory is sticky, as
/// `/tmp` is, where others cannot replace the file).
pub fn refuse_open_to_others(path: &Path) -> Result<(), LoadError> {
    use std::os::unix::fs::PermissionsExt;
    const STICKY: u32 = 0o1000;
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(());
    };
    let mode = meta.permissions().mode();
    if mode & 0o002 != 0 {
        return Err(LoadError::OpenToOthers {
            path: path.to_owned(),
            mode: mode & 0o7777,
        });
    }
    let dir = std::fs::canonicalize(path)
        .ok()
        .and_then(|real| real.parent().map(Path::to_path_buf));
    if let Some(dir) = dir
        && let Ok(meta) = std::fs::metadata(&dir)
    {
        let mode = meta.permissions().mode();
        if mode & 0o002 != 0 && mode & STICKY == 0 {
            return Err(LoadError::OpenToOthers {
                path: dir,
                mode: mode & 0o7777,
            });
        }
    }
    Ok(())
}

/// Reads and checks one file, of the kind its name says
/// ([`FileKind::of_path`]); `Ok(None)` where it does not exist.
pub fn load_file(path: &Path) -> Result<Option<RuleSet>, LoadError> {
    load_file_as(path, FileKind::of_path(path))
}

/// [`load_file`] for a file of `kind`, whatever its name.
pub fn load_file_as(path: &Path, kind: FileKind) -> Result<Option<RuleSet>, LoadError> {
    let Some(text) = read_optional(path)? else {
        return Ok(None);
    };
    let checked = check_file(&text, Some(path), kind);
    if checked.problems.is_empty() {
        Ok(Some(checked.rules))
    } else {
        Err(LoadError::Invalid {
            path: path.to_owned(),
            problems: checked.problems,
        })
    }
}

fn load_org(path: &Path, required: bool) -> Org {
    // A ceiling every user could rewrite is no ceiling: it is refused,
    // and an unreadable bundle refuses everything.
    let loaded = refuse_open_to_others(path).and_then(|()| load_file_as(path, FileKind::Org));
    match loaded {
        Ok(Some(set)) => Org::Rules(set),
        Ok(None) if !required => Org::Absent,
        Ok(None) => Org::Unreadable {
            path: path.to_owned(),
            reason: "it does not exist, and CHOCK_ORG_BUNDLE names it".into(),
        },
        Err(err @ LoadError::OpenToOthers { .. }) => Org::Unreadable {
            path: path.to_owned(),
            reason: err.to_string(),
        },
        Err(LoadError::Read { error: source, .. }) => Org::Unreadable {
            path: path.to_owned(),
            reason: source.to_string(),
        },
        Err(LoadError::Invalid { problems, .. }) => Org::Unreadable {
            path: path.to_owned(),
            reason: problems
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; "),
        },
    }
}

impl Policy {
    /// The policy for a session in `project_dir`, with paths from the environment.
    pub fn load(project_dir: &Path) -> Result<Policy, LoadError> {
        Policy::load_from(&Sources::discover(project_dir))
    }

    /// The policy from explicit paths.
    pub fn load_from(sources: &Sources) -> Result<Policy, LoadError> {
        let org = match &sources.org {
            Some(p) => load_org(p, sources.org_required),
            None => Org::Absent,
        };
        let operator = match &sources.operator {
            Some(p) => {
                refuse_open_to_others(p)?;
                load_file_as(p, FileKind::Operator)?
            }
            None => None,
        };
        let project = match &sources.project {
            Some(p) => load_file_as(p, FileKind::Project)?,
            None => None,
        };
        Ok(Policy::new(Layers {
            org,
            operator,
            project,
            project_file: sources.project.clone(),
            operator_file: sources.operator.clone(),
        }))
    }
}
