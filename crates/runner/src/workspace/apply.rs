//! Carrying a session's commits back into the person's repository.
//!
//! Two settings decide what an apply does, and both are settled before
//! the person is asked, because the description is what they answer:
//! `.apply = .{ .mode = ... }` in the project's chock.zon says *where* the
//! work lands ([`ApplyMode`]), and `workspace.integrate` (read once, at
//! session start) says *whether* it may move a branch of theirs at all;
//! deny parks it at `refs/chock/parked/<id>` instead ([`Landing`]).
//!
//! Only commits are carried: a workspace with uncommitted changes is
//! refused with the command that commits them. Every mode that moves the
//! person's branch refuses while their checkout has uncommitted tracked
//! changes, and a rebase or merge that conflicts is aborted, so a failed
//! apply leaves both the repository and the workspace as they were.

use std::path::{Path, PathBuf};

use chock_log::event::WorkspaceApply;
use serde::Deserialize;

use super::host_git::GitPaths;
use super::{
    WorkspaceError, changed_files_in, git, git_ok, git_output, identity_args, parked_ref, rev,
    short, summarize,
};

/// Where an approved apply lands (`.apply.mode` in chock.zon).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApplyMode {
    /// Leave the work on the session's branch; nothing of yours moves.
    Branch,
    /// Move your checked-out branch forward to the session's last commit,
    /// only when it has not moved on since the session started.
    #[default]
    FastForward,
    /// Replay the session's commits on top of your branch, then
    /// fast-forward your branch to them.
    Rebase,
    /// Merge the session's branch into yours with a merge commit.
    Merge,
}

impl ApplyMode {
    /// The mode as chock.zon spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            ApplyMode::Branch => "branch",
            ApplyMode::FastForward => "fast_forward",
            ApplyMode::Rebase => "rebase",
            ApplyMode::Merge => "merge",
        }
    }

    /// The project's `.apply.mode`, or the default when chock.zon (or the
    /// block) is absent.
    pub fn for_project(project: &Path) -> Result<ApplyMode, WorkspaceError> {
        #[derive(Deserialize, Default)]
        struct File {
            #[serde(default)]
            apply: Option<Apply>,
        }
        #[derive(Deserialize)]
        struct Apply {
            #[serde(default)]
            mode: ApplyMode,
        }
        let path = project.join("chock.zon");
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Ok(ApplyMode::default());
            }
            Err(source) => {
                return Err(WorkspaceError::Io {
                    what: "read",
                    path,
                    error: source,
                });
            }
        };
        let file: File = chock_zon::from_str(&text).map_err(|err| {
            WorkspaceError::Refused(format!(
                "{}: {err}; .apply is written .apply = .{{ .mode = .fast_forward }} (or .branch, .rebase, .merge)",
                path.display()
            ))
        })?;
        Ok(file.apply.map(|a| a.mode).unwrap_or_default())
    }
}

/// The symbolic links `start..tip` adds or changes whose target is
/// absolute or climbs out of the repository.
fn outside_links(
    paths: &GitPaths,
    start: &str,
    tip: &str,
) -> Result<Vec<(String, String)>, WorkspaceError> {
    let raw = paths.run(&[
        "diff",
        "--raw",
        "-z",
        "--no-renames",
        "--no-ext-diff",
        start,
        tip,
    ])?;
    let mut fields = raw.split('\0');
    let mut links = Vec::new();
    while let (Some(meta), Some(path)) = (fields.next(), fields.next()) {
        let parts: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
        let (Some(mode), Some(blob)) = (parts.get(1), parts.get(3)) else {
            continue;
        };
        if *mode != "120000" {
            continue;
        }
        let target = paths.run(&["cat-file", "blob", blob])?;
        if points_outside(path, &target) {
            links.push((path.to_owned(), target));
        }
    }
    Ok(links)
}

/// Whether a link at `path` (relative to the repository's top) with
/// `target` leads out of the repository, read lexically.
fn points_outside(path: &str, target: &str) -> bool {
    if target.starts_with('/') {
        return true;
    }
    let mut depth: usize = path.matches('/').count();
    for part in target.split('/') {
        match part {
            "" | "." => {}
            ".." if depth == 0 => return true,
            ".." => depth -= 1,
            _ => depth += 1,
        }
    }
    false
}

/// What an apply will do once permitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Landing {
    /// Land in this mode.
    Mode(ApplyMode),
    /// workspace.integrate is deny: park the work at its ref.
    Parked,
}

impl Landing {
    /// The landing for a project's mode and the workspace.integrate answer
    /// read at session start (`true` unless it was deny).
    pub fn new(mode: ApplyMode, integrate_permitted: bool) -> Landing {
        if integrate_permitted {
            Landing::Mode(mode)
        } else {
            Landing::Parked
        }
    }
}

/// An apply worked out and ready to describe and carry out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApplyPlan {
    pub session: String,
    pub repo: PathBuf,
    pub dir: PathBuf,
    /// The checkout's git directories, as the host recorded them.
    pub paths: GitPaths,
    pub branch: String,
    pub start: String,
    pub tip: String,
    /// `(commit, subject)` of each commit the session made, oldest first.
    pub commits: Vec<(String, String)>,
    pub landing: Landing,
    /// The person's checked-out branch and its commit, for modes that move it.
    pub target: Option<(String, String)>,
    /// Symbolic links the session's commits add or change whose target lies
    /// outside the repository (`(path, target)`): named in the description,
    /// and asked about even where the policy allows the apply.
    pub outside_links: Vec<(String, String)>,
}

impl ApplyPlan {
    /// Works out the apply of session `session`'s checkout (its git
    /// directories `paths`, on `branch`, started at `start`) into `repo`.
    pub fn new(
        session: &str,
        repo: &Path,
        paths: &GitPaths,
        branch: &str,
        start: &str,
        landing: Landing,
    ) -> Result<ApplyPlan, WorkspaceError> {
        let dir = paths.work_tree.as_path();
        paths.ensure_view(branch)?;
        let dirty = changed_files_in(paths)?;
        if !dirty.is_empty() {
            return Err(WorkspaceError::Uncommitted {
                dir: dir.to_owned(),
                files: summarize(&dirty),
            });
        }
        let tip = rev(repo, &format!("refs/heads/{branch}"))?;
        let log = git(
            repo,
            &[
                "log",
                "--reverse",
                "--format=%H%x09%s",
                &format!("{start}..{tip}"),
            ],
        )?;
        let commits: Vec<(String, String)> = log
            .lines()
            .filter_map(|l| l.split_once('\t'))
            .map(|(c, s)| (c.to_owned(), s.to_owned()))
            .collect();
        if commits.is_empty() {
            return Err(WorkspaceError::Refused(format!(
                "session {session} made no commits on {branch}: nothing to apply (only commits are carried back)"
            )));
        }
        let target = match landing {
            Landing::Mode(ApplyMode::Branch) | Landing::Parked => None,
            Landing::Mode(_) => {
                let out = git_output(repo, &["symbolic-ref", "--quiet", "--short", "HEAD"])?;
                if !out.status.success() {
                    return Err(WorkspaceError::Refused(format!(
                        "the HEAD of {} is detached: check out the branch the work should land on, or set .apply = .{{ .mode = .branch }} in chock.zon",
                        repo.display()
                    )));
                }
                let name = String::from_utf8_lossy(&out.stdout).trim().to_owned();
                let at = rev(repo, "HEAD")?;
                Some((name, at))
            }
        };
        let outside_links = outside_links(paths, start, &tip)?;
        Ok(ApplyPlan {
            outside_links,
            session: session.to_owned(),
            repo: repo.to_owned(),
            dir: dir.to_owned(),
            paths: paths.clone(),
            branch: branch.to_owned(),
            start: start.to_owned(),
            tip,
            commits,
            landing,
            target,
        })
    }

    /// Exactly what the apply does, for the person who answers it.
    pub fn describe(&self) -> String {
        let n = self.commits.len();
        let commits = if n == 1 {
            "1 commit".to_owned()
        } else {
            format!("{n} commits")
        };
        let repo = self.repo.display();
        let (name, at) = self
            .target
            .as_ref()
            .map(|(n, a)| (n.as_str(), short(a)))
            .unwrap_or(("", ""));
        let mut text = match self.landing {
            Landing::Parked => format!(
                "workspace.integrate is deny, so no branch of yours moves: park the session's {commits} at {} in {repo}; take them with `git merge {}` when you want them.",
                parked_ref(&self.session),
                parked_ref(&self.session)
            ),
            Landing::Mode(ApplyMode::Branch) => format!(
                "Leave the session's {commits} on branch {} in {repo}; no branch of yours moves. Take them with `git merge {}` when you want them.",
                self.branch, self.branch
            ),
            Landing::Mode(ApplyMode::FastForward) => format!(
                "Fast-forward your branch {name} in {repo} from {at} to {}, bringing the session's {commits}. Refused without moving anything if {name} has moved on since the session started.",
                short(&self.tip)
            ),
            Landing::Mode(ApplyMode::Rebase) => format!(
                "Rebase the session's {commits} onto your branch {name} (at {at}) inside the workspace, then fast-forward {name} in {repo} to the result. A conflict aborts the rebase and moves nothing."
            ),
            Landing::Mode(ApplyMode::Merge) => format!(
                "Merge branch {} into your branch {name} (at {at}) in {repo} with a merge commit, bringing the session's {commits}. A conflict aborts the merge and moves nothing.",
                self.branch
            ),
        };
        for (commit, subject) in &self.commits {
            text.push_str(&format!("\n  {} {subject}", short(commit)));
        }
        if !self.outside_links.is_empty() {
            text.push_str("\nThe commits add symbolic links that point outside the repository; your checkout will hold them:");
            for (path, target) in &self.outside_links {
                text.push_str(&format!("\n  {path} -> {target}"));
            }
        }
        text
    }

    /// Carries the apply out; the event to append says where it went.
    pub fn carry_out(&self) -> Result<WorkspaceApply, WorkspaceError> {
        let mode = match self.landing {
            Landing::Parked => {
                let name = parked_ref(&self.session);
                git(&self.repo, &["update-ref", &name, &self.tip])?;
                return Ok(WorkspaceApply {
                    commit: Some(self.tip.clone()),
                    target: name,
                });
            }
            Landing::Mode(ApplyMode::Branch) => {
                return Ok(WorkspaceApply {
                    commit: Some(self.tip.clone()),
                    target: self.branch.clone(),
                });
            }
            Landing::Mode(mode) => mode,
        };
        let Some((name, _)) = &self.target else {
            return Err(WorkspaceError::Refused(
                "no branch to land on was worked out".to_owned(),
            ));
        };
        let tracked = git(
            &self.repo,
            &["status", "--porcelain=v1", "--untracked-files=no"],
        )?;
        if !tracked.trim().is_empty() {
            let files: Vec<String> = tracked.lines().map(|l| l.trim().to_owned()).collect();
            return Err(WorkspaceError::Refused(format!(
                "{} has uncommitted changes ({}): commit or stash them first so the apply cannot touch them; nothing moved",
                self.repo.display(),
                summarize(&files)
            )));
        }
        let target_tip = rev(&self.repo, "HEAD")?;
        match mode {
            ApplyMode::FastForward => self.fast_forward(name, &target_tip)?,
            ApplyMode::Rebase => self.rebase(name, &target_tip)?,
            ApplyMode::Merge => self.merge(name)?,
            ApplyMode::Branch => {}
        }
        Ok(WorkspaceApply {
            commit: Some(rev(&self.repo, "HEAD")?),
            target: name.clone(),
        })
    }

    fn fast_forward(&self, name: &str, target_tip: &str) -> Result<(), WorkspaceError> {
        if !git_ok(
            &self.repo,
            &["merge-base", "--is-ancestor", target_tip, &self.tip],
        )? {
            return Err(WorkspaceError::Refused(format!(
                "your branch {name} has moved on since the session started (it is at {}), so a fast-forward cannot carry the work; nothing moved. Set .apply = .{{ .mode = .rebase }} or .merge in chock.zon, or take branch {} yourself",
                short(target_tip),
                self.branch
            )));
        }
        git(&self.repo, &["merge", "--ff-only", "--quiet", &self.branch]).map(drop)
    }

    /// The rebase runs in the workspace, whose files a command wrote:
    /// through the recorded git directories only.
    fn rebase(&self, name: &str, target_tip: &str) -> Result<(), WorkspaceError> {
        let ids = identity_args(&self.repo);
        let mut args: Vec<&str> = ids.iter().map(String::as_str).collect();
        args.extend(["rebase", "--quiet", "--onto", target_tip, &self.start]);
        let out = self
            .paths
            .command(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .output()
            .map_err(WorkspaceError::NoGit)?;
        if !out.status.success() {
            let _ = self.paths.command(["rebase", "--abort"]).output();
            return Err(WorkspaceError::Refused(format!(
                "rebasing the session's commits onto {name} conflicts: {}; the rebase was aborted and nothing moved. Set .apply = .{{ .mode = .merge }} or resolve it by hand on branch {}",
                String::from_utf8_lossy(&out.stderr).trim(),
                self.branch
            )));
        }
        git(&self.repo, &["merge", "--ff-only", "--quiet", &self.branch]).map(drop)
    }

    fn merge(&self, name: &str) -> Result<(), WorkspaceError> {
        let ids = identity_args(&self.repo);
        let message = format!("Merge session {} ({})", self.session, self.branch);
        let mut args: Vec<&str> = ids.iter().map(String::as_str).collect();
        args.extend([
            "merge",
            "--no-ff",
            "--quiet",
            "--no-edit",
            "-m",
            &message,
            &self.branch,
        ]);
        let out = git_output(&self.repo, &args)?;
        if !out.status.success() {
            let _ = git_output(&self.repo, &["merge", "--abort"]);
            return Err(WorkspaceError::Refused(format!(
                "merging {} into {name} failed: {}; the merge was aborted and nothing moved",
                self.branch,
                String::from_utf8_lossy(&out.stdout).trim()
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::points_outside;

    #[test]
    fn a_link_is_outside_when_absolute_or_climbing_past_the_top() {
        assert!(points_outside("a", "/etc/passwd"));
        assert!(points_outside("a", "../x"));
        assert!(points_outside("d/a", "../../x"));
        assert!(points_outside("d/a", "x/../../../y"));
        assert!(!points_outside("d/a", "../x"));
        assert!(!points_outside("a", "b/c"));
        assert!(!points_outside("d/a", "./../d/b"));
    }
}
