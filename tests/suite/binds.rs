//! Workspace binds in a real session: a project's chock.zon names paths
//! outside the worktree in each of the four modes, the fake model runs
//! commands against them in the sandbox, and the host's directories show
//! what reached them; a copy bind's changes come back only through an
//! approved `chock workspace apply`, and an org deny refuses the block.

use std::path::Path;

use chock_testkit::TempProject;
use serde_json::{Value, json};

use super::chock;
use super::kit::{
    assert_done, assert_success, fake_model, log_values, of_call, one_call_a_turn, only_log,
};

/// Four directories outside the project, each with one file.
struct Outside {
    dir: tempfile::TempDir,
}

impl Outside {
    fn new() -> Outside {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in [
            ("ro", "read only"),
            ("w", "writable"),
            ("t", "temporary"),
            ("c", "before"),
            ("wask", "asked"),
        ] {
            std::fs::create_dir_all(dir.path().join(name)).unwrap();
            std::fs::write(dir.path().join(name).join("f.txt"), text).unwrap();
        }
        Outside { dir }
    }

    fn path(&self, name: &str) -> std::path::PathBuf {
        self.dir.path().join(name)
    }

    fn read(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.dir.path().join(rel)).ok()
    }
}

fn block(outside: &Outside, rules: &str) -> String {
    let bind = |name: &str, mode: &str| {
        format!(
            "            .{{ .name = \"{name}\", .path = \"{}\", .mode = .{mode} }},\n",
            outside.path(name).display()
        )
    };
    format!(
        ".{{\n    .workspace = .{{\n        .binds = .{{\n{}{}{}{}{}        }},\n    }},\n    .policy = .{{ .rules = .{{\n{rules}    }} }},\n}}\n",
        bind("ro", "read_only"),
        bind("w", "write"),
        bind("t", "temp_copy"),
        bind("c", "copy"),
        bind("wask", "write"),
    )
}

/// Every bind but `wask` allowed, and workspace.apply too.
const ALLOW: &str = "        .{ .action = \"workspace.bind.ro\", .decision = .allow },\n        .{ .action = \"workspace.bind.w\", .decision = .allow },\n        .{ .action = \"workspace.bind.t\", .decision = .allow },\n        .{ .action = \"workspace.bind.c\", .decision = .allow },\n        .{ .action = \"workspace.apply\", .decision = .ask },\n";

fn sh(id: &'static str, script: &str) -> (&'static str, &'static str, Value) {
    (
        id,
        "run_command",
        json!({ "command": ["sh", "-c", script] }),
    )
}

fn output(events: &[Value], call: &str) -> (bool, String) {
    let result = of_call(events, "tool.result", call).unwrap();
    (
        result["ok"].as_bool().unwrap(),
        result["output"].as_str().unwrap().to_owned(),
    )
}

fn session(state: &Path, project: &TempProject, calls: &[(&str, &str, Value)]) -> Vec<Value> {
    let _fake = fake_model(state, one_call_a_turn(calls));
    let out = chock(state)
        .arg("run")
        .arg(project.path())
        .arg("use the binds")
        .output()
        .unwrap();
    assert_success(&out);
    let log = only_log(state);
    assert_done(&log);
    log_values(&log)
}

#[test]
fn binds_in_all_four_modes_reach_the_host_only_as_their_modes_say() {
    let state = tempfile::tempdir().unwrap();
    let outside = Outside::new();
    let escape = outside.path("escaped.txt");
    let project = TempProject::git();
    project.write_chock_zon(&block(&outside, ALLOW));
    project.commit_all("binds");
    let events = session(
        state.path(),
        &project,
        &[
            sh("ro", "cat ro/f.txt && echo x > ro/new.txt"),
            sh("w", "echo written > w/new.txt"),
            sh("t", "echo changed > t/f.txt && cat t/f.txt"),
            sh("c", "echo after > c/f.txt && echo added > c/new.txt"),
            sh("wask", "cat wask/f.txt && echo x > wask/new.txt"),
            sh("out", &format!("echo x > {}", escape.display())),
        ],
    );
    // read_only: readable, and a write fails.
    let (ok, text) = output(&events, "ro");
    assert!(!ok && text.contains("read only"), "{text}");
    assert_eq!(outside.read("ro/new.txt"), None);
    // write: the write lands on the host.
    assert!(output(&events, "w").0);
    assert_eq!(outside.read("w/new.txt").as_deref(), Some("written\n"));
    // temp_copy: changed inside, never outside, and gone at the end.
    let (ok, text) = output(&events, "t");
    assert!(ok && text.contains("changed"), "{text}");
    assert_eq!(outside.read("t/f.txt").as_deref(), Some("temporary"));
    let session_dir = only_log(state.path()).parent().unwrap().to_owned();
    assert!(!session_dir.join("binds/t").exists());
    // copy: changed in the copy only, until an approved apply.
    assert!(output(&events, "c").0);
    assert_eq!(outside.read("c/f.txt").as_deref(), Some("before"));
    assert_eq!(
        std::fs::read_to_string(session_dir.join("binds/c/f.txt")).unwrap(),
        "after\n"
    );
    // write with no allow: read-only.
    let (ok, text) = output(&events, "wask");
    assert!(!ok && text.contains("asked"), "{text}");
    assert_eq!(outside.read("wask/new.txt"), None);
    // A write outside every write bind fails.
    assert!(!output(&events, "out").0);
    assert!(!escape.exists());

    // workspace.open records each bind as it was made.
    let open = events
        .iter()
        .find(|e| e["type"] == "workspace.open")
        .unwrap();
    let made: Vec<(&str, &str, &str)> = open["binds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["name"].as_str().unwrap(),
                b["made"].as_str().unwrap(),
                b["at"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        made,
        [
            ("ro", "read_only", "/workspace/ro"),
            ("w", "read_write", "/workspace/w"),
            ("t", "copy", "/workspace/t"),
            ("c", "copy", "/workspace/c"),
            ("wask", "read_only", "/workspace/wask"),
        ]
    );
    assert_eq!(open["binds"][4]["mode"], "write");
    // The first notice says where each bind is and how.
    let first = events.iter().find(|e| e["type"] == "notice").unwrap();
    assert_eq!(first["subject"], "workspace", "{first}");
    let said = first["text"].as_str().unwrap();
    for line in [
        format!(
            "the bind ro is at /workspace/ro: {} read-only",
            outside.path("ro").display()
        ),
        format!(
            "the bind w is at /workspace/w: {} read-write",
            outside.path("w").display()
        ),
        format!(
            "the bind t is at /workspace/t: a private copy of {} (made now; thrown away when the session ends)",
            outside.path("t").display()
        ),
        format!(
            "the bind wask is at /workspace/wask: {} read-only; a write bind is read-only until workspace.bind.wask answers allow",
            outside.path("wask").display()
        ),
    ] {
        assert!(said.lines().any(|l| l == line), "{line}\n in {said}");
    }
    let decisions: Vec<(&str, &str)> = events
        .iter()
        .filter(|e| e["type"] == "decision")
        .filter_map(|e| Some((e["action"].as_str()?, e["decision"].as_str()?)))
        .filter(|(a, _)| a.starts_with("workspace.bind."))
        .collect();
    assert_eq!(
        decisions,
        [
            ("workspace.bind.ro", "allow"),
            ("workspace.bind.w", "allow"),
            ("workspace.bind.t", "allow"),
            ("workspace.bind.c", "allow"),
            ("workspace.bind.wask", "ask"),
        ]
    );

    // An apply nobody answers carries nothing back.
    let sid = only_log(state.path())
        .parent()
        .unwrap()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let refused = chock(state.path())
        .args(["workspace", "apply", &sid])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let text = String::from_utf8_lossy(&refused.stderr);
    assert!(
        text.contains("The copy bind c changed 2 paths; applying writes them to"),
        "{text}"
    );
    assert!(text.contains("  M f.txt\n  A new.txt"), "{text}");
    assert_eq!(outside.read("c/f.txt").as_deref(), Some("before"));
    // Approved, it does.
    let applied = chock(state.path())
        .args(["workspace", "apply", "--yes", &sid])
        .output()
        .unwrap();
    assert_success(&applied);
    assert_eq!(outside.read("c/f.txt").as_deref(), Some("after\n"));
    assert_eq!(outside.read("c/new.txt").as_deref(), Some("added\n"));
}

#[test]
fn an_org_deny_of_workspace_bind_refuses_every_bind_of_the_block() {
    let state = tempfile::tempdir().unwrap();
    let outside = Outside::new();
    let org = state.path().join("org.zon");
    std::fs::write(
        &org,
        ".{ .policy = .{ .rules = .{ .{ .action = \"workspace.bind.*\", .decision = .deny } } } }\n",
    )
    .unwrap();
    let project = TempProject::git();
    project.write_chock_zon(&block(&outside, ALLOW));
    project.commit_all("binds");
    let _fake = fake_model(
        state.path(),
        one_call_a_turn(&[sh("w", "echo x > w/new.txt")]),
    );
    let out = chock(state.path())
        .env("CHOCK_ORG_BUNDLE", &org)
        .arg("run")
        .arg(project.path())
        .arg("use the binds")
        .output()
        .unwrap();
    assert_success(&out);
    let events = log_values(&only_log(state.path()));
    assert!(!output(&events, "w").0);
    assert_eq!(outside.read("w/new.txt"), None);
    let first = events.iter().find(|e| e["type"] == "notice").unwrap();
    let said = first["text"].as_str().unwrap();
    assert_eq!(said.lines().count(), 5, "{said}");
    assert!(
        said.lines()
            .all(|l| l.contains("is not made: the policy denies workspace.bind.")),
        "{said}"
    );
    assert!(said.contains("org bundle"), "{said}");
}

#[test]
fn a_block_with_a_bad_bind_name_or_two_binds_at_one_target_refuses_the_session_at_its_place() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    project.write_chock_zon(
        ".{\n    .workspace = .{ .binds = .{\n        .{ .name = \"a.b\", .path = \"/tmp\", .mode = .read_only },\n        .{ .name = \"x\", .path = \"/tmp\", .mode = .read_only },\n        .{ .name = \"y\", .path = \"/tmp\", .mode = .write, .at = \"x\" },\n    } },\n}\n",
    );
    project.commit_all("bad binds");
    let _fake = fake_model(state.path(), one_call_a_turn(&[]));
    let out = chock(state.path())
        .arg("run")
        .arg(project.path())
        .arg("hi")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains("chock.zon:3:20: a bind's .name is the <name> of workspace.bind.<name>"),
        "{text}"
    );
    assert!(text.contains(":5:9: a second bind at \"x\" (the bind \"x\" is there): the first is at line 4, column 9"), "{text}");
}

#[test]
fn a_copy_bind_moves_with_the_session_and_a_temp_copy_starts_again() {
    let state = tempfile::tempdir().unwrap();
    let outside = Outside::new();
    let project = TempProject::git();
    project.write_chock_zon(&block(&outside, ALLOW));
    project.commit_all("binds");
    session(
        state.path(),
        &project,
        &[sh(
            "first",
            "echo after > c/f.txt && echo changed > t/f.txt",
        )],
    );
    let log = only_log(state.path());
    let sid = log
        .parent()
        .unwrap()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let _fake = fake_model(
        state.path(),
        one_call_a_turn(&[sh("again", "cat c/f.txt t/f.txt")]),
    );
    let out = chock(state.path())
        .args(["run", "--continue", &sid, "again"])
        .output()
        .unwrap();
    assert_success(&out);
    let events = log_values(&log);
    let (ok, text) = output(&events, "again");
    assert!(ok, "{text}");
    assert!(text.contains("after\ntemporary"), "{text}");
    let said: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "notice" && e["subject"] == "workspace")
        .filter_map(|e| e["text"].as_str())
        .collect();
    assert!(
        said.last().unwrap().lines().any(|l| l
            .starts_with("the bind c is at /workspace/c: a private copy of")
            && l.contains("(carried on from before;")),
        "{said:?}"
    );
    assert_eq!(outside.read("c/f.txt").as_deref(), Some("before"));
    let opens: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "workspace.open")
        .collect();
    assert_eq!(opens.len(), 2);
    assert_eq!(opens[1]["binds"][3]["name"], "c");
    assert_eq!(opens[1]["binds"][3]["made"], "copy");

    // As `chock detach` leaves a session, then the daemon's adopt: the copy
    // is there for the new owner.
    let mut writer = chock_log::LogWriter::open(&log).unwrap();
    writer
        .append(chock_log::event::SessionEnd {
            reason: chock_log::event::EndReason::Handover,
            detail: "handed to the daemon".to_owned(),
        })
        .unwrap();
    drop(writer);
    let _fake = fake_model(
        state.path(),
        one_call_a_turn(&[sh("adopted", "cat c/f.txt")]),
    );
    let out = chock(state.path())
        .args(["run", "--adopt", &sid, "once more"])
        .output()
        .unwrap();
    assert_success(&out);
    let (ok, text) = output(&log_values(&log), "adopted");
    assert!(ok && text.contains("after"), "{text}");
}

#[test]
fn a_link_planted_where_a_bind_goes_stops_the_next_command_and_makes_nothing_outside() {
    let state = tempfile::tempdir().unwrap();
    let outside = Outside::new();
    let target = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    project.write_chock_zon(&format!(
        ".{{\n    .workspace = .{{ .binds = .{{\n        .{{ .name = \"data\", .path = \"{}\", .mode = .read_only, .at = \"deep/data\" }},\n    }} }},\n    .policy = .{{ .rules = .{{ .{{ .action = \"workspace.bind.data\", .decision = .allow }} }} }},\n}}\n",
        outside.path("ro").display()
    ));
    project.commit_all("a bind beneath a directory");
    let events = session(
        state.path(),
        &project,
        &[
            sh("first", "cat deep/data/f.txt"),
            // /oldroot is where the host's root is while the sandbox is
            // made; the bind's own mount point cannot be removed, its
            // parent can be moved aside.
            sh(
                "plant",
                &format!(
                    "mv deep moved && ln -s /oldroot{} deep",
                    target.path().display()
                ),
            ),
            sh("next", "true"),
        ],
    );
    let (ok, text) = output(&events, "first");
    assert!(ok && text.contains("read only"), "{text}");
    let (ok, text) = output(&events, "plant");
    assert!(ok, "{text}");
    let (ok, text) = output(&events, "next");
    assert!(!ok, "{text}");
    assert!(
        text.starts_with("the command was not run: /workspace/deep in the workspace is a symbolic link, and the bind at /workspace/deep/data is placed through it"),
        "{text}"
    );
    assert!(!target.path().join("data").exists());
}
