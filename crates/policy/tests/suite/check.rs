//! Reading policy files: the reference's examples load, and every bad input
//! the issue lists is reported with its line and column, all in one pass.

use std::path::Path;

use chock_policy::{Decision, FileKind, check_file, check_text};
use pretty_assertions::assert_eq;

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn the_reference_examples_read_cleanly_with_their_positions() {
    let checked = check_text(&fixture("reference.zon"), Some(Path::new("chock.zon")));
    assert_eq!(checked.problems, vec![]);
    let rules = &checked.rules.rules;
    assert_eq!(rules.len(), 17);
    let first = &rules[0];
    assert_eq!(
        first.origin.text,
        r#".{ .action = "net.fetch.org.ziglang.*", .decision = .allow }"#
    );
    assert_eq!(
        (first.origin.line, first.origin.column),
        (Some(9), Some(13))
    );
    assert_eq!(first.origin.file.as_deref(), Some(Path::new("chock.zon")));
    let last = rules.last().unwrap();
    assert_eq!(last.decision, Decision::AgentThenHuman);
    assert_eq!(last.origin.text, ".{ .decision = .agent_then_human }");
    assert_eq!(checked.rules.net.router, Some(chock_policy::NetMode::Auto));
    assert_eq!(
        checked.rules.net.background,
        Some(chock_policy::NetMode::None)
    );
}

#[test]
fn every_problem_is_reported_with_line_and_column() {
    let checked = check_text(&fixture("problems.zon"), None);
    let got: Vec<(u32, u32)> = checked
        .problems
        .iter()
        .map(|p| (p.line, p.column))
        .collect();
    let text: Vec<String> = checked.problems.iter().map(ToString::to_string).collect();
    let all = text.join("\n");
    assert_eq!(
        got,
        vec![
            (3, 9),
            (4, 29),
            (6, 56),
            (7, 26),
            (8, 26),
            (9, 26),
            (11, 13),
            (12, 26),
            (13, 58),
            (14, 13),
            (15, 26)
        ],
        "{all}"
    );
    for needle in [
        "unknown field .rulse in the policy block",
        ".router takes .auto, .none or .filtered",
        "unknown decision `maybe`",
        "'*' may only stand as the whole last segment",
        "secret name",
        "port `http` is not a number",
        "duplicate rule for lsp.*: the first is at line 10, column 13",
        "decides nothing",
        "unknown field .why in a rule",
        "has no .decision",
        "`frob.nicate` is not an action name",
    ] {
        assert!(all.contains(needle), "missing {needle:?} in:\n{all}");
    }
    // Only the clean rules are kept; the file as a whole is refused on load.
    assert_eq!(checked.rules.rules.len(), 2);
}

#[test]
fn a_file_that_does_not_parse_is_one_problem_at_its_position() {
    let checked = check_text(
        ".{\n    .policy = .{ .rules = .{ .{ .action = \"x\" \n",
        None,
    );
    assert_eq!(checked.problems.len(), 1, "{:?}", checked.problems);
    assert!(checked.problems[0].line >= 2, "{:?}", checked.problems);
    assert!(checked.problems[0].message.starts_with("this is not ZON"));
}

#[test]
fn the_wrong_shapes_are_named() {
    for (text, needle) in [
        ("\"just a string\"", "a policy file is one struct"),
        (".{ .policy = 3 }", ".policy holds a number"),
        (
            ".{ .policy = .{ .rules = .allow } }",
            ".rules holds an enum literal",
        ),
        (
            ".{ .policy = .{ .rules = .{ \"call.x\" } } }",
            "a rule is a struct",
        ),
        (
            ".{ .policy = .{ .rules = .{ .{ .action = .call, .decision = .allow } } } }",
            ".action is a string",
        ),
        (
            ".{ .policy = .{ .rules = .{ .{ .action = \"call.x\", .decision = \"allow\" } } } }",
            ".decision is one of",
        ),
        (
            ".{ .policy = .{ .net = .{ .wifi = .none } } }",
            "unknown field .wifi in .policy.net",
        ),
    ] {
        let checked = check_text(text, None);
        let all: Vec<String> = checked.problems.iter().map(ToString::to_string).collect();
        assert!(all.iter().any(|p| p.contains(needle)), "{text}: {all:?}");
    }
}

#[test]
fn a_file_without_a_policy_block_holds_no_rules() {
    let checked = check_text(".{ .devices = .{} }", None);
    assert!(checked.problems.is_empty());
    assert!(checked.rules.rules.is_empty());
    assert!(checked.unread.is_empty(), "{:?}", checked.unread);
    // A block Chock does not read is said, not silent.
    let checked = check_text(".{ .stlye = .{} }", None);
    let unread: Vec<String> = checked.unread.iter().map(ToString::to_string).collect();
    assert_eq!(unread.len(), 1, "{unread:?}");
    assert!(
        unread[0].starts_with("1:4: unknown block .stlye: Chock reads .policy"),
        "{unread:?}"
    );
    assert!(check_text(".{}", None).problems.is_empty());
}

#[test]
fn a_block_another_kind_of_file_holds_is_unread_in_this_one() {
    use chock_policy::{FileKind, check_file};
    let text = ".{ .model = \"local/m\", .secrets = .{}, .policy = .{} }";
    let said = |kind| -> Vec<String> {
        check_file(text, None, kind)
            .unread
            .iter()
            .map(ToString::to_string)
            .collect()
    };
    assert_eq!(
        said(FileKind::Project),
        [
            "1:4: the .model block belongs in your config.zon ($XDG_CONFIG_HOME/chock/config.zon): a project's chock.zon does not choose it, and nothing here reads it"
        ]
    );
    assert_eq!(said(FileKind::Operator), Vec::<String>::new());
    assert_eq!(
        said(FileKind::Org),
        [
            "1:4: an org bundle's .model block is not read: the bundle holds .policy, a ceiling over the other files",
            "1:24: an org bundle's .secrets block is not read: the bundle holds .policy, a ceiling over the other files"
        ]
    );
    assert_eq!(
        FileKind::of_path(Path::new("/p/chock.zon")),
        FileKind::Project
    );
    assert_eq!(
        FileKind::of_path(Path::new("/etc/chock/org.zon")),
        FileKind::Org
    );
}

#[test]
fn the_dev_shell_block_is_read_from_config_zon_and_refused_in_a_project() {
    let config = check_file(
        ".{ .devshell = .{ .closure = \"/nix/store/x/store-paths\" } }",
        None,
        FileKind::Operator,
    );
    assert!(config.problems.is_empty(), "{:?}", config.problems);
    assert!(config.unread.is_empty(), "{:?}", config.unread);
    let project = check_file(
        ".{ .devshell = .{ .project = true } }",
        None,
        FileKind::Project,
    );
    let said: Vec<String> = project
        .problems
        .iter()
        .chain(&project.unread)
        .map(ToString::to_string)
        .collect();
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].starts_with("1:4: the .devshell block belongs in your config.zon"),
        "{said:?}"
    );
}

#[test]
fn the_model_call_bounds_are_config_zon_keys_and_not_unknown_blocks() {
    let config = check_file(
        ".{ .max_model_calls = 20, .max_session_model_calls = 200 }",
        None,
        FileKind::Operator,
    );
    assert!(config.problems.is_empty(), "{:?}", config.problems);
    assert!(config.unread.is_empty(), "{:?}", config.unread);
}
