//! The git shim: sorts every `run_command` whose first word is `git` by what
//! the subcommand does, so the loop knows whether to ask and what to ask
//! about. [`classify`] is a pure function over the argument vector; it
//! touches no repository and runs nothing.
//!
//! The shim prevents mistakes, not attacks (seeds 004, `git.*`): an agent
//! can reach git through a script, an alias, `sh -c` or a copy of the binary,
//! and nothing here pretends otherwise. The sandbox is the boundary. What
//! the shim buys is that an ordinary `git push` is asked about and an
//! ordinary `git status` costs nothing.
//!
//! Reading is conservative: a global option the shim does not know, or one
//! that changes where or how git runs (`-c`, `-C`, `--git-dir`, ...), stops
//! it reading the subcommand at all and the call asks as `git.unknown`. A
//! subcommand it does not know asks under its own name (`git.frobnicate`),
//! which ships with no rule and so asks.

use chock_policy::Action;

/// What the loop does with one git command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum GitClass {
    /// Only reads: no question, run the real git.
    ReadOnly {
        /// The subcommand, for the log.
        subcommand: String,
    },
    /// Decide `action` (ask when the policy says so); `carry` says what a
    /// permitted call does.
    Decide {
        /// `git.<subcommand>` or `git.unknown`.
        action: Action,
        /// What happens once it is permitted.
        carry: Carry,
    },
}

/// What a permitted git command does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Carry {
    /// Run the real git in the sandbox, in the workspace.
    Run,
    /// `git push`: run the real git in the sandbox with the network the
    /// policy grants and the credential handed over for this one call
    /// (docs/git-shim.md).
    Push,
    /// Asked about, and not run even on yes: nothing carries the effect out.
    /// The text is what the agent is told.
    NotRun(String),
}

/// Subcommands that only read the repository.
const READ_ONLY: &[&str] = &[
    "blame",
    "cat-file",
    "check-attr",
    "check-ignore",
    "cherry",
    "count-objects",
    "describe",
    "diff",
    "diff-files",
    "diff-index",
    "diff-tree",
    "for-each-ref",
    "grep",
    "help",
    "log",
    "ls-files",
    "ls-tree",
    "merge-base",
    "name-rev",
    "range-diff",
    "rev-list",
    "rev-parse",
    "shortlog",
    "show",
    "show-branch",
    "show-ref",
    "status",
    "var",
    "verify-commit",
    "verify-tag",
    "version",
    "whatchanged",
];

/// Subcommands that change only the session's own worktree and its branch
/// (the policy ships these as allow).
const WORKSPACE: &[&str] = &[
    "add",
    "am",
    "apply",
    "checkout",
    "cherry-pick",
    "clean",
    "commit",
    "merge",
    "mv",
    "rebase",
    "reset",
    "restore",
    "revert",
    "rm",
    "stash",
    "switch",
];

/// Subcommands that reach another host and have no act to carry them out.
const REMOTE_NOT_RUN: &[&str] = &["clone", "fetch", "pull", "ls-remote"];

/// Global options that change nothing about where git works or what it runs.
const HARMLESS_GLOBALS: &[&str] = &[
    "-P",
    "--no-pager",
    "-p",
    "--paginate",
    "--no-optional-locks",
    "--literal-pathspecs",
    "--glob-pathspecs",
    "--noglob-pathspecs",
    "--icase-pathspecs",
    "--no-replace-objects",
    "--no-lazy-fetch",
    "--no-advice",
];

/// Options of read-only subcommands that write a file or start a program,
/// so the call is no longer only a read.
const WRITING_OPTIONS: &[&str] = &["--output", "-O", "--open-files-in-pager", "--ext-diff"];

/// Classifies a git command line. `argv[0]` must be `git` (or a path ending
/// in `/git`); `None` otherwise.
pub(crate) fn classify<S: AsRef<str>>(argv: &[S]) -> Option<GitClass> {
    let (first, rest) = argv.split_first()?;
    let program = first.as_ref();
    if program != "git" && !program.ends_with("/git") {
        return None;
    }
    let mut words = rest.iter().map(AsRef::as_ref);
    let subcommand = loop {
        match words.next() {
            None => return Some(read_only("help")),
            Some("--version" | "-v") => return Some(read_only("version")),
            Some("--help" | "-h") => return Some(read_only("help")),
            Some(word) if HARMLESS_GLOBALS.contains(&word) => {}
            Some(word) if word.starts_with('-') => return Some(unknown()),
            Some(word) => break word,
        }
    };
    let args: Vec<&str> = words.collect();
    Some(subcommand_class(subcommand, &args))
}

fn read_only(subcommand: &str) -> GitClass {
    GitClass::ReadOnly {
        subcommand: subcommand.to_owned(),
    }
}

fn unknown() -> GitClass {
    GitClass::Decide {
        action: Action::git_unknown(),
        carry: Carry::Run,
    }
}

fn decide(name: &str, carry: Carry) -> GitClass {
    match Action::git(name) {
        Ok(action) => GitClass::Decide { action, carry },
        Err(_) => unknown(),
    }
}

fn has_option(args: &[&str], names: &[&str]) -> bool {
    args.iter().take_while(|a| **a != "--").any(|a| {
        names.iter().any(|n| {
            *a == *n
                || (n.starts_with("--") && a.strip_prefix(n).is_some_and(|r| r.starts_with('=')))
        })
    })
}

fn positionals<'a>(args: &[&'a str]) -> Vec<&'a str> {
    args.iter()
        .copied()
        .filter(|a| !a.starts_with('-'))
        .collect()
}

fn subcommand_class(sub: &str, args: &[&str]) -> GitClass {
    if READ_ONLY.contains(&sub) {
        if has_option(args, WRITING_OPTIONS) {
            return unknown();
        }
        return read_only(sub);
    }
    if sub == "stash" {
        return match args.first().copied() {
            Some("list" | "show") => read_only("stash"),
            _ => decide("stash", Carry::Run),
        };
    }
    if WORKSPACE.contains(&sub) {
        return decide(sub, Carry::Run);
    }
    if sub == "push" {
        return decide("push", Carry::Push);
    }
    if REMOTE_NOT_RUN.contains(&sub) {
        return decide(sub, Carry::NotRun(not_run(sub)));
    }
    match sub {
        "branch" => branch(args),
        "tag" => listing(
            sub,
            args,
            &["-l", "--list", "-n", "--contains", "--points-at"],
        ),
        "remote" => match args.first().copied() {
            None | Some("-v" | "--verbose" | "show" | "get-url") => read_only("remote"),
            Some(_) => decide("remote", Carry::Run),
        },
        "worktree" => match args.first().copied() {
            Some("list") => read_only("worktree"),
            _ => decide("worktree", Carry::Run),
        },
        "config" => {
            if has_option(
                args,
                &["--get", "--get-all", "--get-regexp", "--list", "-l"],
            ) || matches!(args.first().copied(), Some("get" | "list"))
            {
                read_only("config")
            } else {
                decide("config", Carry::Run)
            }
        }
        "reflog" => match args.first().copied() {
            None | Some("show") => read_only("reflog"),
            Some(_) => decide("reflog", Carry::Run),
        },
        other => decide(other, Carry::Run),
    }
}

/// `git branch`: listing reads; `-d`/`-D` is `git.branch.delete`; anything
/// else that names a branch or moves one is `git.branch`.
fn branch(args: &[&str]) -> GitClass {
    if has_option(args, &["-d", "-D", "--delete"]) {
        return decide("branch.delete", Carry::Run);
    }
    let changing = [
        "-m",
        "-M",
        "--move",
        "-c",
        "-C",
        "--copy",
        "-u",
        "--set-upstream-to",
        "--unset-upstream",
        "--edit-description",
        "-f",
        "--force",
        "-t",
        "--track",
        "--no-track",
    ];
    if has_option(args, &changing) {
        return decide("branch", Carry::Run);
    }
    listing("branch", args, &["-l", "--list"])
}

/// A subcommand that lists with no name (or with a listing flag) and
/// changes something when given one.
fn listing(sub: &str, args: &[&str], list_flags: &[&str]) -> GitClass {
    let value_options = [
        "--format",
        "--sort",
        "--contains",
        "--points-at",
        "--merged",
        "--no-merged",
        "--color",
    ];
    let mut names = positionals(args);
    // A separate value after an option that takes one is not a name.
    for (i, arg) in args.iter().enumerate() {
        if value_options.contains(arg)
            && let Some(value) = args.get(i + 1)
        {
            names.retain(|n| n != value);
        }
    }
    if names.is_empty() || has_option(args, list_flags) {
        read_only(sub)
    } else {
        decide(sub, Carry::Run)
    }
}

fn not_run(sub: &str) -> String {
    format!(
        "git {sub} was not run: Chock has no way to carry it out from inside a session, because the sandbox gives git no credentials and no network for it. \
Ask the person to run `git {sub}` in their own checkout if the session needs it; a workspace shares the project's objects and refs, so what they fetch is visible here."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(line: &str) -> GitClass {
        let argv: Vec<&str> = line.split_whitespace().collect();
        classify(&argv).unwrap()
    }

    fn asks(line: &str) -> String {
        match class(line) {
            GitClass::Decide { action, .. } => action.as_str().to_owned(),
            GitClass::ReadOnly { subcommand } => format!("read-only {subcommand}"),
        }
    }

    #[test]
    fn the_classification_table() {
        let table = [
            ("git status", "read-only status"),
            ("git status --porcelain", "read-only status"),
            ("git log --oneline -5", "read-only log"),
            ("git diff HEAD~1", "read-only diff"),
            ("git show HEAD:README.md", "read-only show"),
            ("git --no-pager log", "read-only log"),
            ("git commit -m x", "git.commit"),
            ("git add -A", "git.add"),
            ("git branch", "read-only branch"),
            ("git branch -a -v", "read-only branch"),
            ("git branch --list 'chock/*'", "read-only branch"),
            ("git branch topic", "git.branch"),
            ("git branch -m old new", "git.branch"),
            ("git branch -d topic", "git.branch.delete"),
            ("git branch -D topic", "git.branch.delete"),
            ("git checkout -b topic", "git.checkout"),
            ("git switch main", "git.switch"),
            ("git stash", "git.stash"),
            ("git stash pop", "git.stash"),
            ("git stash list", "read-only stash"),
            ("git push origin main", "git.push"),
            ("git fetch origin", "git.fetch"),
            ("git clone https://example.com/x", "git.clone"),
            ("git pull", "git.pull"),
            ("git frobnicate", "git.frobnicate"),
            ("git -c core.pager=sh log", "git.unknown"),
            ("git -C /etc status", "git.unknown"),
            ("git --git-dir=/tmp/x status", "git.unknown"),
            ("git --bogus status", "git.unknown"),
            ("git Status", "git.unknown"),
            ("git diff --output=/tmp/x", "git.unknown"),
            ("git tag", "read-only tag"),
            ("git tag v1", "git.tag"),
            ("git remote -v", "read-only remote"),
            ("git remote add o u", "git.remote"),
            ("git config --get user.name", "read-only config"),
            ("git config user.name x", "git.config"),
            ("/usr/bin/git status", "read-only status"),
        ];
        for (line, want) in table {
            assert_eq!(asks(line), want, "{line}");
        }
    }

    #[test]
    fn push_runs_and_remote_reads_do_not() {
        assert!(matches!(
            class("git push"),
            GitClass::Decide {
                carry: Carry::Push,
                ..
            }
        ));
        for line in ["git fetch", "git clone u", "git pull --rebase"] {
            match class(line) {
                GitClass::Decide {
                    carry: Carry::NotRun(text),
                    ..
                } => assert!(text.contains("was not run"), "{text}"),
                other => panic!("{line}: {other:?}"),
            }
        }
        assert!(matches!(
            class("git commit -m x"),
            GitClass::Decide {
                carry: Carry::Run,
                ..
            }
        ));
    }

    #[test]
    fn only_git_is_classified() {
        assert_eq!(classify(&["ls", "-l"]), None);
        assert_eq!(classify::<&str>(&[]), None);
        assert_eq!(classify(&["gitk"]), None);
        assert_eq!(asks("git"), "read-only help");
    }
}
