//! A size check, not a timed test: prints how long a 1,000-rule chock.zon
//! takes to read. Run by hand: `cargo test -p chock-zon --release --test all
//! perf -- --ignored --nocapture`. Figures go in docs/performance.md.

use std::time::Instant;

use super::types::Project;

pub(crate) fn thousand_rules() -> String {
    let mut s = String::from(".{\n    .policy = .{\n        .rules = .{\n");
    for i in 0..1000 {
        s.push_str(&format!(
            "            .{{ .action = \"net.fetch.org.example{i}.*\", .decision = .allow }}, // rule {i}\n"
        ));
    }
    s.push_str("        },\n    },\n}\n");
    s
}

#[test]
fn a_thousand_rules_read_back_in_full() {
    let p: Project = chock_zon::from_str(&thousand_rules()).unwrap();
    assert_eq!(p.policy.unwrap().rules.len(), 1000);
}

#[test]
#[ignore = "prints timings; run by hand"]
fn time_a_thousand_rules() {
    let src = thousand_rules();
    let runs = 200;
    let t = Instant::now();
    for _ in 0..runs {
        let p: Project = chock_zon::from_str(&src).unwrap();
        std::hint::black_box(p);
    }
    let per = t.elapsed() / runs;
    println!(
        "1,000-rule chock.zon ({} bytes): {per:?} per from_str",
        src.len()
    );
    let t = Instant::now();
    for _ in 0..runs {
        std::hint::black_box(chock_zon::parse(&src).unwrap());
    }
    println!("parse only: {:?} per parse", t.elapsed() / runs);
    let deep = ".{".repeat(10_000_000);
    let t = Instant::now();
    assert!(chock_zon::parse(&deep).is_err());
    println!("10 M nested `.{{` refused in {:?}", t.elapsed());
}
