//! Style rules in a real session and in `chock style check`: the grammars
//! are the real grammar crates built into chock, the writes the fake
//! model's, the files on disk read back after.

use std::path::Path;

use chock_testkit::{TempProject, Turn};
use serde_json::json;

use super::chock;
use super::kit::{
    assert_done, failed, fake_model, log_values, only_log, run_ok, run_session, sessions,
    workspace_dir,
};
use super::mcp_session::{call, result_text};

const NO_UNWRAP: &str = r#"    .style = .{
        .no_unwrap = .{
            .files = .{ "src/**/*.rs" },
            .query = "(call_expression function: (field_expression field: (field_identifier) @m (#eq? @m \"unwrap\")))",
            .max = 0,
            .message = "return the error with ? instead",
        },
    },
"#;

/// A chock.zon with `style` (top-level fields) and `rules`.
fn style_zon(style: &str, rules: &[(&str, &str)]) -> String {
    let rules: String = rules
        .iter()
        .map(|(action, decision)| {
            format!("            .{{ .action = \"{action}\", .decision = .{decision} }},\n")
        })
        .collect();
    format!(
        ".{{\n{style}    .policy = .{{\n        .rules = .{{\n{rules}        }},\n    }},\n}}\n"
    )
}

const ALLOW_PARSE: &[(&str, &str)] = &[("style.parse", "allow")];

/// A git project with `src/lib.rs` and the chock.zon `zon`, committed.
fn project(zon: &str) -> TempProject {
    let project = TempProject::git();
    std::fs::create_dir_all(project.path().join("src")).unwrap();
    std::fs::write(project.path().join("src/lib.rs"), "pub fn a() {}\n").unwrap();
    project.write_chock_zon(zon);
    project.commit_all("rules");
    project
}

/// The model edits an `unwrap` into src/lib.rs, writes it whole with one,
/// and writes a new file with one.
fn unwrap_writes(state: &Path) -> chock_testkit::FakeModel {
    fake_model(
        state,
        [
            call(
                "e1",
                "edit_file",
                json!({"path": "src/lib.rs", "old_text": "pub fn a() {}", "new_text": "pub fn a() { g().unwrap(); }"}),
            ),
            call(
                "w1",
                "write_file",
                json!({"path": "src/lib.rs", "content": "pub fn a() {\n    f().unwrap();\n}\n"}),
            ),
            call(
                "n1",
                "write_file",
                json!({"path": "src/new.rs", "content": "fn b() { h().unwrap() }\n"}),
            ),
            Turn::text("done").into(),
        ],
    )
}

#[test]
fn a_write_breaking_a_rule_is_refused_with_the_rule_count_and_lines_and_disk_is_unchanged() {
    let state = tempfile::tempdir().unwrap();
    let project = project(&style_zon(NO_UNWRAP, ALLOW_PARSE));
    let _fake = unwrap_writes(state.path());
    run_ok(state.path(), project.path(), "add unwraps");
    let log = only_log(state.path());
    assert_done(&log);
    let events = log_values(&log);
    let (text, ok) = result_text(&events, "w1");
    assert!(!ok, "refused: {text}");
    assert!(
        text.contains("refused: the content would break 1 of the project's style rules in src/lib.rs, so src/lib.rs on disk is unchanged"),
        "{text}"
    );
    assert!(
        text.contains("the style rule no_unwrap (")
            && text.contains(
                "chock.zon:3:9): 1 match, at most 0, at line 2: return the error with ? instead"
            ),
        "{text}"
    );
    let (text, ok) = result_text(&events, "e1");
    assert!(!ok && text.contains("at line 1"), "{text}");
    let (text, ok) = result_text(&events, "n1");
    assert!(!ok && text.contains("src/new.rs"), "{text}");
    let dir = workspace_dir(&events);
    assert_eq!(
        std::fs::read_to_string(dir.join("src/lib.rs")).unwrap(),
        "pub fn a() {}\n"
    );
    assert!(
        !dir.join("src/new.rs").exists(),
        "a refused new file is not made"
    );
    let decision = events
        .iter()
        .find(|e| e["type"] == "decision" && e["action"] == "style.parse")
        .unwrap();
    assert_eq!(decision["decision"], "allow");
}

#[test]
fn the_same_writes_pass_with_the_rule_removed() {
    let state = tempfile::tempdir().unwrap();
    let project = project(&style_zon("", ALLOW_PARSE));
    let _fake = unwrap_writes(state.path());
    run_ok(state.path(), project.path(), "add unwraps");
    let events = log_values(&only_log(state.path()));
    for id in ["w1", "e1", "n1"] {
        let (text, ok) = result_text(&events, id);
        assert!(ok, "{id}: {text}");
    }
    let dir = workspace_dir(&events);
    assert!(
        std::fs::read_to_string(dir.join("src/lib.rs"))
            .unwrap()
            .contains("f().unwrap()")
    );
    assert!(dir.join("src/new.rs").exists());
}

#[test]
fn style_parse_not_allowed_says_one_line_at_start_and_checks_nothing() {
    for rules in [&[][..], &[("style.parse", "deny")][..]] {
        let state = tempfile::tempdir().unwrap();
        let project = project(&style_zon(NO_UNWRAP, rules));
        let _fake = unwrap_writes(state.path());
        let out = run_ok(state.path(), project.path(), "add unwraps");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = stderr.lines().filter(|l| l.contains("style")).collect();
        assert_eq!(lines.len(), 1, "{stderr}");
        let want = if rules.is_empty() { "ask" } else { "deny" };
        assert!(
            lines[0].contains(&format!(
                "style rules are not checked: style.parse is {want}"
            )) && lines[0].contains("every write of this session goes unchecked"),
            "{stderr}"
        );
        let events = log_values(&only_log(state.path()));
        for id in ["w1", "e1", "n1"] {
            let (text, ok) = result_text(&events, id);
            assert!(ok, "unchecked: {id}: {text}");
        }
        let noticed = events
            .iter()
            .filter(|e| {
                e["type"] == "notice"
                    && e["text"]
                        .as_str()
                        .unwrap_or_default()
                        .contains("style rules are not checked")
            })
            .count();
        assert_eq!(noticed, 1, "the log keeps the line once");
    }
}

#[test]
fn a_query_that_does_not_compile_or_a_missing_grammar_refuses_the_session_at_start() {
    for (style, says) in [
        (
            "    .style = .{\n        .bad = .{ .files = .{ \"*.rs\" }, .query = \"(function_item (nope) @f)\" },\n    },\n",
            "chock.zon:3:67: the style rule bad: its query does not compile: the rust grammar has no node type nope",
        ),
        (
            "    .style = .{\n        .go = .{ .files = .{ \"*.go\" }, .language = .go, .query = \"(x) @x\" },\n    },\n",
            "chock.zon:3:9: the style rule go: there is no grammar for the language go in this Chock (it parses rust, python, typescript, tsx, nix)",
        ),
    ] {
        let state = tempfile::tempdir().unwrap();
        let project = project(&style_zon(style, ALLOW_PARSE));
        let _fake = unwrap_writes(state.path());
        let out = run_session(state.path(), project.path(), "add unwraps");
        let stderr = failed(&out);
        assert!(
            stderr.contains(
                "the project's style rules cannot be used, so the session did not start: "
            ) && stderr.contains(says),
            "{stderr}"
        );
        assert_eq!(
            stderr.matches("does not compile").count(),
            style.matches("nope").count(),
            "said once: {stderr}"
        );
        assert!(sessions(state.path()).is_empty(), "no session was begun");
        assert_eq!(
            std::fs::read_to_string(project.path().join("src/lib.rs")).unwrap(),
            "pub fn a() {}\n"
        );
    }
}

#[test]
fn a_file_the_parser_cannot_read_whole_is_checked_around_the_broken_part_and_the_result_says_so() {
    let state = tempfile::tempdir().unwrap();
    let project = project(&style_zon(NO_UNWRAP, ALLOW_PARSE));
    let _fake = fake_model(
        state.path(),
        [
            call(
                "w1",
                "write_file",
                json!({"path": "src/lib.rs", "content": "pub fn a() {\n    ok();\n}\nfn half( {\n"}),
            ),
            call(
                "w2",
                "write_file",
                json!({"path": "src/lib.rs", "content": "pub fn a() {\n    x.unwrap();\n}\nfn half( {\n"}),
            ),
            Turn::text("done").into(),
        ],
    );
    run_ok(state.path(), project.path(), "half a file");
    let events = log_values(&only_log(state.path()));
    let (text, ok) = result_text(&events, "w1");
    assert!(ok, "within the rule, written: {text}");
    assert!(
        text.contains("the parser could not read src/lib.rs at line")
            && text.contains("the style rules counted only what it could read"),
        "{text}"
    );
    let (text, ok) = result_text(&events, "w2");
    assert!(
        !ok && text.contains("1 match, at most 0, at line 2"),
        "{text}"
    );
    let dir = workspace_dir(&events);
    assert!(
        std::fs::read_to_string(dir.join("src/lib.rs"))
            .unwrap()
            .contains("ok();")
    );
}

#[test]
fn style_check_exits_1_on_a_breach_and_0_when_clean() {
    let state = tempfile::tempdir().unwrap();
    let rules = "    .style = .{\n        .no_console = .{\n            .files = .{ \"*.ts\" },\n            .query = \"(call_expression function: (member_expression object: (identifier) @o property: (property_identifier) @p) (#eq? @o \\\"console\\\") (#eq? @p \\\"log\\\"))\",\n            .max = 0,\n        },\n        .short = .{\n            .files = .{ \"*.py\" },\n            .query = \"(function_definition) @f\",\n            .measure = .lines,\n            .max = 2,\n        },\n    },\n";
    let project = project(&style_zon(rules, &[]));
    std::fs::write(
        project.path().join("a.ts"),
        "const x = 1;\nconsole.log(x);\n",
    )
    .unwrap();
    std::fs::create_dir_all(project.path().join("pkg")).unwrap();
    std::fs::write(
        project.path().join("pkg/m.py"),
        "def f():\n    a = 1\n    return a\n",
    )
    .unwrap();
    std::fs::write(project.path().join("ok.ts"), "export const y = 2;\n").unwrap();
    let run = |args: &[&str]| {
        chock(state.path())
            .current_dir(project.path())
            .arg("style")
            .arg("check")
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("a.ts: the style rule no_console (")
            && stdout.contains("1 match, at most 0, at line 2"),
        "{stdout}"
    );
    assert!(
        stdout.contains("pkg/m.py: the style rule short (")
            && stdout.contains("the longest is 3 lines, at most 2, at line 1 (3 lines)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("3 files checked against 2 rules: 2 rules broken"),
        "{stdout}"
    );
    let out = run(&["ok.ts"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("1 file checked against 2 rules: no rule broken"),
        "{stdout}"
    );
    let out = run(&["missing.ts"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("missing.ts: cannot read it"));
}

#[test]
fn policy_check_reports_a_style_query_that_does_not_compile_at_its_place() {
    let state = tempfile::tempdir().unwrap();
    let project = project(&style_zon(
        "    .style = .{\n        .bad = .{ .files = .{ \"*.py\" }, .query = \"(function_definition name: (nope))\" },\n    },\n",
        &[],
    ));
    let out = chock(state.path())
        .current_dir(project.path())
        .args(["policy", "check"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert_eq!(
        stdout.trim(),
        "chock.zon:3:79: the style rule bad: its query does not compile: the python grammar has no node type nope; fix the query (docs/style.md shows the format) or remove the rule"
    );
}
