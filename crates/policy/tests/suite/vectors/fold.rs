//! The fold: specificity inside a layer, operator beside project, the org
//! ceiling, promises, and what a refusal tells a person.

use pretty_assertions::assert_eq;

use super::prelude::*;

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
fn the_rule_to_add_goes_in_the_file_whose_rule_decided() {
    let files = |project: &[(Option<&str>, Decision)], operator: &[(Option<&str>, Decision)]| {
        Policy::new(Layers {
            project: Some(rs(project)),
            operator: Some(rs(operator)),
            project_file: Some("/p/chock.zon".into()),
            operator_file: Some("/home/u/.config/chock/config.zon".into()),
            ..Layers::default()
        })
    };
    let help = |p: &Policy, name: &str| {
        p.decide(&a(name))
            .help
            .map(|h| h.to_string())
            .unwrap_or_default()
    };
    // A project catch-all reaches the provider rows: the fix is the project's.
    let catch_all = files(&[(None, Ask)], &[]);
    assert!(help(&catch_all, "provider.openai").contains("/p/chock.zon"));
    // No rule matched a provider row that is refused by an operator rule.
    let operator_denies = files(&[], &[(Some("provider.*"), Deny)]);
    assert!(help(&operator_denies, "provider.openai").contains("config.zon"));
    // An unnamed host goes in the project.
    assert!(help(&files(&[], &[]), "net.fetch.org.ziglang.docs").contains("/p/chock.zon"));
}
