//! What a session's commands find and how their programs are classed: the
//! dev shell's store hashes and directories, the `bin` directories
//! provide_tool added, then the host's PATH. One value, shared by the
//! command runner (which gives commands the PATH) and the session's tools
//! (provide_tool adds to it), so what a command finds and what the policy
//! is asked about never disagree.

use std::cell::RefCell;
use std::collections::HashSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use chock_policy::{Action, ExecClass, ExecContext};

use super::devshell::{DevShell, store_hash};

/// The session's programs.
#[derive(Debug, Default)]
pub struct Programs {
    dev_shell: Option<DevShell>,
    /// Store paths provide_tool realised, newest first, each with the
    /// `bin` directory it put on PATH.
    provided: RefCell<Vec<PathBuf>>,
}

impl Programs {
    pub fn new(dev_shell: Option<DevShell>) -> Programs {
        Programs {
            dev_shell,
            provided: RefCell::new(Vec::new()),
        }
    }

    pub fn dev_shell(&self) -> Option<&DevShell> {
        self.dev_shell.as_ref()
    }

    /// Puts `out`'s `bin` first on every later command's PATH.
    pub fn provide(&self, out: &Path) {
        let mut provided = self.provided.borrow_mut();
        provided.retain(|p| p != out);
        provided.insert(0, out.to_owned());
    }

    /// The directories searched before the host's PATH, in order: what
    /// provide_tool added, then the dev shell's.
    fn first_dirs(&self) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = self
            .provided
            .borrow()
            .iter()
            .map(|out| out.join("bin"))
            .collect();
        if let Some(shell) = &self.dev_shell {
            dirs.extend(shell.path.iter().cloned());
        }
        dirs
    }

    /// The variables every command gets: PATH (the directories above, then
    /// `base`, the PATH the sandbox passes through) and the dev shell's own.
    pub fn env(&self, base: Option<OsString>) -> Vec<(String, String)> {
        let first = self.first_dirs();
        let mut env: Vec<(String, String)> = self
            .dev_shell
            .iter()
            .flat_map(|shell| shell.env.iter().cloned())
            .collect();
        if !first.is_empty() {
            let mut dirs = first;
            dirs.extend(base.iter().flat_map(std::env::split_paths));
            if let Ok(path) = std::env::join_paths(dirs) {
                env.push(("PATH".to_owned(), path.to_string_lossy().into_owned()));
            }
        }
        env
    }

    /// The action `program` is decided at: a store path in the dev shell's
    /// closure is `exec.devshell.<program>`, another store path
    /// `exec.nix.store.<hash>`; a bare name is looked up in the directories
    /// above first (store directories: immutable, and nothing a command
    /// could have written) and classed by the one it is found in, else as
    /// the host's PATH classes it.
    pub fn classify(&self, program: &str, ctx: &ExecContext) -> Action {
        if !program.contains('/') && !program.is_empty() && program != "." && program != ".." {
            for dir in self.first_dirs() {
                let found = dir.join(program);
                if found.is_file() {
                    return self
                        .classify_store(&found)
                        .unwrap_or_else(|| Action::exec_for(program, ctx));
                }
            }
            return Action::exec_for(program, ctx);
        }
        let mut ctx = ctx.clone();
        ctx.devshell = self.hashes();
        Action::exec_for(program, &ctx)
    }

    fn classify_store(&self, found: &Path) -> Option<Action> {
        let hash = store_hash(found)?;
        if self.in_dev_shell(&hash) {
            Action::exec(ExecClass::DevShell, found.file_name()?.to_str()?).ok()
        } else {
            Action::exec(ExecClass::NixStore, &hash).ok()
        }
    }

    fn in_dev_shell(&self, hash: &str) -> bool {
        self.dev_shell
            .as_ref()
            .is_some_and(|shell| shell.hashes.contains(hash))
    }

    fn hashes(&self) -> HashSet<String> {
        self.dev_shell
            .as_ref()
            .map(|shell| shell.hashes.clone())
            .unwrap_or_default()
    }
}
