//! Workspaces against real git repositories: creation and its refusals,
//! and carrying work back in each apply mode.

use std::path::Path;
use std::process::Command;

use chock_log::{SessionId, StateDir};
use chock_runner::workspace::{
    ApplyMode, ApplyPlan, CreateOptions, Landing, Opened, WorkspaceError, create, parked_ref,
};
use chock_testkit::TempProject;
use pretty_assertions::assert_eq;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=Agent",
            "-c",
            "user.email=agent@chock.invalid",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

fn open(project: &TempProject, state: &StateDir, allow_dirty: bool) -> (SessionId, Opened) {
    let id = SessionId::new();
    let opened = try_open(project, state, &id, allow_dirty).unwrap();
    (id, opened)
}

fn try_open(
    project: &TempProject,
    state: &StateDir,
    id: &SessionId,
    allow_dirty: bool,
) -> Result<Opened, WorkspaceError> {
    create(&CreateOptions {
        state,
        session: id,
        project: project.path(),
        allow_dirty,
    })
}

/// The agent's work: one file, one commit, in the workspace.
fn work(opened: &Opened, file: &str, text: &str) {
    std::fs::write(opened.dir.join(file), text).unwrap();
    git(&opened.dir, &["add", "-A"]);
    git(
        &opened.dir,
        &["commit", "-q", "-m", &format!("write {file}")],
    );
}

fn plan(id: &SessionId, project: &TempProject, opened: &Opened, landing: Landing) -> ApplyPlan {
    ApplyPlan::new(
        id.as_str(),
        &project.path().canonicalize().unwrap(),
        &opened.paths,
        &opened.branch,
        &opened.commit,
        landing,
    )
    .unwrap()
}

#[test]
fn a_workspace_is_a_worktree_on_its_own_branch_at_head() {
    let project = TempProject::git();
    let state = tempfile::tempdir().unwrap();
    let state = StateDir::at(state.path());
    let (id, opened) = open(&project, &state, false);
    assert_eq!(opened.dir, state.workspace_dir(&id));
    assert_eq!(opened.branch, format!("chock/{}", id.as_str()));
    assert_eq!(opened.commit, project.head());
    assert_eq!(git(&opened.dir, &["rev-parse", "HEAD"]), project.head());
    assert_eq!(
        git(&opened.dir, &["symbolic-ref", "--short", "HEAD"]),
        opened.branch
    );
    assert!(opened.dir.join("README.md").is_file());
    let event = opened.event();
    assert_eq!(event.dir, opened.dir);
    assert_eq!(event.branch.as_deref(), Some(opened.branch.as_str()));
}

#[test]
fn a_directory_that_is_not_a_repository_is_refused_with_what_to_do() {
    let project = TempProject::new();
    let state = tempfile::tempdir().unwrap();
    let err = try_open(
        &project,
        &StateDir::at(state.path()),
        &SessionId::new(),
        false,
    )
    .unwrap_err();
    assert!(matches!(err, WorkspaceError::NotARepo { .. }), "{err}");
    assert!(err.to_string().contains("git init"), "{err}");
    assert!(!state.path().join("workspaces").exists());
}

#[test]
fn a_detached_head_is_refused() {
    let project = TempProject::git();
    let head = project.head();
    project.run_git(&["checkout", "--quiet", "--detach"]);
    let state = tempfile::tempdir().unwrap();
    let err = try_open(
        &project,
        &StateDir::at(state.path()),
        &SessionId::new(),
        false,
    )
    .unwrap_err();
    let text = err.to_string();
    assert!(text.contains(&format!("detached at {head}")), "{text}");
    assert!(text.contains("git switch"), "{text}");
}

#[test]
fn a_dirty_tree_without_allow_dirty_is_refused_and_left_alone() {
    let project = TempProject::git();
    project.write("README.md", "changed\n");
    project.write("new.txt", "new\n");
    let status = project.run_git(&["status", "--porcelain"]);
    let state = tempfile::tempdir().unwrap();
    let err = try_open(
        &project,
        &StateDir::at(state.path()),
        &SessionId::new(),
        false,
    )
    .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("M README.md"), "{text}");
    assert!(text.contains("?? new.txt"), "{text}");
    assert!(text.contains("--allow-dirty"), "{text}");
    assert_eq!(project.run_git(&["status", "--porcelain"]), status);
    assert_eq!(project.read("README.md"), "changed\n");
    assert_eq!(project.run_git(&["branch", "--list", "chock/*"]), "");
}

#[test]
fn allow_dirty_copies_changes_and_untracked_files_but_not_ignored_ones() {
    let project = TempProject::git();
    project.write(".gitignore", "*.log\n");
    project.write("gone.txt", "soon gone\n");
    project.commit_all("more files");
    project.write("README.md", "changed\n");
    project.write("sub/new.txt", "new\n");
    project.write("noise.log", "ignored\n");
    project.write("staged.txt", "staged\n");
    project.run_git(&["add", "staged.txt"]);
    std::fs::remove_file(project.join("gone.txt")).unwrap();
    let state = tempfile::tempdir().unwrap();
    let (_, opened) = open(&project, &StateDir::at(state.path()), true);
    let read = |rel: &str| std::fs::read_to_string(opened.dir.join(rel)).unwrap();
    assert_eq!(read("README.md"), "changed\n");
    assert_eq!(read("sub/new.txt"), "new\n");
    assert_eq!(read("staged.txt"), "staged\n");
    assert!(!opened.dir.join("gone.txt").exists());
    assert!(!opened.dir.join("noise.log").exists());
    // The person's own tree is untouched.
    assert_eq!(project.read("README.md"), "changed\n");
    assert_eq!(project.read("noise.log"), "ignored\n");
}

#[test]
fn a_branch_name_already_taken_is_refused_and_nothing_is_made() {
    let project = TempProject::git();
    let state = tempfile::tempdir().unwrap();
    let state = StateDir::at(state.path());
    let id = SessionId::new();
    project.run_git(&["branch", &format!("chock/{}", id.as_str())]);
    let err = try_open(&project, &state, &id, false).unwrap_err();
    assert!(matches!(err, WorkspaceError::BranchTaken { .. }), "{err}");
    assert!(err.to_string().contains("already exists"), "{err}");
    assert!(!state.workspace_dir(&id).exists());
}

#[test]
fn apply_in_branch_mode_moves_nothing_of_yours() {
    let project = TempProject::git();
    let state = tempfile::tempdir().unwrap();
    let (id, opened) = open(&project, &StateDir::at(state.path()), false);
    work(&opened, "a.txt", "a\n");
    let before = project.head();
    let plan = plan(&id, &project, &opened, Landing::Mode(ApplyMode::Branch));
    assert!(plan.describe().contains("no branch of yours moves"));
    let applied = plan.carry_out().unwrap();
    assert_eq!(applied.target, opened.branch);
    assert_eq!(project.head(), before);
}

#[test]
fn apply_fast_forward_moves_your_branch_and_your_files() {
    let project = TempProject::git();
    let state = tempfile::tempdir().unwrap();
    let (id, opened) = open(&project, &StateDir::at(state.path()), false);
    work(&opened, "a.txt", "a\n");
    let tip = git(&opened.dir, &["rev-parse", "HEAD"]);
    let plan = plan(
        &id,
        &project,
        &opened,
        Landing::Mode(ApplyMode::FastForward),
    );
    let text = plan.describe();
    assert!(text.starts_with("Fast-forward your branch main"), "{text}");
    assert!(text.contains("write a.txt"), "{text}");
    let applied = plan.carry_out().unwrap();
    assert_eq!(applied.target, "main");
    assert_eq!(project.head(), tip);
    assert_eq!(project.read("a.txt"), "a\n");
}

#[test]
fn apply_fast_forward_refuses_when_your_branch_moved_on() {
    let project = TempProject::git();
    let state = tempfile::tempdir().unwrap();
    let (id, opened) = open(&project, &StateDir::at(state.path()), false);
    work(&opened, "a.txt", "a\n");
    project.write("mine.txt", "mine\n");
    project.commit_all("my own work");
    let mine = project.head();
    let err = plan(
        &id,
        &project,
        &opened,
        Landing::Mode(ApplyMode::FastForward),
    )
    .carry_out()
    .unwrap_err();
    assert!(err.to_string().contains("moved on"), "{err}");
    assert_eq!(project.head(), mine);
}

#[test]
fn apply_rebase_replays_the_work_on_your_branch() {
    let project = TempProject::git();
    let state = tempfile::tempdir().unwrap();
    let (id, opened) = open(&project, &StateDir::at(state.path()), false);
    work(&opened, "a.txt", "a\n");
    project.write("mine.txt", "mine\n");
    project.commit_all("my own work");
    let mine = project.head();
    let applied = plan(&id, &project, &opened, Landing::Mode(ApplyMode::Rebase))
        .carry_out()
        .unwrap();
    assert_eq!(applied.target, "main");
    assert_eq!(project.read("a.txt"), "a\n");
    assert_eq!(project.read("mine.txt"), "mine\n");
    assert_eq!(project.run_git(&["rev-parse", "HEAD~1"]).trim(), mine);
    assert_eq!(
        project.run_git(&["log", "-1", "--format=%s"]).trim(),
        "write a.txt"
    );
}

#[test]
fn apply_merge_makes_a_merge_commit() {
    let project = TempProject::git();
    let state = tempfile::tempdir().unwrap();
    let (id, opened) = open(&project, &StateDir::at(state.path()), false);
    work(&opened, "a.txt", "a\n");
    let tip = git(&opened.dir, &["rev-parse", "HEAD"]);
    let before = project.head();
    plan(&id, &project, &opened, Landing::Mode(ApplyMode::Merge))
        .carry_out()
        .unwrap();
    let parents = project.run_git(&["log", "-1", "--format=%P"]);
    assert_eq!(parents.trim(), format!("{before} {tip}"));
    assert_eq!(project.read("a.txt"), "a\n");
}

#[test]
fn a_merge_that_conflicts_is_aborted_and_moves_nothing() {
    let project = TempProject::git();
    let state = tempfile::tempdir().unwrap();
    let (id, opened) = open(&project, &StateDir::at(state.path()), false);
    work(&opened, "README.md", "theirs\n");
    project.write("README.md", "mine\n");
    project.commit_all("mine");
    let mine = project.head();
    let err = plan(&id, &project, &opened, Landing::Mode(ApplyMode::Merge))
        .carry_out()
        .unwrap_err();
    assert!(err.to_string().contains("aborted"), "{err}");
    assert_eq!(project.head(), mine);
    assert_eq!(project.read("README.md"), "mine\n");
    assert_eq!(project.run_git(&["status", "--porcelain"]), "");
}

#[test]
fn integrate_denied_parks_the_work_at_a_ref() {
    let project = TempProject::git();
    let state = tempfile::tempdir().unwrap();
    let (id, opened) = open(&project, &StateDir::at(state.path()), false);
    work(&opened, "a.txt", "a\n");
    let tip = git(&opened.dir, &["rev-parse", "HEAD"]);
    let before = project.head();
    let plan = plan(
        &id,
        &project,
        &opened,
        Landing::new(ApplyMode::Merge, false),
    );
    let text = plan.describe();
    assert!(text.contains("workspace.integrate is deny"), "{text}");
    assert!(text.contains(&parked_ref(id.as_str())), "{text}");
    let applied = plan.carry_out().unwrap();
    assert_eq!(applied.target, parked_ref(id.as_str()));
    assert_eq!(
        project
            .run_git(&["rev-parse", &parked_ref(id.as_str())])
            .trim(),
        tip
    );
    assert_eq!(project.head(), before);
}

#[test]
fn uncommitted_work_in_the_workspace_is_refused_with_the_command() {
    let project = TempProject::git();
    let state = tempfile::tempdir().unwrap();
    let (id, opened) = open(&project, &StateDir::at(state.path()), false);
    work(&opened, "a.txt", "a\n");
    std::fs::write(opened.dir.join("b.txt"), "b\n").unwrap();
    let err = ApplyPlan::new(
        id.as_str(),
        project.path(),
        &opened.paths,
        &opened.branch,
        &opened.commit,
        Landing::Mode(ApplyMode::FastForward),
    )
    .unwrap_err();
    assert!(err.to_string().contains("b.txt"), "{err}");
    assert!(err.to_string().contains("commit"), "{err}");
}

#[test]
fn the_apply_mode_is_read_from_chock_zon() {
    let project = TempProject::new();
    assert_eq!(
        ApplyMode::for_project(project.path()).unwrap(),
        ApplyMode::FastForward
    );
    project.write_chock_zon(".{ .apply = .{ .mode = .rebase }, .policy = .{} }\n");
    assert_eq!(
        ApplyMode::for_project(project.path()).unwrap(),
        ApplyMode::Rebase
    );
    project.write_chock_zon(".{ .apply = .{ .mode = .sideways } }\n");
    let err = ApplyMode::for_project(project.path()).unwrap_err();
    assert!(err.to_string().contains(".fast_forward"), "{err}");
}
