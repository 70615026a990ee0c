//! The escape suite's git section: what a sandboxed command writes in its
//! git metadata never steers the host (docs/sandbox.md, "What the sandbox
//! can write, and why the host never trusts it").
//!
//! Each attempt runs a real session whose first command commits a file and
//! then plants something in the git metadata it can reach, and shows in
//! its own output that the plant took (the positive control: git inside
//! reads it). Then every host action that reads a workspace's git runs:
//! the session's next command, `chock run --continue` and its command, an
//! adopt after a handover and its command, `chock workspace list`, `show`,
//! `diff`, `apply` and `discard`. None may
//! read, write or run anything outside the workspace: the markers a
//! planted command would leave stay absent, a host file stays unread and
//! unchanged, no later sandbox sees the directory a plant named, and the
//! session's own commit still lands in the person's repository. Attempts
//! that a command cannot make from inside (its `.git` file is read-only
//! there) are planted on the host, as an older Chock let commands do,
//! with a naive git on the host as the control.
//!
//! `the_git_section_holds_for_an_unprivileged_user` reruns the section as
//! `chocktest` when the suite runs as root.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use chock_log::{SessionId, StateDir};
use chock_testkit::{FakeModel, Reply, TempProject, Turn, Wire};
use serde_json::{Value, json};

use super::chock;
use super::kit::{chock_out, log_values, of_call, sessions, write_config};

/// A directory outside every workspace: what a plant aims at.
struct Outside {
    dir: PathBuf,
}

impl Outside {
    fn new(root: &Path) -> Outside {
        let dir = root.join("outside");
        std::fs::create_dir_all(dir.join("objects")).unwrap();
        std::fs::write(dir.join("secret"), "host secret\n").unwrap();
        Outside { dir }
    }

    fn marker(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }

    /// Nothing was written here, and the secret is as it was.
    fn untouched(&self, context: &str) {
        let mut names: Vec<String> = std::fs::read_dir(&self.dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["objects", "secret"], "{context}");
        assert_eq!(
            std::fs::read_dir(self.dir.join("objects")).unwrap().count(),
            0,
            "{context}"
        );
        assert_eq!(
            std::fs::read_to_string(self.dir.join("secret")).unwrap(),
            "host secret\n",
            "{context}"
        );
    }
}

fn run_command(id: &str, script: &str) -> Reply {
    Turn::text("")
        .call(
            id,
            "run_command",
            &json!({ "command": ["sh", "-c", script] }),
        )
        .into()
}

fn output(events: &[Value], call: &str) -> String {
    of_call(events, "tool.result", call).unwrap_or_else(|| panic!("no result for {call}"))["output"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn show(out: &std::process::Output) -> String {
    format!(
        "exit {:?}\nstdout: {}\nstderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// What a command that looks for the outside directory prints: it must
/// not be there inside any sandbox.
fn looks_outside(outside: &Outside) -> String {
    format!(
        "ls {0} 2>&1; cat {0}/secret 2>&1; touch {0}/objects/planted 2>&1; echo looked",
        outside.dir.display()
    )
}

fn assert_unseen(text: &str, context: &str) {
    assert!(text.contains("looked"), "{context}: {text}");
    assert!(!text.contains("host secret"), "{context}: {text}");
}

/// A session's commit, a plant and its control, then every host action.
/// `host_plant` runs on the host after the first session, for attempts a
/// command cannot make from inside.
fn attempt(
    plant: &dyn Fn(&Outside, &str) -> String,
    control: &str,
    host_plant: &dyn Fn(&Outside, &Path),
) {
    let root = tempfile::tempdir().unwrap();
    std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let outside = Outside::new(root.path());
    let state = root.path().join("state");
    let project = TempProject::git();
    let session_marker = outside.marker("from-inside");
    // The session's work is committed first; the plant follows in the
    // next command, and the commands after it look for what it named.
    let fake = FakeModel::with([
        run_command(
            "c1",
            "echo work > work.txt && git add work.txt && git commit -qm 'the session work' && echo committed",
        ),
        run_command("c2", &plant(&outside, &session_marker)),
        run_command("c3", &looks_outside(&outside)),
        Turn::text("Done.").into(),
        run_command(
            "c4",
            &format!(
                "{}; git checkout -q -- . 2>/dev/null; true",
                looks_outside(&outside)
            ),
        ),
        Turn::text("Done again.").into(),
        run_command("c5", &looks_outside(&outside)),
        Turn::text("Done after the handover.").into(),
    ]);
    write_config(&state, &fake.config_zon(Wire::OpenAi, "m"));
    let p = project.path().to_str().unwrap();
    let out = chock(&state).args(["run", p, "work"]).output().unwrap();
    assert!(out.status.success(), "{}", show(&out));
    let id = sessions(&state).remove(0);
    let sid = id.as_str().to_owned();
    let st = StateDir::at(&state);
    let events = log_values(&st.log_path(&id));
    assert!(output(&events, "c1").contains("committed"), "{events:#?}");
    let planted = output(&events, "c2");
    assert!(
        planted.contains(control),
        "the plant did not take: {planted}"
    );
    // What the plant changed in the sandbox's git directory is named in a
    // notice: the session says what it ignored, and why.
    let script = plant(&outside, &session_marker);
    if script.contains(GIT) || script.contains("git config") {
        let said: Vec<&str> = events
            .iter()
            .filter(|e| e["type"] == "notice")
            .filter_map(|e| e["text"].as_str())
            .filter(|t| t.contains("the sandbox's git"))
            .collect();
        assert!(!said.is_empty(), "no notice names the plant: {events:#?}");
    }
    assert_unseen(&output(&events, "c3"), "the next command");
    outside.untouched("after the session's own commands");
    // A workspace left with the plant's uncommitted files is read too.
    for args in [
        vec!["workspace", "show", &sid],
        vec!["workspace", "diff", &sid],
    ] {
        let out = chock(&state).args(&args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", show(&out));
        outside.untouched(&format!("after {args:?} of the ended session"));
    }

    host_plant(&outside, &st.workspace_dir(&id));

    let out = chock_out(&state, &["run", "--continue", &sid, "again"]);
    assert!(out.status.success(), "{}", show(&out));
    let events = log_values(&st.log_path(&id));
    assert_unseen(&output(&events, "c4"), "a command after --continue");
    outside.untouched("after --continue");

    // A handover, as `chock detach` leaves it, then the daemon's adopt.
    let mut writer = chock_log::LogWriter::open(st.log_path(&id)).unwrap();
    writer
        .append(chock_log::event::SessionEnd {
            reason: chock_log::event::EndReason::Handover,
            detail: "handed to the daemon".to_owned(),
        })
        .unwrap();
    drop(writer);
    let out = chock_out(&state, &["run", "--adopt", &sid, "once more"]);
    assert!(out.status.success(), "{}", show(&out));
    let events = log_values(&st.log_path(&id));
    assert_unseen(&output(&events, "c5"), "a command after an adopt");
    outside.untouched("after an adopt");

    for args in [
        vec!["workspace", "list"],
        vec!["workspace", "show", &sid],
        vec!["workspace", "diff", &sid],
    ] {
        let out = chock(&state).args(&args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", show(&out));
        outside.untouched(&format!("after {args:?}"));
    }
    let apply = chock_out(&state, &["workspace", "apply", "--yes", &sid]);
    assert!(apply.status.success(), "{}", show(&apply));
    outside.untouched("after apply");
    // The session's own commit lands, with what it left uncommitted (a
    // plant's edit), which the session's end committed on its branch.
    let landed = project.read("work.txt");
    assert!(
        landed.starts_with("work\n"),
        "the session's own commit lands: {landed}"
    );
    assert_eq!(
        landed,
        std::fs::read_to_string(st.workspace_dir(&id).join("work.txt")).unwrap(),
        "what lands is what the workspace holds"
    );
    let discard = chock_out(&state, &["workspace", "discard", &sid]);
    assert!(discard.status.success(), "{}", show(&discard));
    outside.untouched("after discard");
}

fn nothing_on_the_host(_: &Outside, _: &Path) {}

/// The private git directory, as a command sees it.
const GIT: &str = "/run/chock/git";

/// A planted key and the naive read inside that shows it took. git hands
/// such a command arguments; the `#` keeps them from naming files.
fn plant_config(key: &str, value: &str) -> String {
    format!("git config {key} '{value} #' && git config --get {key}")
}

#[test]
fn head_with_dot_dot_names_no_bind() {
    attempt(
        &|o, _| {
            format!(
                "printf 'ref: refs/../../../../../../../..{}\\n' > {GIT}/HEAD; cat {GIT}/HEAD",
                o.dir.display()
            )
        },
        "ref: refs/../",
        &nothing_on_the_host,
    );
}

#[test]
fn head_with_an_absolute_path_names_no_bind() {
    attempt(
        &|o, _| {
            format!(
                "printf 'ref: {}\\n' > {GIT}/HEAD; cat {GIT}/HEAD",
                o.dir.display()
            )
        },
        "outside",
        &nothing_on_the_host,
    );
}

#[test]
fn commondir_with_dot_dot_binds_no_objects() {
    attempt(
        &|o, _| {
            format!(
                "printf '../../../../../../../..{}\\n' > {GIT}/commondir; cat {GIT}/commondir",
                o.dir.display()
            )
        },
        "outside",
        &nothing_on_the_host,
    );
}

#[test]
fn commondir_with_an_absolute_path_binds_no_objects() {
    attempt(
        &|o, _| {
            format!(
                "echo {} > {GIT}/commondir; cat {GIT}/commondir",
                o.dir.display()
            )
        },
        "outside",
        &nothing_on_the_host,
    );
}

#[test]
fn the_checkout_pointer_cannot_be_rewritten_inside() {
    // The control: the workspace's root is writable, its `.git` is not.
    attempt(
        &|o, _| {
            format!(
                "echo x > beside-git && rm beside-git && echo root-writable; echo 'gitdir: {}' > .git || echo pointer-refused",
                o.dir.display()
            )
        },
        "root-writable",
        &nothing_on_the_host,
    );
}

/// A git directory on the host whose config runs a command for every key
/// the host's git could act on, and has a hook.
fn hostile_git_dir(o: &Outside, name: &str) -> PathBuf {
    let evil = o.dir.parent().unwrap().join(name);
    let marker = o.dir.join("from-host-git");
    let m = marker.display();
    let init = Command::new("git")
        .args(["init", "-q", "--bare"])
        .arg(&evil)
        .status()
        .unwrap();
    assert!(init.success());
    std::fs::write(
        evil.join("config"),
        format!(
            "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = \"touch {m}\"\n\thooksPath = {hooks}\n\tsshCommand = \"touch {m}\"\n\tpager = \"touch {m}\"\n[diff]\n\texternal = \"touch {m}\"\n[filter \"evil\"]\n\tclean = \"touch {m}\"\n\tsmudge = \"touch {m}\"\n",
            hooks = evil.join("hooks").display()
        ),
    )
    .unwrap();
    for hook in [
        "post-checkout",
        "post-merge",
        "pre-rebase",
        "post-rewrite",
        "reference-transaction",
    ] {
        let path = evil.join("hooks").join(hook);
        std::fs::write(&path, format!("#!/bin/sh\ntouch {m}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    evil
}

/// The naive control: a plain `git` on the host in the workspace reads the
/// plant.
fn naive_git_reads(workspace: &Path, key: &str) {
    let out = Command::new("git")
        .args(["config", "--get", key])
        .current_dir(workspace)
        .output()
        .unwrap();
    assert!(
        out.status.success() && !out.stdout.is_empty(),
        "the plant would not be read by a naive git: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn gitdir_rewritten_with_an_absolute_path_on_the_host_steers_no_host_git() {
    attempt(
        &|_, _| "echo planted-later".to_owned(),
        "planted-later",
        &|o, ws| {
            let evil = hostile_git_dir(o, "evil-abs");
            std::fs::write(ws.join(".git"), format!("gitdir: {}\n", evil.display())).unwrap();
            naive_git_reads(ws, "core.fsmonitor");
        },
    );
}

#[test]
fn gitdir_rewritten_with_dot_dot_on_the_host_steers_no_host_git() {
    attempt(
        &|_, _| "echo planted-later".to_owned(),
        "planted-later",
        &|o, ws| {
            hostile_git_dir(o, "evil-rel");
            let depth = ws.components().count();
            let up = "../".repeat(depth);
            let target = o.dir.parent().unwrap().join("evil-rel");
            let rel = format!(
                "{up}{}",
                target.display().to_string().trim_start_matches('/')
            );
            std::fs::write(ws.join(".git"), format!("gitdir: {rel}\n")).unwrap();
            naive_git_reads(ws, "core.fsmonitor");
        },
    );
}

#[test]
fn commondir_of_the_hosts_worktree_record_rewritten_steers_no_host_git() {
    // An older Chock bound the worktree's own git directory writable; one
    // a command rewrote then is no pointer for the host now either.
    attempt(
        &|_, _| "echo planted-later".to_owned(),
        "planted-later",
        &|o, ws| {
            let evil = hostile_git_dir(o, "evil-common");
            let pointer = std::fs::read_to_string(ws.join(".git")).unwrap();
            let own = PathBuf::from(pointer.trim().strip_prefix("gitdir: ").unwrap());
            std::fs::write(own.join("commondir"), format!("{}\n", evil.display())).unwrap();
            std::fs::copy(evil.join("config"), own.join("config.worktree")).unwrap();
            naive_git_reads(ws, "core.fsmonitor");
        },
    );
}

#[test]
fn a_symlinked_refs_directory_is_not_followed() {
    attempt(
        &|o, _| {
            format!(
                "b=$(git symbolic-ref --short HEAD); mv {GIT}/refs/heads/chock {GIT}/chock-refs; ln -s {} {GIT}/refs/heads/chock; ls -l {GIT}/refs/heads",
                o.dir.display()
            )
        },
        "->",
        &nothing_on_the_host,
    );
}

#[test]
fn a_symlinked_branch_ref_is_not_followed() {
    attempt(
        &|o, _| {
            format!(
                "b=$(git symbolic-ref HEAD); ln -sf {}/secret {GIT}/$b; ls -l {GIT}/$b",
                o.dir.display()
            )
        },
        "secret",
        &nothing_on_the_host,
    );
}

#[test]
fn a_packed_refs_line_naming_a_path_is_refused() {
    attempt(
        &|o, _| {
            format!(
                "b=$(git symbolic-ref HEAD); rm {GIT}/$b; echo '../../../..{} '$b >> {GIT}/packed-refs; tail -1 {GIT}/packed-refs",
                o.dir.display()
            )
        },
        "outside",
        &nothing_on_the_host,
    );
}

#[test]
fn core_fsmonitor_planted_in_the_git_config_runs_nowhere_on_the_host() {
    attempt(
        &|_, m| plant_config("core.fsmonitor", &format!("touch {m}")),
        "touch",
        &nothing_on_the_host,
    );
}

#[test]
fn core_hooks_path_and_a_hook_planted_run_nowhere_on_the_host() {
    attempt(
        &|_, m| {
            format!(
                "mkdir -p {GIT}/hooks && printf '#!/bin/sh\\ntouch {m}\\n' > {GIT}/hooks/post-checkout && chmod +x {GIT}/hooks/post-checkout && cp {GIT}/hooks/post-checkout {GIT}/hooks/post-merge && {}",
                plant_config("core.hooksPath", &format!("{GIT}/hooks"))
            )
        },
        "/run/chock/git/hooks",
        &nothing_on_the_host,
    );
}

#[test]
fn diff_external_planted_runs_nowhere_on_the_host() {
    attempt(
        &|_, m| plant_config("diff.external", &format!("touch {m}")),
        "touch",
        &nothing_on_the_host,
    );
}

#[test]
fn a_clean_and_smudge_filter_planted_runs_nowhere_on_the_host() {
    attempt(
        &|_, m| {
            format!(
                "echo '* filter=evil' > .gitattributes && git add .gitattributes && git commit -qm attrs && echo more >> work.txt && git config filter.evil.smudge 'touch {m} #' && {}",
                plant_config("filter.evil.clean", &format!("touch {m}"))
            )
        },
        "touch",
        &nothing_on_the_host,
    );
}

#[test]
fn core_ssh_command_planted_runs_nowhere_on_the_host() {
    attempt(
        &|_, m| {
            format!(
                "git remote set-url origin ssh://localhost/x 2>/dev/null || git remote add origin ssh://localhost/x; {}",
                plant_config("core.sshCommand", &format!("touch {m}"))
            )
        },
        "touch",
        &nothing_on_the_host,
    );
}

#[test]
fn the_git_section_holds_for_an_unprivileged_user() {
    let Some((passed, _)) = super::rerun_unprivileged(&[
        "suite::git_metadata::",
        "--test-threads=2",
        "--skip",
        "unprivileged_user",
    ]) else {
        return;
    };
    assert!(passed >= 12, "only {passed} attempts ran unprivileged");
}

/// Not an attack: a command that packs its objects (`git gc`) still has its
/// commit brought back, from the pack, indexed again on the host.
#[test]
fn a_commit_packed_by_gc_inside_is_brought_back() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let (id, events) = session_of(
        state.path(),
        &project,
        &[
            "echo packed > packed.txt && git add packed.txt && git commit -qm packed && git gc -q && ls /run/chock/git/objects/pack && echo gc-done",
        ],
    );
    let ran = output(&events, "c0");
    assert!(ran.contains("gc-done") && ran.contains(".pack"), "{ran}");
    let branch = format!("chock/{}", id.as_str());
    assert_eq!(
        project
            .run_git(&["log", "-1", "--format=%s", &branch])
            .trim(),
        "packed"
    );
}

/// A session of `scripts`, one `run_command` each; its log's events.
fn session_of(state: &Path, project: &TempProject, scripts: &[&str]) -> (SessionId, Vec<Value>) {
    let mut replies: Vec<Reply> = scripts
        .iter()
        .enumerate()
        .map(|(n, script)| run_command(&format!("c{n}"), script))
        .collect();
    replies.push(Turn::text("Done.").into());
    let fake = FakeModel::with(replies);
    write_config(state, &fake.config_zon(Wire::OpenAi, "m"));
    let out = chock(state)
        .arg("run")
        .arg(project.path())
        .arg("commit")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", show(&out));
    let id = sessions(state).remove(0);
    let events = log_values(&StateDir::at(state).log_path(&id));
    (id, events)
}

/// What `git count-objects -v` says of the person's repository for `key`.
fn count_objects(project: &TempProject, key: &str) -> u64 {
    let text = project.run_git(&["count-objects", "-v"]);
    text.lines()
        .find_map(|line| line.strip_prefix(&format!("{key}: ")))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no {key} in {text}"))
}

/// A commit of a few objects comes back as loose objects, so a long
/// session's imports do not leave a pack each for every later git command
/// to open; one of a hundred objects or more comes back as one pack.
#[test]
fn few_objects_come_back_loose_and_many_as_one_pack() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let packs = count_objects(&project, "packs");
    let (id, events) = session_of(
        state.path(),
        &project,
        &[
            "echo one > one.txt && git add one.txt && git commit -qm one && echo one-done",
            "echo two > two.txt && git add two.txt && git commit -qm two && echo two-done",
            "mkdir many && for i in $(seq 120); do echo $i > many/$i; done && git add many && git commit -qm many && echo many-done",
        ],
    );
    assert!(output(&events, "c2").contains("many-done"));
    let branch = format!("chock/{}", id.as_str());
    let subjects = project.run_git(&["log", "-3", "--format=%s", &branch]);
    assert_eq!(subjects.lines().collect::<Vec<_>>(), ["many", "two", "one"]);
    assert_eq!(count_objects(&project, "packs"), packs + 1);
    project.run_git(&["fsck", "--strict", "--no-dangling"]);
}

/// A commit git's own checks refuse (here one with no author) is not
/// brought back, small import or not: the session says why and the branch
/// stays where it was.
#[test]
fn a_commit_git_would_refuse_is_not_brought_back() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    let (id, events) = session_of(
        state.path(),
        &project,
        &[concat!(
            "tree=$(git write-tree) && parent=$(git rev-parse HEAD) && ",
            "printf 'tree %s\\nparent %s\\ncommitter a <a@a> 0 +0000\\n\\nno author\\n' $tree $parent > /tmp/c && ",
            "git update-ref HEAD $(git hash-object -t commit -w --literally /tmp/c) && echo planted"
        )],
    );
    assert!(output(&events, "c0").contains("planted"));
    let said: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "notice")
        .filter_map(|e| e["text"].as_str())
        .collect();
    assert!(
        said.iter().any(
            |text| text.contains("could not be brought back (unpack-objects)")
                && text.contains("missingAuthor")
        ),
        "{said:?}"
    );
    let branch = format!("chock/{}", id.as_str());
    assert_eq!(
        project.run_git(&["rev-parse", &branch]),
        project.run_git(&["rev-parse", "HEAD"])
    );
}
