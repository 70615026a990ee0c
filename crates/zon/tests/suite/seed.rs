//! Every ZON snippet in the spec's page on actions (seed 004), parsed into
//! the typed shapes a consumer uses and compared with what it means.
//! Fragments that are a list of rules with trailing comments are wrapped in
//! `.{ ... }`; fragments that are one field are wrapped into a struct.

use chock_zon::{ValueKind, from_str, parse};
use pretty_assertions::assert_eq;

use super::types::*;

fn read<T: serde::de::DeserializeOwned>(src: &str) -> T {
    match from_str(src) {
        Ok(v) => v,
        Err(e) => panic!("snippet should read:\n{src}\n{e}"),
    }
}

#[test]
fn single_rule_lines() {
    let cases = [
        (
            r#".{ .action = "call.write_file", .decision = .ask }"#,
            rule("call.write_file", Decision::Ask),
        ),
        (
            r#".{ .action = "net.fetch.org.ziglang.*", .decision = .allow }"#,
            rule("net.fetch.org.ziglang.*", Decision::Allow),
        ),
        (
            r#".{ .action = "net.fetch.*", .decision = .deny }"#,
            rule("net.fetch.*", Decision::Deny),
        ),
        (
            r#".{ .action = "sandbox.jit", .decision = .deny }"#,
            rule("sandbox.jit", Decision::Deny),
        ),
        (
            r#".{ .action = "workspace.integrate", .decision = .deny }"#,
            rule("workspace.integrate", Decision::Deny),
        ),
        (
            r#".{ .action = "workspace.bind.*", .decision = .deny }"#,
            rule("workspace.bind.*", Decision::Deny),
        ),
        (
            r#".{ .action = "lsp.*", .decision = .deny }"#,
            rule("lsp.*", Decision::Deny),
        ),
        (
            r#".{ .action = "style.parse", .decision = .allow }"#,
            rule("style.parse", Decision::Allow),
        ),
    ];
    for (src, want) in cases {
        assert_eq!(read::<Rule>(src), want, "{src}");
    }
}

#[test]
fn a_catch_all_rule_names_no_action() {
    assert_eq!(
        read::<Rule>(".{ .decision = .ask }"),
        Rule {
            action: None,
            decision: Decision::Ask
        }
    );
}

#[test]
fn net_serve_publishes_one_port() {
    let src = r#".{
    .policy = .{
        .rules = .{
            .{ .action = "net.serve.3000", .decision = .allow },
        },
    },
}"#;
    let want = Project {
        policy: Some(Policy {
            net: None,
            rules: vec![rule("net.serve.3000", Decision::Allow)],
        }),
        ..Project::default()
    };
    assert_eq!(read::<Project>(src), want);
}

#[test]
fn net_serve_with_an_ask_fallback() {
    let src = r#".{
    .policy = .{
        .rules = .{
            .{ .action = "net.serve.3000", .decision = .allow },
            .{ .action = "net.serve.*", .decision = .ask },
        },
    },
}"#;
    let p: Project = read(src);
    assert_eq!(
        p.policy.unwrap().rules,
        vec![
            rule("net.serve.3000", Decision::Allow),
            rule("net.serve.*", Decision::Ask)
        ]
    );
}

#[test]
fn net_router_block() {
    let src = r#".{
    .policy = .{
        .net = .{ .router = .auto },
        .rules = .{
            .{ .action = "net.connect.com.github", .decision = .allow },
        },
    },
}"#;
    let p: Project = read(src);
    let policy = p.policy.unwrap();
    assert_eq!(
        policy.net,
        Some(Net {
            router: Some(NetMode::Auto),
            background: None
        })
    );
    assert_eq!(
        policy.rules,
        vec![rule("net.connect.com.github", Decision::Allow)]
    );
}

#[test]
fn net_background_none_fragment() {
    let net: Net = read(".{ .background = .none }");
    assert_eq!(
        net,
        Net {
            router: None,
            background: Some(NetMode::None)
        }
    );
    for (word, mode) in [
        ("auto", NetMode::Auto),
        ("none", NetMode::None),
        ("filtered", NetMode::Filtered),
    ] {
        let net: Net = read(&format!(".{{ .router = .{word} }}"));
        assert_eq!(net.router, Some(mode));
    }
}

#[test]
fn skill_read_project() {
    let src = r#".{
    .policy = .{
        .rules = .{
            .{ .action = "skill.read.project", .decision = .allow },
        },
    },
}"#;
    assert_eq!(
        read::<Project>(src).policy.unwrap().rules,
        vec![rule("skill.read.project", Decision::Allow)]
    );
}

#[test]
fn apply_mode_fragment() {
    let p: Project = read(".{ .apply = .{ .mode = .rebase } }");
    assert_eq!(
        p.apply,
        Some(Apply {
            mode: ApplyMode::Rebase
        })
    );
}

#[test]
fn workspace_bind_name() {
    assert_eq!(
        read::<Bind>(r#".{ .name = "scripts/release" }"#),
        Bind {
            name: "scripts/release".into()
        }
    );
}

#[test]
fn devices_block_and_its_rule() {
    let src = r#".{
    .devices = .{
        .{ .action = "device.usb.1d50.6018" },
    },
    .policy = .{
        .rules = .{
            .{ .action = "device.usb.1d50.6018", .decision = .allow },
        },
    },
}"#;
    let p: Project = read(src);
    assert_eq!(
        p.devices,
        vec![Device {
            action: "device.usb.1d50.6018".into()
        }]
    );
    assert_eq!(
        p.policy.unwrap().rules,
        vec![rule("device.usb.1d50.6018", Decision::Allow)]
    );
}

#[test]
fn mcp_and_plugin_rules_with_trailing_comments() {
    let src = r#".{
.{ .action = "mcp.*", .decision = .deny },                            // no MCP tool at all
.{ .action = "mcp.time.tool.*", .decision = .allow },                 // every tool of that server
.{ .action = "mcp.time.tool.get_current_time", .decision = .ask },    // that one tool, per call
.{ .action = "plugin.hello.tool.greet", .decision = .agent_review },  // that one plugin tool
}"#;
    let rules: Vec<Rule> = read(src);
    assert_eq!(
        rules,
        vec![
            rule("mcp.*", Decision::Deny),
            rule("mcp.time.tool.*", Decision::Allow),
            rule("mcp.time.tool.get_current_time", Decision::Ask),
            rule("plugin.hello.tool.greet", Decision::AgentReview),
        ]
    );
}

#[test]
fn remote_mcp_host_rule_with_a_comment() {
    let src = r#".{
.{ .action = "mcp.notion.host.com.notion.*", .decision = .allow },    // that domain, for that server
}"#;
    let rules: Vec<Rule> = read(src);
    assert_eq!(
        rules,
        vec![rule("mcp.notion.host.com.notion.*", Decision::Allow)]
    );
}

#[test]
fn the_value_tree_of_a_rule_keeps_kinds_and_order() {
    let v = parse(r#".{ .action = "net.serve.3000", .decision = .allow }"#).unwrap();
    let fields = v.as_struct().unwrap();
    assert_eq!(
        fields.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(),
        ["action", "decision"]
    );
    assert_eq!(
        fields[0].value.kind,
        ValueKind::String("net.serve.3000".into())
    );
    assert_eq!(fields[1].value.kind, ValueKind::EnumLiteral("allow".into()));
}
