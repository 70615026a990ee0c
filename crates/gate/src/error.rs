//! The crate's error type. Every variant carries the path or value involved
//! and its message says what to do next, because the binary prints it as is.

use std::io;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum GateError {
    #[error("cannot find the home directory: HOME is not set; set HOME and try again")]
    NoHome,
    #[error("cannot locate the state directory: {0}")]
    StateDir(String),
    #[error(
        "{path} is not inside a git repository: run this from a repository, or use --everywhere"
    )]
    NotARepo { path: PathBuf },
    #[error("cannot read git metadata at {path}: {detail}; check the repository with 'git status'")]
    BadGitDir { path: PathBuf, detail: String },
    #[error("cannot {action} {path}: {error}")]
    Io {
        action: &'static str,
        path: PathBuf,
        error: io::Error,
    },
    #[error(
        "{path} is not valid JSON at line {line}, column {column}: {message}; fix it by hand, chock will not touch it"
    )]
    InvalidJson {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{path} is not valid TOML: {message}; fix it by hand, chock will not touch it")]
    InvalidToml { path: PathBuf, message: String },
    #[error("{path}: {what}; fix it by hand, chock will not guess")]
    UnexpectedShape { path: PathBuf, what: String },
    #[error("{path} already exists and was not written by chock; {what}")]
    Occupied { path: PathBuf, what: String },
    #[error("unknown agent {name:?}: known agents are {known}")]
    UnknownAgent { name: String, known: String },
    #[error("git failed in {dir}: {detail}")]
    Git { dir: PathBuf, detail: String },
}

impl GateError {
    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        GateError::Io {
            action,
            path: path.into(),
            error: source,
        }
    }
}
