//! The stop reader: every stop that reaches a call, read fail-closed.
//!
//! Three places can hold a stop that reaches a call: `_everywhere.json`, the
//! repository's `.chock/stop.json` (its main checkout's, for a worktree), and
//! the repository's entry in the machine registry. When the caller names no
//! project, every registry entry reaches it. A file that exists but is not a
//! regular file (a symlink included), cannot be read, or cannot be parsed
//! refuses every agent: an absent answer is never a permissive one.
//!
//! Symlinks are refused rather than followed: following one would let
//! whoever can write the link's target decide whether a stop exists, and
//! reading `lstat` first keeps the check one syscall per path.

use std::fmt;
use std::fs;
use std::io::{ErrorKind, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::agent::Agent;
use crate::paths::{EVERYWHERE_FILE, StopPaths};
use crate::repo;
use crate::stopfile::StopFile;

/// Stop files are a few hundred bytes; anything far larger is not one.
const MAX_STOP_FILE: u64 = 64 * 1024;

/// Who is asking.
#[derive(Debug, Clone, Copy)]
pub struct Caller<'a> {
    /// The directory the agent works in, if its client says.
    pub project: Option<&'a Path>,
    /// The agent, if known. An unknown agent is reached by every stop,
    /// agent-scoped ones included.
    pub agent: Option<Agent>,
}

/// One stop that reaches the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stop {
    pub source: PathBuf,
    pub state: StopState,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopState {
    /// A well-formed stop in force.
    InForce(StopFile),
    /// A file that exists but could not be used: it refuses every agent.
    Broken(String),
}

/// Every stop that reaches a caller; never empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stopped {
    pub stops: Vec<Stop>,
}

impl Stopped {
    /// A refusal for a place that could not be consulted at all.
    pub fn unreadable(path: &Path, detail: &str) -> Stopped {
        Stopped {
            stops: vec![Stop {
                source: path.to_owned(),
                state: StopState::Broken(detail.to_owned()),
            }],
        }
    }

    /// The first stop's reason, as the line every refusal shows.
    pub fn reason(&self) -> String {
        match self.stops.first() {
            Some(stop) => stop.describe(),
            None => "a stop is in force".to_owned(),
        }
    }
}

impl Stop {
    /// What a person does about a broken stop file: `chock resume` lifts a
    /// file, but a directory in its place is removed by hand.
    pub fn remedy(&self) -> String {
        let is_dir = fs::symlink_metadata(&self.source).is_ok_and(|meta| meta.is_dir());
        if is_dir {
            format!(
                "a person removes that directory by hand (`rm -r {}`)",
                self.source.display()
            )
        } else {
            "a person fixes it or lifts it with 'chock resume'".to_owned()
        }
    }

    fn describe(&self) -> String {
        match &self.state {
            StopState::InForce(file) => {
                let whom = file
                    .agent
                    .as_deref()
                    .map(|a| format!(" for {a}"))
                    .unwrap_or_default();
                format!(
                    "{} (stopped{whom} by {} at {}; a person lifts it with 'chock resume{}')",
                    file.reason,
                    file.who,
                    file.when,
                    if self.source.ends_with(EVERYWHERE_FILE) {
                        " --everywhere"
                    } else {
                        ""
                    }
                )
            }
            StopState::Broken(detail) => format!(
                "the stop file {} {detail}, so every agent is refused; {}",
                self.source.display(),
                self.remedy()
            ),
        }
    }
}

impl fmt::Display for Stopped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "stopped: {}", self.reason())
    }
}

impl std::error::Error for Stopped {}

/// The answer for one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopVerdict {
    Clear,
    Stopped(Stopped),
}

/// Read every stop that reaches `caller`.
pub fn read(paths: &StopPaths, caller: &Caller<'_>) -> StopVerdict {
    let mut stops = Vec::new();
    let mut keep = |stop: Option<Stop>| {
        if let Some(stop) = stop.filter(|s| reaches(s, caller.agent)) {
            stops.push(stop);
        }
    };
    keep(read_one(&paths.everywhere()));
    // A working directory that no longer exists names no project we can
    // find: read it as a projectless call, where every registry entry counts.
    let project = caller
        .project
        .filter(|dir| fs::symlink_metadata(dir).is_ok());
    match project {
        Some(dir) => match repo::discover(dir) {
            Ok(Some(repo)) => {
                keep(read_one(&repo.stop_file()));
                keep(read_one(&paths.entry_for(&repo.main_checkout)));
            }
            Ok(None) => {}
            Err(err) => keep(Some(Stop {
                source: dir.to_owned(),
                state: StopState::Broken(format!("could not be located: {err}")),
            })),
        },
        None => {
            for stop in read_registry(paths) {
                keep(Some(stop));
            }
        }
    }
    if stops.is_empty() {
        StopVerdict::Clear
    } else {
        StopVerdict::Stopped(Stopped { stops })
    }
}

/// A broken stop reaches everyone; a well-formed one reaches its agent, or
/// everyone when it names none or the caller's agent is unknown.
fn reaches(stop: &Stop, agent: Option<Agent>) -> bool {
    match (&stop.state, agent) {
        (StopState::Broken(_), _) => true,
        (StopState::InForce(file), Some(agent)) => file
            .agent
            .as_deref()
            .is_none_or(|name| name == agent.name()),
        (StopState::InForce(_), None) => true,
    }
}

/// Every entry of the registry (the caller named no project).
fn read_registry(paths: &StopPaths) -> Vec<Stop> {
    let entries = match fs::read_dir(&paths.registry) {
        Ok(entries) => entries,
        Err(err) if err.kind() == ErrorKind::NotFound => return Vec::new(),
        Err(err) => {
            return vec![Stop {
                source: paths.registry.clone(),
                state: StopState::Broken(format!("cannot be listed ({err})")),
            }];
        }
    };
    let mut stops = Vec::new();
    for entry in entries {
        match entry {
            Ok(entry) => {
                let path = entry.path();
                let name = entry.file_name();
                let name = name.to_string_lossy();
                // `_everywhere.json` is read on its own; temporaries of a
                // write in progress are not stops yet.
                if name == EVERYWHERE_FILE || !name.ends_with(".json") || name.starts_with('.') {
                    continue;
                }
                stops.extend(read_one(&path));
            }
            Err(err) => stops.push(Stop {
                source: paths.registry.clone(),
                state: StopState::Broken(format!("cannot be listed ({err})")),
            }),
        }
    }
    stops.sort_by(|a, b| a.source.cmp(&b.source));
    stops
}

/// One path: `None` when nothing is there.
pub fn read_one(path: &Path) -> Option<Stop> {
    let broken = |detail: String| {
        Some(Stop {
            source: path.to_owned(),
            state: StopState::Broken(detail),
        })
    };
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == ErrorKind::NotFound => return None,
        Err(err) => return broken(format!("cannot be inspected ({err})")),
    };
    if meta.file_type().is_symlink() {
        return broken("is a symlink, not a regular file".into());
    }
    if meta.is_dir() {
        return broken("is a directory, not a regular file".into());
    }
    if !meta.is_file() {
        return broken("is not a regular file".into());
    }
    // O_NOFOLLOW closes the window between the lstat above and the open.
    let mut file = match fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
    {
        Ok(file) => file,
        Err(err) => return broken(format!("cannot be read ({err})")),
    };
    let mut bytes = Vec::new();
    if let Err(err) = (&mut file).take(MAX_STOP_FILE + 1).read_to_end(&mut bytes) {
        return broken(format!("cannot be read ({err})"));
    }
    if bytes.len() as u64 > MAX_STOP_FILE {
        return broken(format!("is larger than {MAX_STOP_FILE} bytes"));
    }
    match StopFile::parse(&bytes) {
        Ok(stop) => Some(Stop {
            source: path.to_owned(),
            state: StopState::InForce(stop),
        }),
        Err(err) => broken(format!("cannot be parsed ({err})")),
    }
}
