//! The rules Chock ships, exactly as the policy reference's table has them.
//!
//! Read only where neither the project nor the operator has a matching rule.
//! What is not here (secret.use, device, style.parse, mcp, plugin, net.*,
//! nix.build, sandbox.jit, exec.unparsed, git.push, ...) has no default and
//! so asks. Two rows are capabilities rather than acts and answer allow when
//! nobody names them: `workspace.integrate` and `provider.*`.

use crate::decision::Decision;
use crate::pattern::Pattern;
use crate::rule::Rule;

/// The tools whose `call.<tool>` ships as allow.
pub const ALLOWED_CALLS: &[&str] = &[
    "read_file",
    "read_image",
    "list_directory",
    "glob",
    "grep",
    "write_file",
    "edit_file",
    "read_guidance",
    "read_memory",
    "write_memory",
    "provide_tool",
    "nix_eval",
];

/// Git subcommands that change only the session's own workspace (or read),
/// and so ship as allow. `git.branch`, `git.tag` and `git.branch.delete` are
/// not here: refs are shared by every worktree of the person's repository.
pub const ALLOWED_GIT: &[&str] = &[
    "add",
    "am",
    "apply",
    "blame",
    "cat-file",
    "checkout",
    "cherry-pick",
    "clean",
    "commit",
    "describe",
    "diff",
    "for-each-ref",
    "grep",
    "log",
    "ls-files",
    "ls-tree",
    "merge",
    "mv",
    "rebase",
    "reset",
    "restore",
    "rev-list",
    "rev-parse",
    "revert",
    "rm",
    "shortlog",
    "show",
    "show-ref",
    "stash",
    "status",
    "switch",
];

/// The other shipped rows, as `(action, decision)`.
pub const ROWS: &[(&str, Decision)] = &[
    ("exec.devshell.*", Decision::Allow),
    ("exec.nix.store.*", Decision::Ask),
    ("exec.workspace.*", Decision::Allow),
    ("exec.path.*", Decision::Allow),
    ("web.search", Decision::Ask),
    ("skill.read.operator", Decision::Allow),
    ("skill.read.project", Decision::Ask),
    ("skill.read.packaged", Decision::Ask),
    ("nix.net.build.opaque", Decision::Allow),
    ("lsp.*", Decision::Allow),
    ("workspace.integrate", Decision::Allow),
    ("provider.*", Decision::Allow),
];

/// Every shipped rule.
pub fn rules() -> Vec<Rule> {
    let calls = ALLOWED_CALLS
        .iter()
        .map(|t| (format!("call.{t}"), Decision::Allow));
    let git = ALLOWED_GIT
        .iter()
        .map(|s| (format!("git.{s}"), Decision::Allow));
    let rows = ROWS.iter().map(|(a, d)| ((*a).to_owned(), *d));
    calls
        .chain(git)
        .chain(rows)
        .filter_map(|(a, d)| Pattern::parse(&a).ok().map(|p| Rule::new(p, d)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_row_parses() {
        let n = ALLOWED_CALLS.len() + ALLOWED_GIT.len() + ROWS.len();
        assert_eq!(rules().len(), n);
    }
}
