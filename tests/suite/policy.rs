//! `chock policy explain` and `chock policy check`, run as a person would.

use std::path::{Path, PathBuf};
use std::process::Output;

use super::chock;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../crates/policy/tests/fixtures")
        .join(name)
}

/// A project directory, a state dir, and an empty org bundle so the
/// machine's own /etc/chock/org.zon cannot leak into a test.
struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new(project: Option<&str>) -> Env {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("project")).unwrap();
        std::fs::write(dir.path().join("org.zon"), ".{}\n").unwrap();
        if let Some(name) = project {
            std::fs::copy(fixture(name), dir.path().join("project/chock.zon")).unwrap();
        }
        Env { dir }
    }

    fn project(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    fn run(&self, args: &[&str]) -> Output {
        chock(&self.dir.path().join("state"))
            .env("CHOCK_ORG_BUNDLE", self.dir.path().join("org.zon"))
            .current_dir(self.project())
            .args(args)
            .output()
            .unwrap()
    }

    /// stdout and stderr with the temporary directory replaced, for snapshots.
    fn text(&self, out: &Output) -> String {
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        all.replace(&self.dir.path().display().to_string(), "[TMP]")
    }
}

#[test]
fn explain_names_the_rule_layer_and_losers() {
    let env = Env::new(Some("reference.zon"));
    let out = env.run(&["policy", "explain", "mcp.time.tool.get_current_time"]);
    assert!(out.status.success(), "{}", env.text(&out));
    insta::assert_snapshot!("explain_mcp_tool", env.text(&out));
}

#[test]
fn explain_a_question_names_the_rule_to_add_and_where() {
    let env = Env::new(None);
    let out = env.run(&["policy", "explain", "net.fetch.org.ziglang.docs"]);
    assert!(out.status.success(), "{}", env.text(&out));
    insta::assert_snapshot!("explain_unnamed_host", env.text(&out));
}

#[test]
fn explain_a_project_rule_over_a_shipped_default() {
    let env = Env::new(Some("reference.zon"));
    let out = env.run(&["policy", "explain", "call.write_file", "--project", "."]);
    insta::assert_snapshot!("explain_project_over_default", env.text(&out));
}

#[test]
fn explain_before_the_first_turn_refuses_an_ask() {
    let env = Env::new(None);
    let out = env.run(&["policy", "explain", "sandbox.jit", "--before-first-turn"]);
    assert!(out.status.success());
    let text = env.text(&out);
    assert!(text.contains("decision: ask (refused)"), "{text}");
    assert!(text.contains("nobody is there to answer"), "{text}");
}

#[test]
fn explain_json_has_action_decision_layer_and_rule() {
    let env = Env::new(Some("reference.zon"));
    let out = env.run(&["policy", "explain", "net.fetch.org.ziglang.docs", "--json"]);
    assert!(out.status.success(), "{}", env.text(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["action"], "net.fetch.org.ziglang.docs");
    assert_eq!(v["decision"], "allow");
    assert_eq!(v["layer"], "project");
    assert_eq!(
        v["rule"]["text"],
        r#".{ .action = "net.fetch.org.ziglang.*", .decision = .allow }"#
    );
    assert_eq!(v["rule"]["line"], 9);
    insta::assert_snapshot!("explain_json", env.text(&out));
}

#[test]
fn explain_under_an_org_ceiling() {
    let env = Env::new(None);
    std::fs::copy(fixture("org.zon"), env.dir.path().join("org.zon")).unwrap();
    std::fs::write(
        env.project().join("chock.zon"),
        ".{ .policy = .{ .rules = .{ .{ .action = \"sandbox.jit\", .decision = .allow } } } }\n",
    )
    .unwrap();
    let out = env.run(&["policy", "explain", "sandbox.jit", "--before-first-turn"]);
    insta::assert_snapshot!("explain_org_ceiling", env.text(&out));
}

#[test]
fn explain_refuses_a_malformed_action() {
    let env = Env::new(None);
    let out = env.run(&["policy", "explain", "net.serve.http"]);
    assert_eq!(out.status.code(), Some(1));
    let text = env.text(&out);
    assert!(text.contains("port `http` is not a number"), "{text}");
}

#[test]
fn explain_refuses_to_run_on_a_broken_project_file() {
    let env = Env::new(Some("problems.zon"));
    let out = env.run(&["policy", "explain", "call.read_file"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "never a fallback to a more permissive policy"
    );
    let text = env.text(&out);
    assert!(
        text.contains("./chock.zon:6:56: unknown decision `maybe`"),
        "{text}"
    );
    assert!(
        text.contains("nothing runs under a policy that could not be read whole"),
        "{text}"
    );
    assert!(
        !text.contains("action:   "),
        "no explanation is printed: {text}"
    );
}

#[test]
fn an_unreadable_org_bundle_refuses_in_explain() {
    let env = Env::new(None);
    std::fs::write(env.dir.path().join("org.zon"), ".{ .policy = ").unwrap();
    let out = env.run(&["policy", "explain", "call.read_file"]);
    assert!(out.status.success());
    let text = env.text(&out);
    assert!(text.contains("decision: deny (refused)"), "{text}");
    assert!(text.contains("[TMP]/org.zon could not be read"), "{text}");
}

#[test]
fn check_lists_every_problem_with_line_and_column() {
    let env = Env::new(Some("problems.zon"));
    let out = env.run(&["policy", "check"]);
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!("check_problems", env.text(&out));
}

#[test]
fn check_passes_a_good_file() {
    let env = Env::new(Some("reference.zon"));
    let out = env.run(&["policy", "check", "chock.zon"]);
    assert!(out.status.success(), "{}", env.text(&out));
    assert_eq!(env.text(&out), "chock.zon: no problems (17 rules)\n");
}

#[test]
fn check_reports_each_block_chock_does_not_act_on_and_validates_the_ones_it_does() {
    let env = Env::new(None);
    let text = ".{\n    .devshell = .{},\n    .devices = .{},\n    .workspace = .{},\n    .lsp = .{},\n    .style = .{},\n    .plugins = .{},\n    .polcy = .{},\n    .secrets = .{ .GH = .{ .from = .{ .env = \"GITHUB_TOKEN\" }, .bind = .{ .env = \"GH_TOKEN\" } } },\n    .policy = .{ .rules = .{} },\n}\n";
    std::fs::write(env.project().join("chock.zon"), text).unwrap();
    let out = env.run(&["policy", "check"]);
    assert_eq!(out.status.code(), Some(1));
    let lines: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    // .devices, .workspace (lines 3 and 4), .lsp and .style (lines 5 and 6)
    // and .plugins (line 7) are read, and empty ones are fine.
    assert_eq!(lines.len(), 2, "{lines:#?}");
    assert!(
        lines[0].starts_with("chock.zon:2:5: the .devshell block belongs in your config.zon"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].starts_with(
            "chock.zon:8:5: unknown block .polcy: Chock reads .policy, .secrets, .mcp, .plugins, .workspace, .devices, .lsp, .style, .providers"
        ),
        "{}",
        lines[1]
    );
    assert!(env.text(&out).contains("chock: chock.zon has 2 problems"));

    // A config block the runner reads is validated by that reading.
    std::fs::write(
        env.project().join("config.zon"),
        ".{\n    .providers = .{\n        .x = .{ .kind = .opneai, .base_url = \"u\" },\n    },\n}\n",
    )
    .unwrap();
    let out = env.run(&["policy", "check", "config.zon"]);
    assert_eq!(out.status.code(), Some(1));
    let text = env.text(&out);
    assert!(text.starts_with("config.zon:3:"), "{text}");
    assert!(text.contains("opneai"), "{text}");
}

#[test]
fn check_a_file_that_is_not_zon() {
    let env = Env::new(None);
    std::fs::write(
        env.project().join("config.zon"),
        ".{ .policy = .{ .rules = .{ .{ .action = \"call.x\", } }\n",
    )
    .unwrap();
    let out = env.run(&["policy", "check", "config.zon"]);
    assert_eq!(out.status.code(), Some(1));
    let text = env.text(&out);
    assert!(text.starts_with("config.zon:1:"), "{text}");
    assert!(text.contains("this is not ZON"), "{text}");
}

#[test]
fn check_a_missing_file_says_what_to_pass() {
    let env = Env::new(None);
    let out = env.run(&["policy", "check"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        env.text(&out).contains("cannot read chock.zon"),
        "{}",
        env.text(&out)
    );
}

#[test]
fn policy_help_describes_both_subcommands() {
    let env = Env::new(None);
    let out = env.run(&["policy", "--help"]);
    assert!(out.status.success());
    let text = env.text(&out);
    assert!(text.contains("explain") && text.contains("check"), "{text}");
    let out = env.run(&["policy", "explain", "--help"]);
    assert!(env.text(&out).contains("net.fetch.org.ziglang.docs"));
}

#[test]
fn explain_reads_the_operator_config_from_xdg_config_home() {
    let env = Env::new(Some("reference.zon"));
    let config = env.dir.path().join("state/config/chock");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::copy(fixture("operator.zon"), config.join("config.zon")).unwrap();
    let out = env.run(&["policy", "explain", "net.connect.com.github", "--json"]);
    assert!(out.status.success(), "{}", env.text(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["decision"], "deny",
        "the project cannot raise the operator's rule"
    );
    assert_eq!(v["layer"], "operator");
    assert_eq!(v["losers"][0]["layer"], "project");
    let help = env.run(&["policy", "explain", "net.connect.com.github"]);
    let text = env.text(&help);
    assert!(
        text.contains("to permit it, add this rule to [TMP]/state/config/chock/config.zon"),
        "{text}"
    );
}

#[test]
fn a_session_meeting_a_block_chock_does_not_act_on_says_so_once_at_its_start() {
    use super::kit::{all_of, assert_done, fake_model, log_values, only_log, run_ok};
    let state = tempfile::tempdir().unwrap();
    let project = chock_testkit::TempProject::git();
    project.write_chock_zon(
        ".{\n    .stlye = .{ .probe = .{} },\n    .policy = .{ .rules = .{} },\n}\n",
    );
    project.commit_all("a misspelt block");
    let _fake = fake_model(state.path(), [chock_testkit::Turn::text("Done.").into()]);
    let out = run_ok(state.path(), project.path(), "hi");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = format!(
        "chock: note: {}:2:5: unknown block .stlye: Chock reads .policy",
        project
            .path()
            .join("chock.zon")
            .canonicalize()
            .unwrap()
            .display()
    );
    assert_eq!(stderr.matches(&line).count(), 1, "{stderr}");
    assert_eq!(
        stderr.matches("chock: note:").count(),
        1,
        "one line: {stderr}"
    );
    let log = only_log(state.path());
    assert_done(&log);
    let events = log_values(&log);
    let said: Vec<&serde_json::Value> = all_of(&events, "notice")
        .into_iter()
        .filter(|n| n["subject"] == "start")
        .collect();
    assert_eq!(said.len(), 1, "{said:?}");
}
