//! Properties of the fold over random rule sets: no project, operator or
//! promise rule ever raises an org ceiling, a promise only narrows, and a
//! subagent never widens its parent's fold.

use chock_policy::{Action, Decision, Layers, Org, Policy, PromiseId, Rule, RuleSet};
use proptest::prelude::*;

const KEYS: &[Option<&str>] = &[
    None,
    Some("call.*"),
    Some("call.read_file"),
    Some("call.write_file"),
    Some("net.*"),
    Some("net.fetch.*"),
    Some("net.fetch.org.*"),
    Some("net.fetch.org.ziglang.*"),
    Some("net.fetch.org.ziglang.docs"),
    Some("net.serve.*"),
    Some("net.serve.3000"),
    Some("workspace.*"),
    Some("workspace.integrate"),
    Some("sandbox.jit"),
    Some("provider.*"),
    Some("provider.openai"),
    Some("policy.widen"),
];

const ACTIONS: &[&str] = &[
    "call.read_file",
    "call.write_file",
    "call.grep",
    "net.fetch.org.ziglang.docs",
    "net.fetch.org.ziglang",
    "net.fetch.com.github",
    "net.serve.3000",
    "net.serve.8080",
    "workspace.integrate",
    "workspace.apply",
    "sandbox.jit",
    "provider.openai",
    "provider.openai.o3",
    "exec.path.git",
    "lsp.zls",
    "policy.widen",
];

fn decision() -> impl Strategy<Value = Decision> {
    prop::sample::select(Decision::ALL.to_vec())
}

fn rules() -> impl Strategy<Value = Vec<Rule>> {
    prop::collection::vec((prop::sample::select(KEYS.to_vec()), decision()), 0..8).prop_map(|rs| {
        rs.into_iter()
            .map(|(k, d)| Rule::parse(k, d).unwrap())
            .collect()
    })
}

fn policy(org: Vec<Rule>, operator: Vec<Rule>, project: Vec<Rule>) -> Policy {
    Policy::new(Layers {
        org: Org::Rules(RuleSet::new(org)),
        operator: Some(RuleSet::new(operator)),
        project: Some(RuleSet::new(project)),
        ..Layers::default()
    })
}

/// What the org bundle alone lets through: the person's side answers allow
/// for everything (exact rules for the ports, which a pattern cannot allow).
fn ceiling(org: &[Rule]) -> Policy {
    let mut all_allowed = vec![Rule::parse(None, Decision::Allow).unwrap()];
    for a in ACTIONS {
        all_allowed.push(Rule::parse(Some(a), Decision::Allow).unwrap());
    }
    policy(org.to_vec(), vec![], all_allowed)
}

#[derive(Debug, Clone)]
enum Op {
    Restrict(Vec<Rule>),
    Widen(u64, bool),
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        rules().prop_map(Op::Restrict),
        (1u64..6, any::<bool>()).prop_map(|(id, yes)| Op::Widen(id, yes)),
    ];
    prop::collection::vec(op, 0..6)
}

fn apply(p: &mut Policy, ops: &[Op]) {
    for op in ops {
        match op {
            Op::Restrict(r) => {
                p.restrict(r.clone());
            }
            Op::Widen(id, yes) => {
                let _ = p.widen(PromiseId(*id), *yes);
            }
        }
    }
}

proptest! {
    #[test]
    fn nothing_under_the_org_bundle_raises_its_ceiling(
        org in rules(), operator in rules(), project in rules(), session in ops()
    ) {
        let cap = ceiling(&org);
        let mut p = policy(org, operator, project);
        apply(&mut p, &session);
        for name in ACTIONS {
            let a = Action::parse(name).unwrap();
            prop_assert!(p.decision(&a) <= cap.decision(&a), "{name}: {} > {}", p.decision(&a), cap.decision(&a));
            prop_assert_eq!(p.decide(&a).decision, p.decision(&a));
        }
    }

    #[test]
    fn a_promise_only_narrows(org in rules(), project in rules(), promise in rules()) {
        let before = policy(org, vec![], project);
        let mut after = before.clone();
        after.restrict(promise);
        for name in ACTIONS {
            let a = Action::parse(name).unwrap();
            prop_assert!(after.decision(&a) <= before.decision(&a), "{name}");
        }
    }

    #[test]
    fn a_subagent_never_widens_its_parent(
        org in rules(), operator in rules(), project in rules(), parent_ops in ops(), child_ops in ops()
    ) {
        let mut parent = policy(org, operator, project);
        apply(&mut parent, &parent_ops);
        let mut child = parent.for_subagent();
        apply(&mut child, &child_ops);
        for name in ACTIONS {
            let a = Action::parse(name).unwrap();
            prop_assert!(child.decision(&a) <= parent.decision(&a), "{name}");
        }
    }
}

proptest! {
    #[test]
    fn any_text_either_parses_to_itself_or_is_refused(text in "[a-z0-9A-Z._*/:-]{0,40}") {
        if let Ok(a) = Action::parse(&text) {
            prop_assert_eq!(a.as_str(), text.as_str());
        }
        if let Ok(p) = chock_policy::Pattern::parse(&text) {
            prop_assert_eq!(p.to_string(), text);
        }
    }

    #[test]
    fn every_host_a_builder_accepts_reads_back(host in "([a-zA-Z0-9-]{1,8}\\.){0,3}[a-zA-Z][a-zA-Z0-9]{0,5}") {
        if let Ok(a) = Action::net_fetch(&host) {
            prop_assert_eq!(Action::parse(a.as_str()).unwrap(), a.clone());
            let class = format!("net.fetch.{}.*", a.as_str().trim_start_matches("net.fetch.").split('.').next().unwrap());
            let covers = chock_policy::Pattern::parse(&class).unwrap().matches(a.as_str());
            prop_assert_eq!(covers, a.as_str().split('.').count() > 3);
        }
    }
}

proptest! {
    #[test]
    fn the_segment_index_agrees_with_a_linear_scan(project in rules()) {
        let p = policy(vec![], vec![], project.clone());
        for name in ACTIONS {
            let mut best: Option<&Rule> = None;
            for r in project.iter().filter(|r| r.pattern.matches(name)) {
                if best.is_none_or(|b| r.pattern.specificity() > b.pattern.specificity()) {
                    best = Some(r);
                }
            }
            let v = p.decide(&Action::parse(name).unwrap());
            match best {
                Some(r) => {
                    prop_assert_eq!(v.layer, chock_policy::LayerKind::Project);
                    prop_assert_eq!(&v.rule.unwrap().text, &r.origin.text);
                }
                None => prop_assert_ne!(v.layer, chock_policy::LayerKind::Project),
            }
        }
    }
}
