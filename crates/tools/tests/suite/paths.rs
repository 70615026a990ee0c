//! Confinement: no tool reaches outside the workspace, by `..`, by an
//! absolute path or by a symlink, and none writes into `.git`.

use std::os::unix::fs::symlink;

use chock_testkit::TempProject;
use chock_tools::{self as tools, Workspace};
use pretty_assertions::assert_eq;
use serde_json::json;

struct Setup {
    project: TempProject,
    outside: TempProject,
    ws: Workspace,
}

fn setup() -> Setup {
    let project = TempProject::git();
    let outside = TempProject::new();
    outside.write("secret.txt", "the secret\n");
    project.write("inner/ok.txt", "fine\n");
    symlink(outside.path(), project.join("escape")).unwrap();
    symlink(outside.join("secret.txt"), project.join("secret-link")).unwrap();
    symlink(project.join("inner/ok.txt"), project.join("inner-link")).unwrap();
    symlink(outside.join("not-there.txt"), project.join("dangling")).unwrap();
    let ws = Workspace::new(project.path()).unwrap();
    Setup {
        project,
        outside,
        ws,
    }
}

fn run(setup: &Setup, name: &str, args: &serde_json::Value) -> tools::ToolOutput {
    tools::run(name, &setup.ws, &args.to_string())
}

#[test]
fn dot_dot_and_absolute_paths_outside_are_refused() {
    let s = setup();
    let secret = s.outside.join("secret.txt").display().to_string();
    for path in ["../x", "inner/../../x", &secret, "/etc/passwd"] {
        let out = run(&s, "read_file", &json!({ "path": path }));
        assert!(out.is_error, "{path}");
        assert_eq!(
            out.text,
            format!(
                "'{path}' is outside the workspace: tools can only reach files under the workspace root; give a path relative to it"
            )
        );
    }
}

#[test]
fn dot_dot_that_stays_inside_is_fine() {
    let s = setup();
    let out = run(&s, "read_file", &json!({"path": "inner/../inner/ok.txt"}));
    assert_eq!(out.text, "fine\n");
    let abs = s.project.join("inner/ok.txt").display().to_string();
    assert_eq!(run(&s, "read_file", &json!({ "path": abs })).text, "fine\n");
}

#[test]
fn symlinks_out_of_the_workspace_are_refused_for_every_tool() {
    let s = setup();
    let calls = [
        ("read_file", json!({"path": "secret-link"})),
        ("read_file", json!({"path": "escape/secret.txt"})),
        ("list_directory", json!({"path": "escape"})),
        ("glob", json!({"pattern": "*", "path": "escape"})),
        ("grep", json!({"pattern": "secret", "path": "escape"})),
        (
            "write_file",
            json!({"path": "escape/new.txt", "content": "x"}),
        ),
        (
            "write_file",
            json!({"path": "secret-link", "content": "overwritten"}),
        ),
        (
            "edit_file",
            json!({"path": "secret-link", "old_text": "the", "new_text": "a"}),
        ),
        ("read_guidance", json!({"path": "escape"})),
    ];
    for (name, args) in calls {
        let out = run(&s, name, &args);
        assert!(out.is_error, "{name} {args}: {}", out.text);
        assert!(
            out.text
                .contains("symlink that points outside the workspace"),
            "{name}: {}",
            out.text
        );
    }
    assert_eq!(
        s.outside.read("secret.txt"),
        "the secret\n",
        "nothing outside changed"
    );
    assert!(!s.outside.join("new.txt").exists());
}

#[test]
fn a_dangling_symlink_is_not_written_through() {
    let s = setup();
    let out = run(
        &s,
        "write_file",
        &json!({"path": "dangling", "content": "x"}),
    );
    assert!(out.is_error);
    assert_eq!(
        out.text,
        "'dangling' is a symlink whose target does not exist"
    );
    assert!(!s.outside.join("not-there.txt").exists());
}

#[test]
fn walks_do_not_follow_symlinked_directories_out() {
    let s = setup();
    let out = run(&s, "grep", &json!({"pattern": "secret"}));
    assert_eq!(out.text, "no line under '.' matches 'secret'\n");
    let globbed = run(&s, "glob", &json!({"pattern": "**/*.txt"}));
    assert_eq!(globbed.text, "inner/ok.txt\n");
    let top = run(&s, "glob", &json!({"pattern": "*"}));
    assert_eq!(
        top.text, "README.md\ninner/\ninner-link\n",
        "links out are left out"
    );
}

#[test]
fn symlinks_inside_the_workspace_are_followed() {
    let s = setup();
    assert_eq!(
        run(&s, "read_file", &json!({"path": "inner-link"})).text,
        "fine\n"
    );
}

#[test]
fn the_git_directory_is_not_written() {
    let s = setup();
    let before = s.project.read(".git/HEAD");
    let out = run(
        &s,
        "write_file",
        &json!({"path": ".git/HEAD", "content": "ref: refs/heads/evil\n"}),
    );
    assert_eq!(
        out.text,
        "'.git/HEAD' is inside .git: the repository's own files are not edited with file tools"
    );
    let edit = run(
        &s,
        "edit_file",
        &json!({"path": "./.git/HEAD", "old_text": "main", "new_text": "evil"}),
    );
    assert!(edit.is_error);
    assert_eq!(s.project.read(".git/HEAD"), before);
}
