//! Workspaces against real git repositories: creation and its refusals,
//! and carrying work back in each apply mode.

use chock_log::event::WorkspaceApply;
use chock_log::{SessionId, StateDir};
use chock_runner::workspace::{
    ApplyMode, ApplyPlan, CreateOptions, Landing, Opened, WorkspaceError, create, parked_ref,
};
use chock_testkit::{TempProject, git};
use pretty_assertions::assert_eq;
use tempfile::TempDir;

/// Git's trimmed stdout in `dir`.
fn git_line(dir: &std::path::Path, args: &[&str]) -> String {
    git(dir, args).trim().to_owned()
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

/// Opening a workspace on `project` with a fresh state directory and
/// session, which must fail.
fn refused(project: &TempProject) -> (TempDir, WorkspaceError) {
    let state = tempfile::tempdir().unwrap();
    let err = try_open(
        project,
        &StateDir::at(state.path()),
        &SessionId::new(),
        false,
    )
    .unwrap_err();
    (state, err)
}

/// A workspace opened on a fresh git project, with its state directory.
struct Session {
    project: TempProject,
    /// Holds the workspace: it is deleted when this is dropped.
    state: TempDir,
    id: SessionId,
    opened: Opened,
}

impl Session {
    /// A fresh git project with a workspace opened on it.
    fn open() -> Self {
        Self::open_on(TempProject::git(), false)
    }

    /// A workspace opened on `project`.
    fn open_on(project: TempProject, allow_dirty: bool) -> Self {
        let state = tempfile::tempdir().unwrap();
        let id = SessionId::new();
        let opened = try_open(&project, &StateDir::at(state.path()), &id, allow_dirty).unwrap();
        Self {
            project,
            state,
            id,
            opened,
        }
    }

    /// A workspace in which the agent has committed `a.txt`.
    fn with_work() -> Self {
        let session = Self::open();
        session.work("a.txt", "a\n");
        session
    }

    /// The agent's work: one file, one commit, in the workspace.
    fn work(&self, file: &str, text: &str) {
        std::fs::write(self.opened.dir.join(file), text).unwrap();
        git(&self.opened.dir, &["add", "-A"]);
        git(
            &self.opened.dir,
            &["commit", "-q", "-m", &format!("write {file}")],
        );
    }

    /// The person's own work: `file` committed on their branch; the new head.
    fn mine(&self, file: &str, text: &str, message: &str) -> String {
        self.project.write(file, text);
        self.project.commit_all(message);
        self.project.head()
    }

    /// The workspace's head commit.
    fn tip(&self) -> String {
        git_line(&self.opened.dir, &["rev-parse", "HEAD"])
    }

    /// Carries the work back in `mode`.
    fn apply(&self, mode: ApplyMode) -> Result<WorkspaceApply, WorkspaceError> {
        self.plan(Landing::Mode(mode)).carry_out()
    }

    /// The plan for carrying the work back to the project as `landing` says.
    fn plan(&self, landing: Landing) -> ApplyPlan {
        ApplyPlan::new(
            self.id.as_str(),
            &self.project.path().canonicalize().unwrap(),
            &self.opened.paths,
            &self.opened.branch,
            &self.opened.commit,
            landing,
        )
        .unwrap()
    }
}

#[test]
fn a_workspace_is_a_worktree_on_its_own_branch_at_head() {
    let Session {
        project,
        state,
        id,
        opened,
    } = Session::open();
    assert_eq!(opened.dir, StateDir::at(state.path()).workspace_dir(&id));
    assert_eq!(opened.branch, format!("chock/{}", id.as_str()));
    assert_eq!(opened.commit, project.head());
    assert_eq!(
        git_line(&opened.dir, &["rev-parse", "HEAD"]),
        project.head()
    );
    assert_eq!(
        git_line(&opened.dir, &["symbolic-ref", "--short", "HEAD"]),
        opened.branch
    );
    assert!(opened.dir.join("README.md").is_file());
    let event = opened.event();
    assert_eq!(event.dir, opened.dir);
    assert_eq!(event.branch.as_deref(), Some(opened.branch.as_str()));
}

#[test]
fn a_directory_that_is_not_a_repository_is_refused_with_what_to_do() {
    let (state, err) = refused(&TempProject::new());
    assert!(matches!(err, WorkspaceError::NotARepo { .. }), "{err}");
    assert!(err.to_string().contains("git init"), "{err}");
    assert!(!state.path().join("workspaces").exists());
}

#[test]
fn a_detached_head_is_refused() {
    let project = TempProject::git();
    let head = project.head();
    project.run_git(&["checkout", "--quiet", "--detach"]);
    let text = refused(&project).1.to_string();
    assert!(text.contains(&format!("detached at {head}")), "{text}");
    assert!(text.contains("git switch"), "{text}");
}

#[test]
fn a_dirty_tree_without_allow_dirty_is_refused_and_left_alone() {
    let project = TempProject::git();
    project.write("README.md", "changed\n");
    project.write("new.txt", "new\n");
    let status = project.run_git(&["status", "--porcelain"]);
    let text = refused(&project).1.to_string();
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
    let Session {
        project,
        state: _state,
        opened,
        ..
    } = Session::open_on(project, true);
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
    let session = Session::with_work();
    let before = session.project.head();
    let plan = session.plan(Landing::Mode(ApplyMode::Branch));
    assert!(plan.describe().contains("no branch of yours moves"));
    let applied = plan.carry_out().unwrap();
    assert_eq!(applied.target, session.opened.branch);
    assert_eq!(session.project.head(), before);
}

#[test]
fn apply_fast_forward_moves_your_branch_and_your_files() {
    let session = Session::with_work();
    let tip = session.tip();
    let plan = session.plan(Landing::Mode(ApplyMode::FastForward));
    let text = plan.describe();
    assert!(text.starts_with("Fast-forward your branch main"), "{text}");
    assert!(text.contains("write a.txt"), "{text}");
    let applied = plan.carry_out().unwrap();
    assert_eq!(applied.target, "main");
    assert_eq!(session.project.head(), tip);
    assert_eq!(session.project.read("a.txt"), "a\n");
}

#[test]
fn apply_fast_forward_refuses_when_your_branch_moved_on() {
    let session = Session::with_work();
    let mine = session.mine("mine.txt", "mine\n", "my own work");
    let err = session.apply(ApplyMode::FastForward).unwrap_err();
    assert!(err.to_string().contains("moved on"), "{err}");
    assert_eq!(session.project.head(), mine);
}

#[test]
fn apply_rebase_replays_the_work_on_your_branch() {
    let session = Session::with_work();
    let mine = session.mine("mine.txt", "mine\n", "my own work");
    let applied = session.apply(ApplyMode::Rebase).unwrap();
    let project = &session.project;
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
    let session = Session::with_work();
    let tip = session.tip();
    let before = session.project.head();
    session.apply(ApplyMode::Merge).unwrap();
    let parents = session.project.run_git(&["log", "-1", "--format=%P"]);
    assert_eq!(parents.trim(), format!("{before} {tip}"));
    assert_eq!(session.project.read("a.txt"), "a\n");
}

#[test]
fn a_merge_that_conflicts_is_aborted_and_moves_nothing() {
    let session = Session::open();
    session.work("README.md", "theirs\n");
    let mine = session.mine("README.md", "mine\n", "mine");
    let err = session.apply(ApplyMode::Merge).unwrap_err();
    let project = &session.project;
    assert!(err.to_string().contains("aborted"), "{err}");
    assert_eq!(project.head(), mine);
    assert_eq!(project.read("README.md"), "mine\n");
    assert_eq!(project.run_git(&["status", "--porcelain"]), "");
}

#[test]
fn integrate_denied_parks_the_work_at_a_ref() {
    let session = Session::with_work();
    let tip = session.tip();
    let before = session.project.head();
    let parked = parked_ref(session.id.as_str());
    let plan = session.plan(Landing::new(ApplyMode::Merge, false));
    let text = plan.describe();
    assert!(text.contains("workspace.integrate is deny"), "{text}");
    assert!(text.contains(&parked), "{text}");
    let applied = plan.carry_out().unwrap();
    assert_eq!(applied.target, parked);
    assert_eq!(session.project.run_git(&["rev-parse", &parked]).trim(), tip);
    assert_eq!(session.project.head(), before);
}

#[test]
fn uncommitted_work_in_the_workspace_is_refused_with_the_command() {
    let Session {
        project,
        state: _state,
        id,
        opened,
    } = Session::with_work();
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
