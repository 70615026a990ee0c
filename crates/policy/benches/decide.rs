//! Decisions per second on a 1,000-rule policy mixing exact and class keys,
//! with an org bundle and an operator layer beside the project. Run with
//! `cargo bench -p chock-policy --bench decide`; figures are in
//! docs/performance.md (## Policy).

#![expect(
    clippy::unwrap_used,
    reason = "the benchmark's fixed names are known to parse"
)]

use std::hint::black_box;

use chock_policy::{Action, Decision, Layers, Org, Policy, Rule, RuleSet};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn rule(key: &str, d: Decision) -> Rule {
    Rule::parse(Some(key), d).unwrap()
}

fn thousand_rules() -> Vec<Rule> {
    let ds = Decision::ALL;
    let mut rules = Vec::new();
    for i in 0..400 {
        rules.push(rule(&format!("net.fetch.com.site{i}.www"), ds[i % 5]));
    }
    for i in 0..200 {
        rules.push(rule(&format!("net.connect.org.example{i}.*"), ds[i % 5]));
    }
    for i in 0..150 {
        rules.push(rule(&format!("call.tool_{i}"), ds[i % 5]));
    }
    for i in 0..100 {
        rules.push(rule(&format!("mcp.server{i}.tool.*"), ds[i % 5]));
    }
    for i in 0..100 {
        rules.push(rule(&format!("exec.path.prog{i}"), ds[i % 5]));
    }
    for i in 0..50 {
        rules.push(rule(&format!("secret.use.KEY_{i}"), ds[i % 5]));
    }
    assert_eq!(rules.len(), 1000);
    rules
}

fn policy() -> Policy {
    Policy::new(Layers {
        org: Org::Rules(RuleSet::new(vec![
            rule("sandbox.jit", Decision::Deny),
            rule("net.*", Decision::Allow),
        ])),
        operator: Some(RuleSet::new(vec![
            rule("net.connect.*", Decision::Ask),
            rule("call.write_file", Decision::Allow),
        ])),
        project: Some(RuleSet::new(thousand_rules())),
        ..Layers::default()
    })
}

fn actions() -> Vec<Action> {
    let names = [
        "net.fetch.com.site17.www",
        "net.fetch.com.site399.api",
        "net.connect.org.example42.www",
        "net.connect.com.github",
        "call.tool_99",
        "call.read_file",
        "mcp.server7.tool.query",
        "exec.path.prog3",
        "exec.path.git",
        "secret.use.KEY_9",
        "workspace.integrate",
        "sandbox.jit",
        "lsp.zls",
        "git.push",
        "net.serve.3000",
        "provider.openai.gpt-4.1",
    ];
    names.iter().map(|n| Action::parse(n).unwrap()).collect()
}

fn bench(c: &mut Criterion) {
    let p = policy();
    let acts = actions();
    let mut g = c.benchmark_group("policy");
    g.throughput(Throughput::Elements(acts.len() as u64));
    g.bench_function("decision_1000_rules", |b| {
        b.iter(|| {
            for a in &acts {
                black_box(p.decision(black_box(a)));
            }
        });
    });
    g.bench_function("decide_with_reasons_1000_rules", |b| {
        b.iter(|| {
            for a in &acts {
                black_box(p.decide(black_box(a)));
            }
        });
    });
    // For comparison only: the most specific rule of the project layer alone
    // found by scanning every rule, which is what the index replaces.
    let rules = thousand_rules();
    g.bench_function("linear_scan_project_layer_1000_rules", |b| {
        b.iter(|| {
            for a in &acts {
                let best = rules
                    .iter()
                    .filter(|r| r.pattern.matches(black_box(a.as_str())))
                    .max_by_key(|r| r.pattern.specificity())
                    .map(|r| r.decision);
                black_box(best);
            }
        });
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
