//! Checked-in logs written by version 1 of the format: they must keep
//! loading, whole, in every later version.

use std::path::PathBuf;

use chock_log::event::{EventBody, KNOWN_TYPES};
use chock_log::reader::ReadProblem;
use chock_log::{Event, EventId, read_after};

pub(crate) fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Every event of the fixture `name`, parsed.
pub(crate) fn fixture_events(name: &str) -> Vec<Event> {
    read_after(&fixture(name), EventId::NONE)
        .unwrap()
        .events
        .iter()
        .map(|raw| raw.parse().unwrap())
        .collect()
}

#[test]
fn every_fixture_line_parses_and_reserialises_to_the_same_json() {
    for name in [
        "session-v1.jsonl",
        "ended-v1.jsonl",
        "notice-v2.jsonl",
        "agentic-v3.jsonl",
        "subagent-v4.jsonl",
    ] {
        let batch = read_after(&fixture(name), EventId::NONE).unwrap();
        assert!(batch.problems.is_empty(), "{name}: {:?}", batch.problems);
        assert!(!batch.torn_tail, "{name}");
        for raw in &batch.events {
            let event = raw.parse().unwrap();
            assert_eq!(event.id, raw.id);
            // What the fold knows survives a write; only unknown fields of
            // known types are dropped, and those live on in the raw line.
            let again = event.to_line().unwrap();
            let reparsed = Event::parse(&again[..again.len() - 1]).unwrap();
            assert_eq!(reparsed, event, "{name} line {}", raw.id);
        }
    }
}

#[test]
fn the_fixtures_cover_every_known_type_and_an_unknown_one() {
    let mut seen = std::collections::BTreeSet::new();
    for name in [
        "session-v1.jsonl",
        "ended-v1.jsonl",
        "notice-v2.jsonl",
        "agentic-v3.jsonl",
        "subagent-v4.jsonl",
    ] {
        for raw in read_after(&fixture(name), EventId::NONE).unwrap().events {
            let event = raw.parse().unwrap();
            if let EventBody::Unknown { type_name, fields } = &event.body {
                assert_eq!(type_name, "editor.cursor");
                assert_eq!(fields["line"], 42);
            }
            seen.insert(event.body.type_name().to_owned());
        }
    }
    for name in KNOWN_TYPES {
        assert!(seen.contains(*name), "no fixture line of type {name}");
    }
    assert!(seen.contains("editor.cursor"));
}

#[test]
fn the_damaged_fixture_reports_each_problem_and_keeps_the_rest() {
    let batch = read_after(&fixture("damaged-v1.jsonl"), EventId::NONE).unwrap();
    assert_eq!(super::ids(&batch.events), [1, 2, 3]);
    assert!(batch.torn_tail);
    assert!(
        matches!(batch.problems[0], ReadProblem::Invalid { line: 3, .. }),
        "{:?}",
        batch.problems
    );
    assert_eq!(
        batch.problems[1],
        ReadProblem::OutOfOrder {
            line: 4,
            id: EventId(2),
            previous: EventId(2)
        }
    );
    assert_eq!(batch.problems.len(), 2);
}
