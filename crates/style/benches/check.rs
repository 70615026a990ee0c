//! A style check of a 5,000-line file (the target is under 20 ms), beside
//! its peer measured in the same run: tree-sitter parsing the same file
//! with the same grammar and running no query, which is the floor any
//! check over a syntax tree pays. The ratio is what the rules add.
//!
//! A third figure is the check a session makes after an edit of one line
//! of a file it checked before, which reparses from the last tree.
//!
//! Measured twice: in wall time, and in the CPU time the process spent
//! (`chock_testkit::CpuTime`), which on a shared machine is what the check
//! itself costs.
//!
//! Run: `cargo bench -p chock-style --bench check`

#![expect(
    clippy::unwrap_used,
    reason = "a benchmark that cannot set up has nothing to measure"
)]

use std::hint::black_box;

use chock_style::Rules;
use chock_testkit::CpuTime;
use criterion::measurement::Measurement;
use criterion::{Criterion, criterion_group, criterion_main};

/// 5,000 lines of Rust: functions of ten lines, some calling unwrap.
fn rust_file() -> String {
    let mut text = String::new();
    for i in 0..500 {
        text.push_str(&format!(
            "/// Function {i}.\npub fn f{i}(x: Option<u32>) -> u32 {{\n    let a = x.unwrap_or(1);\n    let b = a * {i};\n    // unwrap() in a comment\n    let s = \"x.unwrap()\";\n    let c = g(a).unwrap();\n    let _ = s;\n    b + c\n}}\n"
        ));
    }
    text
}

/// 5,000 lines of Python, functions of ten lines.
fn python_file() -> String {
    let mut text = String::new();
    for i in 0..500 {
        text.push_str(&format!(
            "def f{i}(x):\n    a = x + 1\n    b = a * {i}\n    # print() in a comment\n    s = \"print(x)\"\n    print(a)\n    if b:\n        return b\n    return a\n\n"
        ));
    }
    text
}

fn rules() -> Rules {
    let zon = r#".{
    .style = .{
        .no_unwrap = .{
            .files = .{ "*.rs" },
            .query = "(call_expression function: (field_expression field: (field_identifier) @m (#eq? @m \"unwrap\")))",
            .max = 0,
        },
        .short_rust = .{
            .files = .{ "*.rs" },
            .query = "(function_item) @f",
            .measure = .lines,
            .max = 80,
        },
        .no_print = .{
            .files = .{ "*.py" },
            .query = "(call function: (identifier) @f (#eq? @f \"print\"))",
            .max = 0,
        },
        .short_python = .{
            .files = .{ "*.py" },
            .query = "(function_definition) @f",
            .measure = .lines,
            .max = 80,
        },
    },
}"#;
    let checked = chock_policy::check_text(zon, None);
    assert!(checked.problems.is_empty(), "{:?}", checked.problems);
    Rules::compile(&checked.rules.style).unwrap()
}

fn bench<M: Measurement + 'static>(c: &mut Criterion<M>, label: &str) {
    let rules = rules();
    for (name, path, text, language) in [
        (
            "rust",
            "src/big.rs",
            rust_file(),
            tree_sitter_rust::LANGUAGE,
        ),
        (
            "python",
            "big.py",
            python_file(),
            tree_sitter_python::LANGUAGE,
        ),
    ] {
        assert_eq!(text.lines().count(), 5_000);
        let report = rules.check(path, &text);
        assert_eq!(report.answers.len(), 2);
        c.bench_function(&format!("{name}: two rules over 5,000 lines{label}"), |b| {
            // A fresh set of rules each time: no tree kept from before.
            b.iter_batched(
                self::rules,
                |fresh| black_box(fresh.check(path, black_box(&text))),
                criterion::BatchSize::SmallInput,
            );
        });
        // One line in the middle changed, and changed back: each check
        // reparses from the tree of the other.
        let edited = text.replacen("a * 250", "a * 250 + 1", 1);
        assert_ne!(edited, text);
        let mut flip = false;
        c.bench_function(
            &format!("{name}: the same after a one-line edit{label}"),
            |b| {
                b.iter(|| {
                    flip = !flip;
                    black_box(rules.check(path, if flip { &edited } else { &text }))
                });
            },
        );
        let language = tree_sitter::Language::from(language);
        c.bench_function(&format!("{name}: parse alone (the peer){label}"), |b| {
            b.iter(|| {
                let mut parser = tree_sitter::Parser::new();
                parser.set_language(&language).unwrap();
                black_box(parser.parse(black_box(&text), None))
            });
        });
    }
}

fn wall(c: &mut Criterion) {
    bench(c, "");
}

fn cpu(c: &mut Criterion<CpuTime>) {
    bench(c, " (cpu time)");
}

criterion_group!(benches, wall);
criterion_group! {
    name = cpu_benches;
    config = Criterion::default().with_measurement(CpuTime);
    targets = cpu
}
criterion_main!(benches, cpu_benches);
