//! The policy reference as a table: every example and every sentence about
//! how a rule is read, each one row. The sentence each row guards is quoted
//! (or paraphrased) beside it.

use chock_policy::{
    Action, Decision, ExecClass, LayerKind, Layers, NetMode, NetSettings, Org, Policy, Rule,
    RuleSet, SkillLayer, Timing,
};
use pretty_assertions::assert_eq;

use super::{layered, project, rs};
use Decision::{AgentReview, AgentThenHuman, Allow, Ask, Deny};

fn a(name: &str) -> Action {
    Action::parse(name).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// (what the reference says, the policy, the action, decision, deciding layer)
fn check(cases: &[(&str, &Policy, &str, Decision, LayerKind)]) {
    for (said, policy, action, decision, layer) in cases {
        let v = policy.decide(&a(action));
        assert_eq!(
            (v.decision, v.layer),
            (*decision, *layer),
            "{said}: {action}\n{}",
            v.render()
        );
        assert_eq!(
            policy.decision(&a(action)),
            *decision,
            "fast path disagrees: {said}: {action}"
        );
    }
}

#[test]
fn what_chock_ships() {
    let none = Policy::shipped();
    let hash = "0123456789abcdfghijklmnpqrsvwxyz";
    let store = format!("exec.nix.store.{hash}");
    use LayerKind::{Default as D, None as N};
    let mut cases: Vec<(&str, &Policy, &str, Decision, LayerKind)> = vec![
        (
            "exec.devshell.* allow",
            &none,
            "exec.devshell.cargo",
            Allow,
            D,
        ),
        (
            "exec.nix.store.* is the one shipped rule that is not an allow",
            &none,
            &store,
            Ask,
            D,
        ),
        (
            "exec.workspace.* allow",
            &none,
            "exec.workspace.scripts/build.sh",
            Allow,
            D,
        ),
        ("exec.path.* allow", &none, "exec.path.git", Allow, D),
        (
            "exec.unparsed holds no shipped rule, so it asks",
            &none,
            "exec.unparsed",
            Ask,
            N,
        ),
        (
            "net.connect.*: none, so ask",
            &none,
            "net.connect.com.github",
            Ask,
            N,
        ),
        (
            "net.serve.<port>: none, so ask",
            &none,
            "net.serve.3000",
            Ask,
            N,
        ),
        (
            "net.fetch.*: none, so ask",
            &none,
            "net.fetch.org.ziglang.docs",
            Ask,
            N,
        ),
        ("web.search ships as ask", &none, "web.search", Ask, D),
        (
            "skill.read.operator ships as allow",
            &none,
            "skill.read.operator",
            Allow,
            D,
        ),
        (
            "skill.read.project ships as ask",
            &none,
            "skill.read.project",
            Ask,
            D,
        ),
        (
            "skill.read.packaged ships as ask",
            &none,
            "skill.read.packaged",
            Ask,
            D,
        ),
        (
            "nothing ships for secret.use",
            &none,
            "secret.use.GITHUB_TOKEN",
            Ask,
            N,
        ),
        (
            "nix.build.*: none, so ask",
            &none,
            "nix.build.packages.x86_64-linux.hello",
            Ask,
            N,
        ),
        (
            "nix.net.*: none, so ask",
            &none,
            "nix.net.org.nixos.cache",
            Ask,
            N,
        ),
        (
            "nix.net.build.opaque allow",
            &none,
            "nix.net.build.opaque",
            Allow,
            D,
        ),
        (
            "git.commit among the workspace-only allows",
            &none,
            "git.commit",
            Allow,
            D,
        ),
        ("none for git.push", &none, "git.push", Ask, N),
        ("none for git.clone", &none, "git.clone", Ask, N),
        ("none for git.fetch", &none, "git.fetch", Ask, N),
        ("none for git.pull", &none, "git.pull", Ask, N),
        ("none for git.unknown", &none, "git.unknown", Ask, N),
        (
            "a subcommand the shim does not know asks under its own name",
            &none,
            "git.frobnicate",
            Ask,
            N,
        ),
        ("lsp.* allow", &none, "lsp.zls", Allow, D),
        ("style.parse: none, so ask", &none, "style.parse", Ask, N),
        (
            "device.*: none, so ask",
            &none,
            "device.usb.1d50.6018",
            Ask,
            N,
        ),
        (
            "device.tty.serial: none, so ask",
            &none,
            "device.tty.serial.A9XYZ",
            Ask,
            N,
        ),
        (
            "mcp.*: none, so ask",
            &none,
            "mcp.time.tool.get_current_time",
            Ask,
            N,
        ),
        (
            "plugin.*: none, so ask",
            &none,
            "plugin.hello.tool.greet",
            Ask,
            N,
        ),
        (
            "sandbox.jit: only allow turns the rule off",
            &none,
            "sandbox.jit",
            Ask,
            N,
        ),
        (
            "workspace.integrate: a row nobody wrote answers allow",
            &none,
            "workspace.integrate",
            Allow,
            D,
        ),
        (
            "provider.<instance> reads as a capability",
            &none,
            "provider.openai",
            Allow,
            D,
        ),
        (
            "provider.<instance>.<model> likewise",
            &none,
            "provider.openai.gpt-4.1",
            Allow,
            D,
        ),
        (
            "workspace.apply is a question",
            &none,
            "workspace.apply",
            Ask,
            N,
        ),
        ("policy.widen is a question", &none, "policy.widen", Ask, N),
        (
            "nothing in a session asks file.write, and nothing ships for it",
            &none,
            "file.write",
            Ask,
            N,
        ),
    ];
    let calls: Vec<String> = chock_policy::defaults::ALLOWED_CALLS
        .iter()
        .map(|t| format!("call.{t}"))
        .collect();
    for c in &calls {
        cases.push(("these ship as allow", &none, c, Allow, D));
    }
    check(&cases);
    assert_eq!(chock_policy::defaults::ALLOWED_CALLS.len(), 12);
}

#[test]
fn a_call_rule_for_a_tool_decided_elsewhere_is_refused() {
    for tool in [
        "run_command",
        "spawn_agent",
        "update_plan",
        "restrict_self",
        "fetch_url",
        "ask_user",
        "set_title",
        "request_action",
    ] {
        let err = Action::call(tool).unwrap_err().to_string();
        assert!(err.contains("decides nothing"), "{tool}: {err}");
    }
}

#[test]
fn a_project_rule_that_matches_wins_over_the_shipped_defaults() {
    let write_ask = project(&[(Some("call.write_file"), Ask)]);
    let wide_deny = project(&[(Some("call.*"), Deny)]);
    let catch_all = project(&[(None, Ask)]);
    use LayerKind::{Default as D, Project as P};
    check(&[
        (
            "call.write_file set to ask puts that call back behind a prompt",
            &write_ask,
            "call.write_file",
            Ask,
            P,
        ),
        (
            "the other calls still read the defaults",
            &write_ask,
            "call.read_file",
            Allow,
            D,
        ),
        (
            "whatever it names and however wide it is",
            &wide_deny,
            "call.read_file",
            Deny,
            P,
        ),
        (
            "a catch-all is a project rule that matches",
            &catch_all,
            "exec.path.git",
            Ask,
            P,
        ),
    ]);
}

#[test]
fn net_fetch_hosts_are_reversed_so_a_class_is_safe() {
    let p = project(&[
        (Some("net.fetch.org.ziglang.*"), Allow),
        (Some("net.fetch.*"), Deny),
    ]);
    let docs = Action::net_fetch("docs.ziglang.org").unwrap();
    assert_eq!(docs.as_str(), "net.fetch.org.ziglang.docs");
    assert_eq!(p.decision(&docs), Allow);
    assert_eq!(
        p.decision(&Action::net_fetch("ziglang.org.evil.com").unwrap()),
        Deny
    );
    // ziglang.org itself is not *under* ziglang.org.
    assert_eq!(p.decision(&Action::net_fetch("ziglang.org").unwrap()), Deny);
    // A host allowed for one source is not allowed for the others.
    assert_eq!(
        p.decision(&Action::net_connect("docs.ziglang.org").unwrap()),
        Ask
    );
    assert_eq!(
        p.decision(&Action::nix_net("docs.ziglang.org").unwrap()),
        Ask
    );
}

#[test]
fn net_serve_publishes_only_a_port_a_person_wrote() {
    let exact = project(&[(Some("net.serve.3000"), Allow)]);
    assert_eq!(exact.decision(&Action::net_serve(3000).unwrap()), Allow);
    assert_eq!(exact.published_ports(), vec![3000]);
    assert!(exact.could_permit("net.serve"));

    let both = project(&[(Some("net.serve.3000"), Allow), (Some("net.serve.*"), Ask)]);
    assert_eq!(both.decision(&Action::net_serve(3000).unwrap()), Allow);
    assert_eq!(both.decision(&Action::net_serve(8080).unwrap()), Ask);
    assert_eq!(both.published_ports(), vec![3000]);

    let pattern = project(&[(Some("net.serve.*"), Allow)]);
    let v = pattern.decide(&Action::net_serve(8080).unwrap());
    assert_eq!(v.decision, Ask, "net.serve.* publishes nothing");
    assert!(
        v.notes.iter().any(|n| n.contains("publishes nothing")),
        "{}",
        v.render()
    );
    assert!(pattern.published_ports().is_empty());
    assert!(
        pattern.could_permit("net.serve"),
        "serve_port is offered: a person can answer"
    );

    let catch_all = project(&[(None, Allow)]);
    assert_eq!(catch_all.decision(&Action::net_serve(3000).unwrap()), Ask);
    assert!(
        !catch_all.could_permit("net.serve"),
        "a catch-all names no port"
    );

    assert!(
        !Policy::shipped().could_permit("net.serve"),
        "a project that names none is not offered serve_port"
    );
    let denied = project(&[(Some("net.serve.*"), Deny)]);
    assert!(!denied.could_permit("net.serve"));

    let capped = layered(
        &[(Some("net.serve.*"), Deny)],
        &[],
        &[(Some("net.serve.3000"), Allow)],
    );
    assert_eq!(
        capped.decision(&Action::net_serve(3000).unwrap()),
        Deny,
        "an org ceiling still refuses one"
    );
    assert!(capped.published_ports().is_empty());
    assert!(!capped.could_permit("net.serve"));
}

fn with_net(
    rules: &[(Option<&str>, Decision)],
    router: Option<NetMode>,
    background: Option<NetMode>,
) -> Policy {
    let mut set = rs(rules);
    set.net = NetSettings { router, background };
    Policy::new(Layers {
        project: Some(set),
        ..Layers::default()
    })
}

#[test]
fn a_router_is_a_mechanism_never_a_permission() {
    let github = [(Some("net.connect.com.github"), Allow)];
    assert!(
        with_net(&github, Some(NetMode::Auto), None).wants_router(),
        ".auto with a permitted host"
    );
    assert!(
        with_net(&github, None, None).wants_router(),
        ".auto is the default"
    );
    assert!(
        !with_net(&[], None, None).wants_router(),
        "a project that permits nothing pays for none of it"
    );
    assert!(
        with_net(&[(Some("net.*"), Allow)], None, None).wants_router(),
        "a class over all of net permits something under it"
    );
    assert!(
        !with_net(&[(None, Allow)], None, None).wants_router(),
        "a catch-all names nothing"
    );
    assert!(
        !with_net(&[(Some("net.connect.*"), Deny)], None, None).wants_router(),
        "a rule that only denies"
    );
    assert!(
        !with_net(&[(Some("net.connect.*"), Ask)], None, None).wants_router(),
        "ask permits nothing yet"
    );
    assert!(
        !with_net(&github, Some(NetMode::None), None).wants_router(),
        ".none refuses a router"
    );
    assert!(
        with_net(&[], Some(NetMode::Filtered), None).wants_router(),
        ".filtered gives one anyway"
    );
    // A router grants no host by itself.
    let filtered = with_net(&[], Some(NetMode::Filtered), None);
    assert_eq!(
        filtered.decision(&Action::net_connect("github.com").unwrap()),
        Ask
    );
    assert!(
        !with_net(&github, None, Some(NetMode::None)).background_wants_router(),
        ".background = .none"
    );
    assert!(
        with_net(&github, None, None).background_wants_router(),
        ".background = .auto is the session's"
    );
}

#[test]
fn a_background_command_never_asks() {
    let p = project(&[(Some("net.connect.com.github"), Allow)]);
    let allowed = p.decide_background(&Action::net_connect("github.com").unwrap());
    assert!(allowed.permits() && !allowed.refused());
    let unnamed = p.decide_background(&Action::net_connect("example.com").unwrap());
    assert_eq!(unnamed.decision, Ask);
    assert!(
        unnamed.refused(),
        "a host that would have asked is refused rather than queued"
    );
    assert_eq!(unnamed.timing, Timing::Background);
}

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

#[test]
fn store_paths_are_named_by_hash_not_by_the_package() {
    let hash = "0123456789abcdfghijklmnpqrsvwxyz";
    assert_eq!(
        Action::exec(ExecClass::NixStore, hash).unwrap().as_str(),
        format!("exec.nix.store.{hash}")
    );
    assert!(Action::exec(ExecClass::NixStore, "hello-2.12").is_err());
    let p = project(&[(Some(&format!("exec.nix.store.{hash}") as &str), Allow)]);
    assert_eq!(
        p.decision(&Action::exec(ExecClass::NixStore, hash).unwrap()),
        Allow
    );
}

#[test]
fn inside_one_layer_the_most_specific_rule_wins() {
    let p = project(&[
        (None, Deny),
        (Some("net.*"), Ask),
        (Some("net.fetch.*"), AgentThenHuman),
        (Some("net.fetch.org.ziglang.*"), AgentReview),
        (Some("net.fetch.org.ziglang.docs"), Allow),
    ]);
    use LayerKind::Project as P;
    check(&[
        (
            "exact beats every class",
            &p,
            "net.fetch.org.ziglang.docs",
            Allow,
            P,
        ),
        (
            "a longer class beats a shorter one",
            &p,
            "net.fetch.org.ziglang.www",
            AgentReview,
            P,
        ),
        (
            "then the shorter",
            &p,
            "net.fetch.com.github",
            AgentThenHuman,
            P,
        ),
        ("then the shortest", &p, "net.connect.com.github", Ask, P),
        ("the catch-all comes last", &p, "call.read_file", Deny, P),
    ]);
    let v = p.decide(&a("net.fetch.org.ziglang.docs"));
    assert_eq!(v.losers.len(), 4, "{}", v.render());
}

#[test]
fn operator_rules_stand_beside_the_project_as_the_person_own() {
    let p = layered(
        &[],
        &[
            (Some("net.connect.*"), Deny),
            (Some("net.fetch.org.ziglang.*"), Allow),
            (Some("call.write_file"), Allow),
        ],
        &[
            (Some("net.connect.com.evil"), Allow),
            (Some("call.write_file"), Ask),
        ],
    );
    use LayerKind::{Default as D, Operator as O, Project as P};
    check(&[
        (
            "a project cannot raise an operator rule that matches",
            &p,
            "net.connect.com.evil",
            Deny,
            O,
        ),
        (
            "an operator rule alone answers, over the defaults",
            &p,
            "net.fetch.org.ziglang.docs",
            Allow,
            O,
        ),
        (
            "a project may narrow an operator rule",
            &p,
            "call.write_file",
            Ask,
            P,
        ),
        (
            "defaults where neither matches",
            &p,
            "call.read_file",
            Allow,
            D,
        ),
    ]);
}

#[test]
fn the_org_bundle_is_a_ceiling() {
    let p = layered(
        &[(Some("call.*"), Ask), (Some("net.*"), Allow)],
        &[],
        &[
            (Some("call.write_file"), Allow),
            (Some("net.connect.com.github"), Ask),
        ],
    );
    use LayerKind::{Org as O, Project as P};
    check(&[
        (
            "nothing under it can raise it",
            &p,
            "call.write_file",
            Ask,
            O,
        ),
        ("even a shipped allow", &p, "call.read_file", Ask, O),
        (
            "an allow ceiling raises nothing",
            &p,
            "net.connect.com.github",
            Ask,
            P,
        ),
    ]);
}

#[test]
fn an_unreadable_org_bundle_refuses_everything_it_could_have_capped() {
    let p = Policy::new(Layers {
        org: Org::Unreadable {
            path: "/etc/chock/org.zon".into(),
            reason: "permission denied".into(),
        },
        project: Some(rs(&[(None, Allow)])),
        ..Layers::default()
    });
    for name in [
        "call.read_file",
        "workspace.integrate",
        "provider.openai",
        "exec.path.git",
    ] {
        let v = p.decide(&a(name));
        assert_eq!((v.decision, v.layer), (Deny, LayerKind::Org), "{name}");
        assert!(
            v.notes.iter().any(|n| n.contains("could not be read")),
            "{}",
            v.render()
        );
    }
    assert!(!p.wants_router());
}

#[test]
fn promises_narrow_from_the_next_call_and_widening_is_gated() {
    let mut p = project(&[(Some("net.fetch.*"), Allow)]);
    let fetch = a("net.fetch.org.ziglang.docs");
    assert_eq!(p.decision(&fetch), Allow);
    let id = p.restrict(vec![Rule::parse(Some("net.*"), Deny).unwrap()]);
    let v = p.decide(&fetch);
    assert_eq!((v.decision, v.layer), (Deny, LayerKind::Promise));
    // A promise with an allow raises nothing.
    p.restrict(vec![Rule::parse(Some("call.*"), Allow).unwrap()]);
    assert_eq!(p.decision(&a("call.write_file")), Allow);
    // policy.widen ships nothing, so it asks: without a yes the promise holds.
    assert!(p.widen(id, false).is_err());
    assert_eq!(p.decision(&fetch), Deny);
    let mut child = p.for_subagent();
    assert!(matches!(
        child.widen(id, true),
        Err(chock_policy::WidenError::Inherited(_))
    ));
    assert_eq!(
        child.decision(&fetch),
        Deny,
        "a subagent cannot widen its parent's fold"
    );
    p.widen(id, true).unwrap();
    assert_eq!(p.decision(&fetch), Allow);

    let mut locked = project(&[(Some("policy.widen"), Deny)]);
    let id = locked.restrict(vec![Rule::parse(Some("net.*"), Deny).unwrap()]);
    assert!(matches!(
        locked.widen(id, true),
        Err(chock_policy::WidenError::Denied(_))
    ));
}

#[test]
fn a_refusal_names_the_rule_to_add_and_the_block_it_goes_in() {
    let p = Policy::new(Layers {
        project: Some(RuleSet::new(vec![])),
        project_file: Some("/p/chock.zon".into()),
        operator_file: Some("/home/u/.config/chock/config.zon".into()),
        ..Layers::default()
    });
    let v = p.decide(&a("net.fetch.org.ziglang.docs"));
    let help = v.help.as_ref().unwrap().to_string();
    assert!(help.contains("/p/chock.zon"), "{help}");
    assert!(
        help.contains(".{ .action = \"net.fetch.org.ziglang.docs\", .decision = .allow },"),
        "{help}"
    );
    assert!(help.contains(".policy = .{"), "{help}");
    let model = p.decide(&a("provider.openai.gpt-4.1"));
    assert!(model.help.is_none(), "allowed needs no help");
    assert!(p.decide(&a("call.read_file")).help.is_none());
}

#[test]
fn a_refusal_by_an_exact_rule_in_a_file_says_change_that_rule() {
    let mut set = rs(&[(Some("web.search"), Deny)]);
    set.rules[0].origin.file = Some("/p/chock.zon".into());
    set.rules[0].origin.line = Some(4);
    set.rules[0].origin.column = Some(13);
    let p = Policy::new(Layers {
        project: Some(set),
        project_file: Some("/p/chock.zon".into()),
        ..Layers::default()
    });
    let help = p.decide(&Action::web_search()).help.unwrap().to_string();
    assert!(
        help.contains("change the rule at /p/chock.zon:4:13"),
        "{help}"
    );
    assert!(
        help.contains(r#".{ .action = "web.search", .decision = .allow }"#),
        "{help}"
    );
}

#[test]
fn redirect_hops_and_devices_are_read_without_asking() {
    let p = project(&[
        (Some("net.fetch.org.ziglang.*"), Allow),
        (Some("device.usb.1d50.6018"), Allow),
    ]);
    assert!(
        p.decide_unattended(&Action::net_fetch("docs.ziglang.org").unwrap())
            .permits()
    );
    let hop = p.decide_unattended(&Action::net_fetch("elsewhere.example").unwrap());
    assert!(
        hop.refused(),
        "a hop no rule names is refused: {}",
        hop.render()
    );
    assert!(
        !p.decide(&Action::net_fetch("elsewhere.example").unwrap())
            .refused(),
        "the host the agent named asks"
    );
    assert!(
        p.decide_unattended(&Action::device_usb(0x1d50, 0x6018))
            .permits()
    );
    assert!(
        p.decide_unattended(&Action::device_usb(0x1d50, 0x6019))
            .refused(),
        "ask refuses for a device"
    );
}

#[test]
fn a_deny_further_in_still_refuses_a_published_port() {
    let mut p = project(&[(Some("net.serve.3000"), Allow)]);
    assert_eq!(p.published_ports(), vec![3000]);
    p.restrict(vec![Rule::parse(Some("net.serve.*"), Deny).unwrap()]);
    assert_eq!(p.decision(&Action::net_serve(3000).unwrap()), Deny);
    assert!(p.published_ports().is_empty());
    assert!(!p.could_permit("net.serve"));
}
