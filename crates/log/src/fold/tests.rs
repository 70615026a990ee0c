//! The whole-log fold split into blocks of every awkward size, on one
//! thread and on several: it must fold and report exactly what one forward
//! read does.

use std::io::Write as _;

use pretty_assertions::assert_eq;

use super::*;
use crate::blocks::Split;

const SESSION: &str = include_str!("../../tests/fixtures/session-v1.jsonl");

/// The session fixture with damage spread through it: an invalid line early
/// and one late (so it falls in a later block), a repeated id, an event of
/// a type this version does not know, and a torn tail. Returns the log and
/// the lines that should fold.
fn damaged_log() -> (String, Vec<String>) {
    let good: Vec<&str> = SESSION.lines().collect();
    let mut log = String::new();
    let mut folds = Vec::new();
    for (i, line) in good.iter().enumerate() {
        log.push_str(line);
        log.push('\n');
        folds.push((*line).to_owned());
        match i + 1 {
            // Line 4 of the log.
            3 => log.push_str("{\"id\":4, \"at\": not json\n"),
            // Line 10: repeats id 8.
            8 => log.push_str(&format!("{line}\n")),
            11 => {
                let unknown = "{\"id\":12,\"at\":\"2026-11-29T19:28:00.000Z\",\"type\":\"from.the.future\",\"x\":[1,2]}";
                // Renumbering would disturb the fixture's own ids, so the
                // unknown event takes id 12 and the fixture's 12 becomes a
                // repeat the fold reports.
                log.push_str(unknown);
                log.push('\n');
                folds.push(unknown.to_owned());
            }
            // Near the end: a line that is not an object at all.
            18 => log.push_str("[1,2,3]\n"),
            _ => {}
        }
    }
    log.push_str("{\"id\":21,\"at\":\"2026-11-29T19:29");
    (log, folds)
}

fn fold_with(log: &str, split: Split) -> FoldedLog {
    let mut file = tempfile::tempfile().unwrap();
    file.write_all(log.as_bytes()).unwrap();
    fold_file(&file, log.len() as u64, split).unwrap()
}

fn expected(folds: &[String]) -> SessionState {
    let events: Vec<Event> = folds
        .iter()
        .map(|l| Event::parse(l.as_bytes()).unwrap())
        .filter({
            let mut last = EventId::NONE;
            move |e| {
                let keep = e.id > last;
                last = last.max(e.id);
                keep
            }
        })
        .collect();
    SessionState::fold(&events)
}

#[test]
fn every_split_folds_and_reports_what_one_forward_read_does() {
    let (log, folds) = damaged_log();
    let sequential = fold_with(
        &log,
        Split {
            block: 1 << 30,
            workers: 1,
        },
    );
    assert_eq!(sequential.state, expected(&folds));
    let lines: Vec<(u64, &str)> = sequential
        .problems
        .iter()
        .map(|p| match p {
            ReadProblem::Invalid { line, .. } => (*line, "invalid"),
            ReadProblem::OutOfOrder { line, .. } => (*line, "order"),
            ReadProblem::SearchFellBack => (0, "fell back"),
        })
        .collect();
    assert_eq!(
        lines,
        [
            (4, "invalid"),
            (10, "order"),
            (15, "order"),
            (22, "invalid")
        ]
    );
    for block in [1, 2, 7, 64, 100, 333, 1000, 4096] {
        for workers in 1..=3 {
            let split = Split { block, workers };
            let folded = fold_with(&log, split);
            assert_eq!(folded.state, sequential.state, "{split:?}");
            assert_eq!(folded.problems, sequential.problems, "{split:?}");
        }
    }
}

#[test]
fn an_empty_or_tiny_log_folds_on_any_split() {
    let first = SESSION.lines().next().unwrap();
    for (log, events) in [
        (String::new(), 0),
        ("\n".to_owned(), 0),
        (first.to_owned(), 0),
        (format!("{first}\n"), 1),
    ] {
        for block in [1, 5, 4096] {
            for workers in 1..=3 {
                let split = Split { block, workers };
                let folded = fold_with(&log, split);
                assert_eq!(folded.state.events, events, "{log:?} {split:?}");
                let blank_lines = u64::from(log == "\n");
                assert_eq!(folded.problems.len() as u64, blank_lines, "{log:?}");
            }
        }
    }
}

/// The bodies the fold skips: a `tool.call` and a `decision` whose fields
/// are wrong for their type still fold (the fold never reads them), one
/// that is not JSON is still reported, and the state is the one a full
/// parse of every line gives.
#[test]
fn skipped_bodies_are_scanned_not_read() {
    let lines = [
        r#"{"id":1,"at":"2026-11-29T19:00:00.000Z","type":"session.open","session_id":"20261129-190000-000-00000001","project":"/p","model":"m","pid":7,"chock_version":"0.1.0"}"#,
        r#"{"id":2,"at":"2026-11-29T19:00:01.000Z","type":"tool.call","call_id":"c1","tool":"run_command","arguments":{"argv":["true"],"nested":{"type":"compaction"}}}"#,
        r#"{"id":3,"at":"2026-11-29T19:00:02.000Z","type":"decision","action":7,"decision":["not","a","word"]}"#,
        r#"{"id":4,"at":"2026-11-29T19:00:03.000Z","type":"tool.call","call_id":"c2","arguments":{"argv":[tru}}"#,
        r#"{"id":5,"at":"2026-11-29T19:00:04.000Z","type":"user.message","text":"hi"}"#,
        r#"{"type":"handover","id":6,"at":"2026-11-29T19:00:05.000Z","to_pid":9}"#,
    ];
    let log: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let folded = fold_with(
        &log,
        Split {
            block: 1 << 30,
            workers: 1,
        },
    );
    let problems: Vec<u64> = folded
        .problems
        .iter()
        .map(|p| match p {
            ReadProblem::Invalid { line, .. } => *line,
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(problems, [4]);
    assert_eq!(folded.state.events, 5);
    assert_eq!(folded.state.last_event_id, EventId(6));
    assert_eq!(
        folded.state.conversation,
        [Message::User {
            event_id: EventId(5),
            text: "hi".into()
        }]
    );
    // A full parse rejects the decision with the wrong fields; the fold
    // skips it, and agrees with the fold of the lines that parse.
    assert!(Event::parse(lines[2].as_bytes()).is_err());
    let full: Vec<Event> = [0, 1, 4, 5]
        .iter()
        .map(|&i| Event::parse(lines[i].as_bytes()).unwrap())
        .collect();
    let mut want = SessionState::fold(&full);
    want.events += 1;
    want.last_event_id = EventId(6);
    assert_eq!(folded.state, want);
}
