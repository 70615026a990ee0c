//! Plugins in real `chock run` sessions: modules written as WebAssembly
//! text in tests/plugins, compiled by the wat crate, installed in each of
//! the three layers, enabled in chock.zon, and called by the fake model:
//! a tool that greets and logs, one that reads a workspace file through
//! fs.read, one that declares fs.write without a rule (not offered), one
//! whose module imports a host function it was not given (not started),
//! one that loops (stopped by its fuel), a call asked and answered through
//! `chock approve`, and a deny at the start.

use std::path::Path;

use chock_testkit::TempProject;
use serde_json::{Value, json};

use super::chock;
use super::kit::{
    all_of, answer_pending, fake_model, log_values, one_call_a_turn, only_log, result_of,
    rules_zon, start_session,
};

/// Installs the plugin `name` (tests/plugins/<name>.wat) in `layer` with
/// `tools`, each (tool, capabilities).
fn install(layer: &Path, name: &str, tools: &[(&str, &[&str])]) {
    let dir = layer.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("plugins")
        .join(format!("{name}.wat"));
    std::fs::write(
        dir.join(format!("{name}.wasm")),
        wat::parse_file(source).unwrap(),
    )
    .unwrap();
    let tools: Vec<Value> = tools
        .iter()
        .map(|(tool, caps)| {
            json!({
                "name": tool,
                "description": format!("the {tool} tool"),
                "parameters": {"type": "object", "properties": {"who": {"type": "string"}}},
                "capabilities": caps,
            })
        })
        .collect();
    std::fs::write(
        dir.join("plugin.json"),
        json!({"name": name, "version": "1.0.0", "module": format!("{name}.wasm"), "tools": tools})
            .to_string(),
    )
    .unwrap();
}

/// A project whose chock.zon enables `plugins` and holds `rules`.
fn project(plugins: &[&str], rules: &[(&str, &str)]) -> TempProject {
    let project = TempProject::git();
    let names: Vec<String> = plugins.iter().map(|p| format!("\"{p}\"")).collect();
    let zon = rules_zon(rules);
    let zon = zon.trim_end().strip_suffix('}').unwrap();
    project.write_chock_zon(&format!(
        "{zon}    .plugins = .{{ {} }},\n}}\n",
        names.join(", ")
    ));
    project.write("notes.txt", "remember the milk");
    project.commit_all("plugins");
    project
}

fn text_of(result: &Value) -> &str {
    result["output"].as_str().unwrap_or_default()
}

fn notices(events: &[Value], subject: &str) -> Vec<String> {
    all_of(events, "notice")
        .iter()
        .filter(|n| n["subject"] == subject)
        .map(|n| n["text"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn offered_tools(fake: &chock_testkit::FakeModel) -> Vec<String> {
    fake.requests()[0].json()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn plugins_of_each_layer_offer_their_tools_with_only_the_host_functions_allowed() {
    let state = tempfile::tempdir().unwrap();
    let packaged = tempfile::tempdir().unwrap();
    let project = project(
        &["hello", "notes", "writer", "sneaky"],
        &[("plugin.*", "allow"), ("fs.read", "allow")],
    );
    install(
        &state.path().join("config/chock/plugins"),
        "hello",
        &[("greet", &["log"]), ("spin", &[])],
    );
    install(packaged.path(), "notes", &[("read_notes", &["fs.read"])]);
    let project_layer = project.path().join(".chock/plugins");
    install(&project_layer, "writer", &[("save", &["fs.write"])]);
    install(&project_layer, "sneaky", &[("peek", &["log"])]);
    project.commit_all("the project's plugins");
    let fake = fake_model(
        state.path(),
        one_call_a_turn(&[
            ("greet", "plugin__hello__greet", json!({"who": "ada"})),
            ("notes", "plugin__notes__read_notes", json!({})),
            ("spin", "plugin__hello__spin", json!({})),
            ("again", "plugin__hello__greet", json!({})),
            ("save", "plugin__writer__save", json!({})),
        ]),
    );
    let out = chock(state.path())
        .env("CHOCK_PLUGINS_PATH", packaged.path())
        .arg("run")
        .arg(project.path())
        .arg("go")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = log_values(&only_log(state.path()));
    let said = notices(&events, "plugins").join("\n");
    assert!(
        said.contains(
            "the plugin hello 1.0.0 started and offers 2 tools: greet, spin; linked with log"
        ),
        "{said}"
    );
    assert!(
        said.contains(
            "the plugin notes 1.0.0 started and offers 1 tool: read_notes; linked with fs.read"
        ),
        "{said}"
    );
    assert!(
        said.contains("the plugin writer 1.0.0 offers no tool; not offered: save (its capability fs.write needs fs.write allowed outright, and the policy answers ask)"),
        "{said}"
    );
    assert!(
        said.contains("the plugin sneaky did not start: the plugin could not be instantiated: it imports chock.fs_read, the host function of the capability fs.read, which no offered tool of it was allowed"),
        "{said}"
    );
    let offered = offered_tools(&fake);
    for tool in [
        "plugin__hello__greet",
        "plugin__hello__spin",
        "plugin__notes__read_notes",
    ] {
        assert!(offered.contains(&tool.to_owned()), "{offered:?}");
    }
    assert!(
        !offered
            .iter()
            .any(|t| t.starts_with("plugin__writer") || t.starts_with("plugin__sneaky")),
        "{offered:?}"
    );

    assert_eq!(
        text_of(result_of(&events, "greet")),
        r#"hello from the plugin, given {"who":"ada"}"#
    );
    assert!(notices(&events, "plugin").contains(&"hello: the hello plugin was called".to_owned()));
    assert_eq!(text_of(result_of(&events, "notes")), "remember the milk");
    let spun = text_of(result_of(&events, "spin"));
    assert!(
        spun.contains("the plugin hello's tool spin gave no result: the tool ran past its bound"),
        "{spun}"
    );
    assert!(text_of(result_of(&events, "again")).starts_with("hello from the plugin"));
    assert!(
        text_of(result_of(&events, "save"))
            .contains("there is no tool named 'plugin__writer__save'")
    );
    let decided: Vec<(&str, &str)> = all_of(&events, "decision")
        .iter()
        .map(|d| {
            (
                d["action"].as_str().unwrap(),
                d["decision"].as_str().unwrap(),
            )
        })
        .collect();
    assert!(
        decided.contains(&("plugin.hello.tool.greet", "allow")),
        "{decided:?}"
    );
    assert!(decided.contains(&("fs.write", "ask")), "{decided:?}");
}

#[test]
fn a_plugin_call_asked_is_answered_through_chock_approve_a_promise_binds_the_next_and_a_deny_keeps_a_tool_out()
 {
    let state = tempfile::tempdir().unwrap();
    let project = project(
        &["hello"],
        &[
            ("plugin.hello.tool.greet", "ask"),
            ("plugin.hello.tool.spin", "deny"),
        ],
    );
    install(
        &project.path().join(".chock/plugins"),
        "hello",
        &[("greet", &["log"]), ("spin", &[])],
    );
    project.commit_all("the project's plugin");
    let fake = fake_model(
        state.path(),
        one_call_a_turn(&[
            ("greet", "plugin__hello__greet", json!({"who": "bo"})),
            (
                "promise",
                "restrict_self",
                json!({"rules": [{"action": "plugin.hello.tool.*", "decision": "deny"}], "reason": "no more plugins"}),
            ),
            ("after", "plugin__hello__greet", json!({})),
        ]),
    );
    let child = start_session(state.path(), project.path(), "go");
    let (_, answered) = answer_pending(state.path(), "plugin.hello.tool.greet", "y\n");
    assert!(
        answered.status.success(),
        "{}",
        String::from_utf8_lossy(&answered.stderr)
    );
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = log_values(&only_log(state.path()));
    assert!(text_of(result_of(&events, "greet")).starts_with("hello from the plugin"));
    // A promise binds the very next call of the plugin's tool.
    let after = result_of(&events, "after");
    assert!(
        !text_of(after).starts_with("hello from the plugin"),
        "{after}"
    );
    assert!(
        text_of(after).contains("plugin.hello.tool.greet"),
        "{after}"
    );
    let offered = offered_tools(&fake);
    assert!(
        offered.contains(&"plugin__hello__greet".to_owned()),
        "{offered:?}"
    );
    assert!(
        !offered.contains(&"plugin__hello__spin".to_owned()),
        "{offered:?}"
    );
    let said = notices(&events, "plugins").join("\n");
    assert!(
        said.contains("not offered: spin (denied at plugin.hello.tool.spin)"),
        "{said}"
    );
}

#[test]
fn a_plugin_no_layer_holds_and_a_bad_name_are_each_said() {
    let state = tempfile::tempdir().unwrap();
    let project = project(&["absent"], &[]);
    let _fake = fake_model(state.path(), [chock_testkit::Turn::text("Done.").into()]);
    let out = chock(state.path())
        .arg("run")
        .arg(project.path())
        .arg("go")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = log_values(&only_log(state.path()));
    let said = notices(&events, "plugins").join("\n");
    assert!(
        said.contains(
            "the plugin absent did not start: no layer holds absent/plugin.json (looked in"
        ),
        "{said}"
    );

    let bad = TempProject::git();
    bad.write_chock_zon(".{\n    .plugins = .{ \"two words\", 3 },\n}\n");
    let checked = chock(state.path())
        .args(["policy", "check"])
        .arg(bad.join("chock.zon"))
        .output()
        .unwrap();
    assert_eq!(checked.status.code(), Some(1));
    let text = String::from_utf8_lossy(&checked.stdout);
    assert!(
        text.contains(":2:19: 'two words' cannot be a plugin's name"),
        "{text}"
    );
    assert!(
        text.contains(":2:32: a plugin is named by a string"),
        "{text}"
    );
}

#[test]
fn a_stop_written_while_a_session_runs_refuses_its_next_plugin_call() {
    use super::stop_session::{assert_call_stopped, held, release, start, wait_held};
    let (m, repo) = super::Machine::with_shop();
    let rules = rules_zon(&[("plugin.hello.tool.*", "allow"), ("exec.*", "allow")]);
    let rules = rules.trim_end().strip_suffix('}').unwrap();
    std::fs::write(
        repo.join("chock.zon"),
        format!("{rules}    .plugins = .{{ \"hello\" }},\n}}\n"),
    )
    .unwrap();
    install(
        &repo.join(".chock/plugins"),
        "hello",
        &[("greet", &["log"])],
    );
    super::git(&repo, &["add", "-A"]);
    super::git(&repo, &["commit", "-q", "-m", "the hello plugin"]);
    let _fake = fake_model(
        &m.state(),
        [
            held("c1"),
            super::kit::call_turn("c2", "plugin__hello__greet", json!({})),
            chock_testkit::Turn::text("Done.").into(),
        ],
    );
    let child = start(&m, &repo);
    let (_, log, workspace) = wait_held(&m);
    m.ok(&repo, &["stop", "--reason", "no more plugins today"]);
    release(&workspace);
    let _ = child.wait_with_output().unwrap();
    let events = log_values(&log);
    assert_call_stopped(&events, "c2", "no more plugins today");
}
