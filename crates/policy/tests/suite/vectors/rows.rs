//! Rows read before the first turn, capabilities, and the namespaces of
//! devices, language servers, style, MCP servers and plugins.

use pretty_assertions::assert_eq;

use super::prelude::*;

#[test]
fn rows_read_before_the_first_turn_refuse_anything_but_allow() {
    let none = Policy::shipped();
    for row in [
        "nix.build.hello",
        "sandbox.jit",
        "secret.use.TOKEN",
        "mcp.time",
        "mcp.notion.host.com.notion.mcp",
        "fs.write",
    ] {
        let v = none.decide_before_first_turn(&a(row));
        assert!(v.refused(), "{row}: {}", v.render());
        assert_eq!(v.timing, Timing::BeforeFirstTurn);
        let at_call = none.decide(&a(row));
        assert!(!at_call.refused(), "at a call, ask reaches a person: {row}");
    }
    let jit = project(&[(Some("sandbox.jit"), Allow)]);
    assert!(
        jit.decide_before_first_turn(&Action::sandbox_jit())
            .permits()
    );
    let reviewed = project(&[(Some("nix.build.*"), AgentReview)]);
    assert!(
        reviewed
            .decide_before_first_turn(&a("nix.build.hello"))
            .refused()
    );
}

#[test]
fn sandbox_jit_denied_by_an_org_cannot_be_raised() {
    let p = layered(
        &[(Some("sandbox.jit"), Deny)],
        &[(Some("sandbox.jit"), Allow)],
        &[(Some("sandbox.jit"), Allow)],
    );
    let v = p.decide_before_first_turn(&Action::sandbox_jit());
    assert_eq!((v.decision, v.layer), (Deny, LayerKind::Org));
    assert!(
        v.losers.iter().any(|l| l.why.contains("ceiling")),
        "{}",
        v.render()
    );
    assert!(
        p.for_subagent()
            .decide_before_first_turn(&Action::sandbox_jit())
            .refused()
    );
}

#[test]
fn model_select_takes_the_narrower_of_the_two_provider_rows() {
    assert!(
        Policy::shipped()
            .model_select("openai", "gpt-4.1")
            .unwrap()
            .permits()
    );
    let inst_denied = project(&[(Some("provider.openai"), Deny)]);
    assert!(
        inst_denied
            .model_select("openai", "gpt-4.1")
            .unwrap()
            .refused()
    );
    let model_asks = project(&[(Some("provider.openai.gpt-4.1"), Ask)]);
    let v = model_asks.model_select("openai", "gpt-4.1").unwrap();
    assert!(v.refused(), "only allow lets a model be used");
    assert_eq!(v.action, "provider.openai.gpt-4.1");
    assert!(model_asks.model_select("openai", "o3").unwrap().permits());
    assert!(Policy::shipped().model_select("open.ai", "x").is_err());
}

#[test]
fn only_a_deny_is_spent_at_the_start_for_a_third_party_tool() {
    let p = project(&[(Some("mcp.*"), Deny), (Some("mcp.time.tool.*"), Ask)]);
    assert!(!p.offered_at_start(&a("mcp.github.tool.create_issue")));
    assert!(p.offered_at_start(&a("mcp.time.tool.get_current_time")));
    assert!(Policy::shipped().offered_at_start(&a("plugin.hello.tool.greet")));
}

#[test]
fn workspace_integrate_is_a_capability() {
    let catch_all = project(&[(None, Ask)]);
    let class = project(&[(Some("workspace.*"), Deny)]);
    let apply_only = project(&[(Some("workspace.apply"), Deny)]);
    let deny = project(&[(Some("workspace.integrate"), Deny)]);
    let org = layered(
        &[(Some("workspace.integrate"), Deny)],
        &[],
        &[(Some("workspace.integrate"), Allow)],
    );
    use LayerKind::{Default as D, Org as O, Project as P};
    check(&[
        (
            "a catch-all .{ .decision = .ask } matches workspace.integrate",
            &catch_all,
            "workspace.integrate",
            Ask,
            P,
        ),
        (
            "a workspace.* rule matches workspace.integrate",
            &class,
            "workspace.integrate",
            Deny,
            P,
        ),
        (
            "a rule that names workspace.apply alone does not",
            &apply_only,
            "workspace.integrate",
            Allow,
            D,
        ),
        (
            "deny takes the capability away",
            &deny,
            "workspace.integrate",
            Deny,
            P,
        ),
        (
            "one deny in an organisation's bundle closes the road",
            &org,
            "workspace.integrate",
            Deny,
            O,
        ),
    ]);
}

#[test]
fn workspace_bind_is_asked_under_the_name_the_block_spells() {
    let bind = Action::workspace_bind("scripts/release").unwrap();
    assert_eq!(bind.as_str(), "workspace.bind.scripts/release");
    let whole = layered(
        &[(Some("workspace.bind.*"), Deny)],
        &[],
        &[(Some("workspace.bind.scripts/release"), Allow)],
    );
    assert_eq!(
        whole.decision(&bind),
        Deny,
        "the row refuses the whole mechanism, for every project"
    );
    let one = project(&[(Some("workspace.bind.scripts/release"), Deny)]);
    assert_eq!(one.decision(&bind), Deny);
    assert_eq!(
        one.decision(&Action::workspace_bind("data").unwrap()),
        Ask,
        "a row naming one path refuses that path alone"
    );
}

#[test]
fn devices_lsp_style_mcp_and_plugins() {
    let device = project(&[(Some("device.usb.1d50.6018"), Allow)]);
    let lsp_org = layered(&[(Some("lsp.*"), Deny)], &[], &[(Some("lsp.zls"), Allow)]);
    let style = project(&[(Some("style.parse"), Allow)]);
    let mcp = project(&[
        (Some("mcp.*"), Deny),
        (Some("mcp.time.tool.*"), Allow),
        (Some("mcp.time.tool.get_current_time"), Ask),
        (Some("plugin.hello.tool.greet"), AgentReview),
        (Some("mcp.notion.host.com.notion.*"), Allow),
        (Some("skill.read.project"), Allow),
    ]);
    use LayerKind::{Default as D, None as N, Org as O, Project as P};
    check(&[
        (
            "a device named in policy.rules",
            &device,
            "device.usb.1d50.6018",
            Allow,
            P,
        ),
        (
            "another device still asks",
            &device,
            "device.usb.1d50.6019",
            Ask,
            N,
        ),
        (
            "an organisation that wants no language server writes one rule",
            &lsp_org,
            "lsp.zls",
            Deny,
            O,
        ),
        (
            "a project that writes style rules writes this rule too",
            &style,
            "style.parse",
            Allow,
            P,
        ),
        (
            "mcp.* deny: no MCP tool at all",
            &mcp,
            "mcp.github.tool.create_issue",
            Deny,
            P,
        ),
        (
            "mcp.time.tool.*: every tool of that server",
            &mcp,
            "mcp.time.tool.convert_time",
            Allow,
            P,
        ),
        (
            "that one tool, per call",
            &mcp,
            "mcp.time.tool.get_current_time",
            Ask,
            P,
        ),
        (
            "that one plugin tool",
            &mcp,
            "plugin.hello.tool.greet",
            AgentReview,
            P,
        ),
        (
            "that domain, for that server",
            &mcp,
            "mcp.notion.host.com.notion.api",
            Allow,
            P,
        ),
        (
            "a rule cannot authorise a host for a server it was not written for",
            &mcp,
            "mcp.evil.host.com.notion.api",
            Deny,
            P,
        ),
        (
            "a project that trusts its own skills writes one rule",
            &mcp,
            "skill.read.project",
            Allow,
            P,
        ),
        (
            "the rest keep their defaults",
            &mcp,
            "skill.read.packaged",
            Ask,
            D,
        ),
    ]);
    assert_eq!(
        Action::lsp("/nix/store/aaa/bin/zls").unwrap().as_str(),
        "lsp.zls"
    );
    let err = Action::lsp("/usr/bin/zls.real").unwrap_err().to_string();
    assert!(err.contains("not started"), "{err}");
    // A tool a third party names `host` stays under `.tool.`.
    assert_eq!(
        Action::mcp_tool("notion", "host").unwrap().as_str(),
        "mcp.notion.tool.host"
    );
    assert_eq!(
        Action::skill_read(SkillLayer::Operator).as_str(),
        "skill.read.operator"
    );
}
