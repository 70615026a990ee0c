//! The pure tools against real temporary directories: what each does, and
//! that every bad call comes back as an error result the model can read,
//! leaving the files as they were.

use chock_testkit::TempProject;
use chock_tools::{self as tools, Effect, PlanItem, PlanStatus, ToolName, ToolOutput, Workspace};
use pretty_assertions::assert_eq;
use serde_json::json;

fn setup() -> (TempProject, Workspace) {
    let project = TempProject::git();
    project.write("src/main.rs", "fn main() {\n    println!(\"hi\");\n}\n");
    project.write(
        "src/lib.rs",
        "pub fn add(a: u8, b: u8) -> u8 {\n    a + b\n}\n",
    );
    project.write("docs/guide.md", "# Guide\nUse main.\n");
    let workspace = Workspace::new(project.path()).unwrap();
    (project, workspace)
}

fn call(workspace: &Workspace, name: &str, args: &serde_json::Value) -> ToolOutput {
    tools::run(name, workspace, &args.to_string())
}

/// Fails unless `out` is an error result whose text is `text`.
#[track_caller]
fn assert_error(out: &ToolOutput, text: &str) {
    assert!(out.is_error, "{}", out.text);
    assert_eq!(out.text, text);
}

/// Fails, showing the text, unless the text of `out` contains `part`.
#[track_caller]
fn assert_says(out: &ToolOutput, part: &str) {
    assert!(out.text.contains(part), "{}", out.text);
}

#[test]
fn every_tool_has_an_object_schema_and_a_unique_name() {
    let specs = tools::specs();
    let mut names: Vec<_> = specs.iter().map(|spec| spec.name.clone()).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), ToolName::ALL.len());
    for spec in specs {
        assert_eq!(spec.parameters["type"], "object", "{}", spec.name);
        assert!(!spec.description.is_empty());
    }
    assert_eq!(
        ToolName::WriteFile
            .call_action()
            .map(|action| action.to_string())
            .as_deref(),
        Some("call.write_file")
    );
    assert_eq!(ToolName::SetTitle.call_action(), None);
}

#[test]
fn read_file_reads_whole_files_and_line_ranges() {
    let (_project, ws) = setup();
    let whole = call(&ws, "read_file", &json!({"path": "src/main.rs"}));
    assert_eq!(
        whole,
        ToolOutput::ok("fn main() {\n    println!(\"hi\");\n}\n")
    );
    let part = call(
        &ws,
        "read_file",
        &json!({"path": "src/main.rs", "offset": 2, "limit": 1}),
    );
    assert_eq!(
        part.text,
        "    println!(\"hi\");\n\n[lines 2-2 of 3; read on with offset 3]"
    );
    let past = call(
        &ws,
        "read_file",
        &json!({"path": "src/main.rs", "offset": 9}),
    );
    assert_error(&past, "'src/main.rs' has 3 lines; offset 9 is past the end");
}

#[test]
fn read_file_refuses_directories_binaries_and_missing_files_clearly() {
    let (project, ws) = setup();
    std::fs::write(project.join("blob.bin"), [0u8, 1, 2, 3]).unwrap();
    let dir = call(&ws, "read_file", &json!({"path": "src"}));
    assert_eq!(
        dir.text,
        "'src' is a directory; use list_directory to see what is in it"
    );
    let binary = call(&ws, "read_file", &json!({"path": "blob.bin"}));
    assert_eq!(
        binary.text,
        "'blob.bin' is a binary file; read_file reads text"
    );
    let missing = call(&ws, "read_file", &json!({"path": "nope.txt"}));
    assert!(missing.is_error);
    assert!(
        missing.text.starts_with("cannot read 'nope.txt': "),
        "{}",
        missing.text
    );
    assert!(
        missing
            .text
            .ends_with("list_directory or glob shows what exists")
    );
}

#[test]
fn wrong_typed_arguments_are_an_error_result_naming_the_problem() {
    let (project, ws) = setup();
    let out = call(
        &ws,
        "write_file",
        &json!({"path": "src/main.rs", "content": 42}),
    );
    assert_error(
        &out,
        "the arguments for write_file are not valid: invalid type: integer `42`, expected a string at line 1 column 13. Send a JSON object matching the tool's schema",
    );
    let missing = call(&ws, "edit_file", &json!({"path": "src/main.rs"}));
    assert_says(&missing, "missing field `old_text`");
    let unknown = call(&ws, "read_file", &json!({"path": "a", "paht": "b"}));
    assert_says(&unknown, "unknown field `paht`");
    let not_json = tools::run("read_file", &ws, "{\"path\": ");
    assert!(not_json.is_error);
    assert!(
        not_json
            .text
            .starts_with("the arguments for read_file are not valid: EOF"),
        "{}",
        not_json.text
    );
    // Nothing was touched.
    assert_eq!(
        project.read("src/main.rs"),
        "fn main() {\n    println!(\"hi\");\n}\n"
    );
}

#[test]
fn an_unknown_tool_lists_the_real_ones() {
    let (_project, ws) = setup();
    let out = tools::run("delete_everything", &ws, "{}");
    assert_error(
        &out,
        "there is no tool named 'delete_everything'; the tools are: read_file, list_directory, glob, grep, write_file, edit_file, read_guidance, update_plan, set_title, run_command, job_output, serve_port, fetch_url, web_search, read_image, read_memory, write_memory, read_skill, ask_user, restrict_self, request_action, nix_eval, provide_tool, spawn_agent, diagnostics",
    );
}

#[test]
fn list_directory_shows_kinds_and_depth() {
    let (project, ws) = setup();
    std::os::unix::fs::symlink("src/main.rs", project.join("link.rs")).unwrap();
    let top = call(&ws, "list_directory", &json!({}));
    assert_eq!(
        top.text,
        ".git/\nREADME.md\ndocs/\nlink.rs -> src/main.rs\nsrc/\n"
    );
    let deep = call(&ws, "list_directory", &json!({"path": "src", "depth": 2}));
    assert_eq!(deep.text, "lib.rs\nmain.rs\n");
    let file = call(&ws, "list_directory", &json!({"path": "README.md"}));
    assert!(file.is_error);
}

#[test]
fn glob_matches_within_and_across_directories() {
    let (_project, ws) = setup();
    for (args, listed) in [
        (json!({"pattern": "**/*.rs"}), "src/lib.rs\nsrc/main.rs\n"),
        (json!({"pattern": "*.md"}), "README.md\n"),
        (
            json!({"pattern": "*.rs", "path": "src"}),
            "src/lib.rs\nsrc/main.rs\n",
        ),
        (
            json!({"pattern": "*.py"}),
            "no path under '.' matches '*.py'\n",
        ),
    ] {
        assert_eq!(call(&ws, "glob", &args).text, listed, "{args}");
    }
    let bad = call(&ws, "glob", &json!({"pattern": "a[b"}));
    assert!(
        bad.is_error && bad.text.starts_with("'a[b' is not a glob pattern"),
        "{}",
        bad.text
    );
}

#[test]
fn grep_prints_path_line_and_text() {
    let (_project, ws) = setup();
    assert_eq!(
        call(&ws, "grep", &json!({"pattern": "fn \\w+"})).text,
        "src/lib.rs:1:pub fn add(a: u8, b: u8) -> u8 {\nsrc/main.rs:1:fn main() {\n"
    );
    assert_eq!(
        call(
            &ws,
            "grep",
            &json!({"pattern": "MAIN", "case_insensitive": true, "glob": "**/*.md"})
        )
        .text,
        "docs/guide.md:2:Use main.\n"
    );
    let bad = call(&ws, "grep", &json!({"pattern": "("}));
    assert!(
        bad.is_error
            && bad
                .text
                .starts_with("'(' is not a valid regular expression"),
        "{}",
        bad.text
    );
}

#[test]
fn write_file_creates_directories_and_replaces_files() {
    let (project, ws) = setup();
    let created = call(
        &ws,
        "write_file",
        &json!({"path": "new/dir/a.txt", "content": "one\ntwo\n"}),
    );
    assert_eq!(
        (created.text.as_str(), created.is_error),
        ("created new/dir/a.txt (8 bytes, 2 lines)", false)
    );
    // The write hands back what it changed, for the log's tool.result.
    assert_eq!(
        created.diff.as_deref(),
        Some("--- /dev/null\n+++ b/new/dir/a.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n")
    );
    assert_eq!(project.read("new/dir/a.txt"), "one\ntwo\n");
    let replaced = call(
        &ws,
        "write_file",
        &json!({"path": "new/dir/a.txt", "content": "x"}),
    );
    assert_eq!(replaced.text, "replaced new/dir/a.txt (1 byte, 1 line)");
}

#[test]
fn edit_file_replaces_exactly_one_occurrence_unless_told_otherwise() {
    let (project, ws) = setup();
    project.write("a.txt", "x = 1\ny = 1\n");
    let ambiguous = call(
        &ws,
        "edit_file",
        &json!({"path": "a.txt", "old_text": "1", "new_text": "2"}),
    );
    assert_eq!(
        ambiguous.text,
        "old_text appears 2 times in 'a.txt'; include more surrounding text to pick one, or set replace_all"
    );
    assert_eq!(
        project.read("a.txt"),
        "x = 1\ny = 1\n",
        "a refused edit changes nothing"
    );
    let one = call(
        &ws,
        "edit_file",
        &json!({"path": "a.txt", "old_text": "y = 1", "new_text": "y = 3"}),
    );
    assert_eq!(one.text, "replaced 1 occurrence in a.txt");
    let all = call(
        &ws,
        "edit_file",
        &json!({"path": "a.txt", "old_text": " = ", "new_text": ": ", "replace_all": true}),
    );
    assert_eq!(all.text, "replaced 2 occurrences in a.txt");
    assert_eq!(project.read("a.txt"), "x: 1\ny: 3\n");
    let absent = call(
        &ws,
        "edit_file",
        &json!({"path": "a.txt", "old_text": "zzz", "new_text": ""}),
    );
    assert!(
        absent.is_error
            && absent
                .text
                .starts_with("old_text does not appear in 'a.txt'")
    );
    let empty = call(
        &ws,
        "edit_file",
        &json!({"path": "a.txt", "old_text": "", "new_text": "q"}),
    );
    assert!(empty.is_error);
    assert_eq!(project.read("a.txt"), "x: 1\ny: 3\n");
}

#[test]
fn read_guidance_gathers_files_from_the_root_down() {
    let (project, ws) = setup();
    assert!(
        call(&ws, "read_guidance", &json!({}))
            .text
            .starts_with("no guidance files")
    );
    project.write("AGENTS.md", "Run the tests.\n");
    project.write("src/CLAUDE.md", "No unsafe here.\n");
    let top = call(&ws, "read_guidance", &json!({}));
    assert_eq!(top.text, "== AGENTS.md ==\nRun the tests.\n\n");
    let deep = call(&ws, "read_guidance", &json!({"path": "src"}));
    assert_eq!(
        deep.text,
        "== AGENTS.md ==\nRun the tests.\n\n== src/CLAUDE.md ==\nNo unsafe here.\n\n"
    );
}

#[test]
fn update_plan_checks_the_plan_and_hands_it_back() {
    let (_project, ws) = setup();
    let items = json!([
        {"step": "read the code", "status": "done"},
        {"step": "write the fix", "status": "in_progress"},
        {"step": "run the tests", "status": "pending"},
    ]);
    let out = call(&ws, "update_plan", &json!({"items": items}));
    assert_eq!(out.text, "plan updated: 3 steps, 1 done");
    assert_eq!(
        out.effect,
        Some(Effect::Plan(vec![
            PlanItem {
                step: "read the code".into(),
                status: PlanStatus::Done
            },
            PlanItem {
                step: "write the fix".into(),
                status: PlanStatus::InProgress
            },
            PlanItem {
                step: "run the tests".into(),
                status: PlanStatus::Pending
            },
        ]))
    );
    let two_active = call(
        &ws,
        "update_plan",
        &json!({"items": [{"step": "a", "status": "in_progress"}, {"step": "b", "status": "in_progress"}]}),
    );
    assert_eq!(two_active.text, "2 steps are in_progress; mark at most one");
    assert_eq!(two_active.effect, None);
    let bad_status = call(
        &ws,
        "update_plan",
        &json!({"items": [{"step": "a", "status": "started"}]}),
    );
    assert_says(&bad_status, "unknown variant `started`");
}

#[test]
fn set_title_takes_one_short_line() {
    let (_project, ws) = setup();
    let out = call(&ws, "set_title", &json!({"title": "  Fix the parser  "}));
    assert_eq!(out.effect, Some(Effect::Title("Fix the parser".into())));
    assert!(call(&ws, "set_title", &json!({"title": "a\nb"})).is_error);
    assert!(call(&ws, "set_title", &json!({"title": "x".repeat(81)})).is_error);
    assert!(call(&ws, "set_title", &json!({"title": " "})).is_error);
}

#[test]
fn huge_output_is_cut_for_the_model_and_kept_whole_for_the_log() {
    let (project, ws) = setup();
    let big: String = (0..20_000).map(|n| format!("line {n}\n")).collect();
    project.write("big.txt", &big);
    let out = call(&ws, "read_file", &json!({"path": "big.txt"}));
    assert_eq!(out.text, big, "the full text is kept");
    assert!(out.is_truncated());
    let model = out.for_model();
    assert!(model.len() < 31_000, "{}", model.len());
    assert!(model.starts_with("line 0\n"));
    assert!(model.ends_with("line 19999\n"));
    assert!(model.contains("left out here; the full output is kept in the session log"));
}
