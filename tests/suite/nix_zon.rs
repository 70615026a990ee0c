//! The Nix side and the Rust side agree on ZON: the text lib/zon.nix renders
//! for the sample settings (vm-tests/fixtures/settings.nix, checked in as
//! settings.expected.zon) is read by chock-zon as the value the Nix attribute
//! set means, and by serde as the config shapes chock reads. When
//! nix-instantiate is installed (CI installs it), the generator is run again
//! and must still produce the checked-in file byte for byte.

use std::path::{Path, PathBuf};
use std::process::Command;

use chock_zon::{Field, Span, Value, ValueKind};
use pretty_assertions::assert_eq;

fn repo_root() -> PathBuf {
    // The e2e package is the repository's `tests/` directory.
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn fixture() -> String {
    let path = repo_root().join("vm-tests/fixtures/settings.expected.zon");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn v(kind: ValueKind) -> Value {
    Value::new(kind)
}
fn s(text: &str) -> Value {
    v(ValueKind::String(text.to_owned()))
}
fn int(n: i128) -> Value {
    v(ValueKind::Int(n))
}
fn en(name: &str) -> Value {
    v(ValueKind::EnumLiteral(name.to_owned()))
}
fn list(items: Vec<Value>) -> Value {
    v(ValueKind::List(items))
}
fn st(fields: Vec<(&str, Value)>) -> Value {
    v(ValueKind::Struct(
        fields
            .into_iter()
            .map(|(name, value)| Field {
                name: name.to_owned(),
                name_span: Span::default(),
                value,
            })
            .collect(),
    ))
}

/// Field order carries no meaning in a config file; compare without it.
fn sorted(value: &Value) -> Value {
    match &value.kind {
        ValueKind::Struct(fields) => {
            let mut fields: Vec<Field> = fields
                .iter()
                .map(|f| Field {
                    name: f.name.clone(),
                    name_span: f.name_span,
                    value: sorted(&f.value),
                })
                .collect();
            fields.sort_by(|a, b| a.name.cmp(&b.name));
            v(ValueKind::Struct(fields))
        }
        ValueKind::List(items) => list(items.iter().map(sorted).collect()),
        _ => value.clone(),
    }
}

/// What vm-tests/fixtures/settings.nix means, written out by hand.
fn expected() -> Value {
    st(vec![
        ("model", s("local/qwen3-coder")),
        (
            "providers",
            st(vec![
                (
                    "local",
                    st(vec![
                        ("kind", en("openai")),
                        ("base_url", s("http://127.0.0.1:8080/v1")),
                        ("key_env", s("LOCAL_API_KEY")),
                        ("context_window", int(131_072)),
                    ]),
                ),
                (
                    "anthropic",
                    st(vec![
                        ("kind", en("anthropic")),
                        ("base_url", s("https://api.anthropic.com")),
                        ("key_env", s("ANTHROPIC_API_KEY")),
                        ("temperature", v(ValueKind::Float(0.25))),
                        ("max_tokens", v(ValueKind::Null)),
                    ]),
                ),
            ]),
        ),
        (
            "policy",
            st(vec![(
                "rules",
                list(vec![
                    st(vec![
                        ("action", s("net.fetch.org.ziglang.*")),
                        ("decision", en("allow")),
                    ]),
                    st(vec![
                        ("action", s("git.push")),
                        ("decision", en("agent_then_human")),
                    ]),
                    st(vec![("action", s("sandbox.jit")), ("decision", en("deny"))]),
                ]),
            )]),
        ),
        (
            "devices",
            list(vec![st(vec![("action", s("device.usb.1d50.6018"))])]),
        ),
        (
            "search",
            st(vec![
                ("enabled", v(ValueKind::Bool(false))),
                ("offset", int(-3)),
                ("scale", v(ValueKind::Float(0.001))),
                ("big", v(ValueKind::Float(1.0e20))),
                ("tiny", v(ValueKind::Float(-2.5e-7))),
                ("tags", list(vec![])),
                ("extra", st(vec![])),
            ]),
        ),
        (
            "notes",
            st(vec![
                ("quoted name", s("tab\there, \"quotes\", back\\slash")),
                ("bell", s("ring \u{7} and delete \u{7f}")),
                ("error", s("a Zig keyword as a field name")),
                ("unicode", s("naïve café ✓")),
                ("multiline", s("first line\nsecond line\n")),
            ]),
        ),
        (
            "mixed",
            list(vec![
                int(1),
                s("two"),
                v(ValueKind::Bool(true)),
                v(ValueKind::Null),
                en("three"),
                list(vec![int(4)]),
                st(vec![("five", int(5))]),
            ]),
        ),
    ])
}

#[test]
fn nix_rendered_settings_parse_to_the_value_the_attribute_set_means() {
    let parsed = chock_zon::parse(&fixture()).unwrap_or_else(|e| panic!("chock-zon: {e}"));
    assert_eq!(sorted(&parsed), sorted(&expected()));
}

/// The operator config's shapes as serde reads them: internally tagged
/// provider kinds, enum decisions, optional fields.
mod shapes {
    use std::collections::BTreeMap;

    use serde::Deserialize;

    #[derive(Debug, Deserialize, PartialEq)]
    pub(super) struct Settings {
        pub(super) model: String,
        pub(super) providers: BTreeMap<String, Provider>,
        pub(super) policy: Policy,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(tag = "kind")]
    pub(super) enum Provider {
        #[serde(rename = "openai")]
        OpenAi {
            base_url: String,
            key_env: Option<String>,
            context_window: Option<u64>,
        },
        #[serde(rename = "anthropic")]
        Anthropic {
            base_url: String,
            key_env: Option<String>,
            max_tokens: Option<u32>,
        },
    }

    #[derive(Debug, Deserialize, PartialEq)]
    pub(super) struct Policy {
        pub(super) rules: Vec<Rule>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    pub(super) struct Rule {
        pub(super) action: String,
        pub(super) decision: Decision,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "snake_case")]
    pub(super) enum Decision {
        Deny,
        AgentThenHuman,
        Ask,
        AgentReview,
        Allow,
    }
}

#[test]
fn nix_rendered_settings_read_as_the_config_types() {
    use shapes::{Decision, Provider, Settings};
    let settings: Settings =
        chock_zon::from_str(&fixture()).unwrap_or_else(|e| panic!("chock-zon: {e}"));
    assert_eq!(settings.model, "local/qwen3-coder");
    assert_eq!(
        settings.providers["local"],
        Provider::OpenAi {
            base_url: "http://127.0.0.1:8080/v1".into(),
            key_env: Some("LOCAL_API_KEY".into()),
            context_window: Some(131_072),
        }
    );
    assert_eq!(
        settings.providers["anthropic"],
        Provider::Anthropic {
            base_url: "https://api.anthropic.com".into(),
            key_env: Some("ANTHROPIC_API_KEY".into()),
            max_tokens: None,
        }
    );
    let decisions: Vec<&Decision> = settings.policy.rules.iter().map(|r| &r.decision).collect();
    assert_eq!(
        decisions,
        [&Decision::Allow, &Decision::AgentThenHuman, &Decision::Deny]
    );
}

#[test]
fn nix_generator_still_renders_the_checked_in_fixture() {
    let root = repo_root();
    let expr = "let zon = import ./lib/zon.nix; in zon.render \"services.chock.settings\" \
                (import ./vm-tests/fixtures/settings.nix { inherit zon; })";
    // The dummy store: evaluation only, so no store or daemon is needed
    // and any user can run it.
    let out = match Command::new("nix-instantiate")
        .args([
            "--store", "dummy://", "--eval", "--strict", "--json", "-E", expr,
        ])
        .current_dir(&root)
        .output()
    {
        Ok(out) => out,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // CI installs nix-bin, so there this half of the check must run.
            assert!(
                std::env::var_os("CI").is_none(),
                "nix-instantiate is missing under CI: .ci/run installs nix-bin"
            );
            eprintln!("nix-instantiate is not installed: the generator was not re-run");
            return;
        }
        Err(e) => panic!("nix-instantiate: {e}"),
    };
    assert!(
        out.status.success(),
        "nix-instantiate failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rendered: String = serde_json::from_slice(&out.stdout).expect("a JSON string");
    assert_eq!(
        rendered,
        fixture(),
        "lib/zon.nix no longer renders the fixture: run vm-tests/fixtures/regenerate.sh and review the diff"
    );
}
