//! The whole-log fold split into blocks of every awkward size, on one
//! thread and on several: it must fold and report exactly what one forward
//! read does.

use std::io::Write as _;

use pretty_assertions::assert_eq;

use super::*;
use crate::blocks::Split;

/// The whole log as one block, parsed on the calling thread.
const ONE_BLOCK: Split = Split {
    block: 1 << 30,
    workers: 1,
};

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
    let sequential = fold_with(&log, ONE_BLOCK);
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
    let folded = fold_with(&log, ONE_BLOCK);
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

const OPEN: &str = r#"{"id":1,"at":"2026-11-29T19:00:00.000Z","type":"session.open","session_id":"20261129-190000-000-00000001","project":"/p","model":"m","pid":7,"chock_version":"0.1.0"}"#;

/// Lines of a conversation from id `from` on, `turns` turns of a model
/// message asking for a tool (its cost, text and call) and the result.
fn turns(from: u64, turns: u64) -> Vec<String> {
    let mut lines = Vec::new();
    for i in 0..turns {
        let id = from + 2 * i;
        lines.push(format!(
            r#"{{"id":{id},"at":"2026-11-29T19:00:01.000Z","type":"assistant.message","text":"turn {id} \"quoted\"","tool_calls":[{{"id":"c{id}","name":"run_command","arguments":{{"argv":["true"]}}}}],"usage":{{"input_tokens":{id},"output_tokens":3}},"model":"m{id}"}}"#
        ));
        lines.push(format!(
            r#"{{"id":{},"at":"2026-11-29T19:00:02.000Z","type":"tool.result","call_id":"c{id}","ok":true,"output":"out {id}: {{\"type\":\"compaction\"}}"}}"#,
            id + 1
        ));
    }
    lines
}

fn compaction(id: u64, up_to: u64) -> String {
    format!(
        r#"{{"id":{id},"at":"2026-11-29T19:00:03.000Z","type":"compaction","summary":"up to {up_to}","up_to":{up_to},"usage":{{"input_tokens":5,"output_tokens":1}}}}"#
    )
}

fn joined(lines: &[String]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

fn cut_of(log: &str) -> Option<Cut> {
    let mut file = tempfile::tempfile().unwrap();
    file.write_all(log.as_bytes()).unwrap();
    Cut::last_in(&file, log.len() as u64).unwrap()
}

/// Folds `log` every way (one block, small blocks on several threads, and
/// as a row) and checks each against the fold of a full parse of `folds`.
fn folds_as_a_full_parse(log: &str, folds: &[String]) {
    let want = expected(folds);
    for split in [
        ONE_BLOCK,
        Split {
            block: 333,
            workers: 3,
        },
    ] {
        assert_eq!(fold_with(log, split).state, want, "{split:?}");
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.jsonl");
    std::fs::write(&path, log).unwrap();
    let id = SessionId::parse("20261129-190000-000-00000001").unwrap();
    assert_eq!(
        crate::SessionRow::from_state(&id, &fold_row(&path).unwrap().state),
        crate::SessionRow::from_state(&id, &want)
    );
}

/// Behind the log's last compaction the fold reads results and model
/// messages only for their cost; the state is the one a full parse of
/// every line gives: every model call's cost, the conversation after the
/// compaction whole.
#[test]
fn a_compaction_lets_the_fold_skip_what_it_drops_and_fold_the_same() {
    let mut lines = vec![OPEN.to_owned()];
    lines.extend(turns(2, 20));
    lines.push(compaction(42, 30));
    lines.extend(turns(43, 3));
    let log = joined(&lines);
    assert_eq!(
        cut_of(&log),
        Some(Cut {
            compaction: EventId(42),
            up_to: EventId(30)
        })
    );
    folds_as_a_full_parse(&log, &lines);
    let state = fold_with(&log, ONE_BLOCK).state;
    assert_eq!(state.model_calls.len(), 23);
    // After the summary: the messages from 31 on, with their text.
    assert_eq!(state.conversation[0].event_id(), EventId(42));
    assert_eq!(state.conversation[1].event_id(), EventId(31));
    assert!(
        matches!(&state.conversation[2], Message::Assistant { text, .. } if text == r#"turn 32 "quoted""#)
    );
}

/// A last compaction the fold does not fold (its id out of order) is no
/// cut: the log is folded again reading every body, and the messages it
/// would have dropped are kept whole.
#[test]
fn a_last_compaction_out_of_order_is_folded_again_in_full() {
    let mut lines = vec![OPEN.to_owned()];
    lines.extend(turns(2, 10));
    let folds = lines.clone();
    lines.push(compaction(5, 20));
    let log = joined(&lines);
    assert_eq!(
        cut_of(&log),
        Some(Cut {
            compaction: EventId(5),
            up_to: EventId(20)
        })
    );
    folds_as_a_full_parse(&log, &folds);
    let folded = fold_with(&log, ONE_BLOCK);
    assert!(matches!(
        folded.problems[..],
        [ReadProblem::OutOfOrder { line: 22, .. }]
    ));
    assert!(
        matches!(&folded.state.conversation[0], Message::Assistant { text, .. } if text == r#"turn 2 "quoted""#)
    );
}

/// What only looks like a compaction is passed over for the one before:
/// a line that is not JSON, an event of another type with a nested
/// `"type":"compaction"`, and (in every result) the text escaped.
#[test]
fn the_cut_is_the_last_line_that_is_a_compaction() {
    let mut lines = vec![OPEN.to_owned()];
    lines.extend(turns(2, 10));
    lines.push(compaction(22, 12));
    let mut folds = lines.clone();
    let future = r#"{"id":23,"at":"2026-11-29T19:00:05.000Z","type":"from.the.future","x":{"type":"compaction","up_to":22}}"#;
    lines.push(future.to_owned());
    folds.push(future.to_owned());
    lines.push(
        r#"{"id":24,"at":"2026-11-29T19:00:06.000Z","type":"compaction","summary":"torn"#
            .to_owned(),
    );
    let tail = turns(25, 2);
    lines.extend(tail.iter().cloned());
    folds.extend(tail);
    let log = joined(&lines);
    assert_eq!(
        cut_of(&log),
        Some(Cut {
            compaction: EventId(22),
            up_to: EventId(12)
        })
    );
    folds_as_a_full_parse(&log, &folds);
    let no_compaction = joined(&turns(2, 5));
    assert_eq!(cut_of(&no_compaction), None);
    assert_eq!(cut_of(""), None);
}

/// The backward scan reads a block at a time: a compaction whose line
/// starts or whose type falls on either side of a block's start is found.
#[test]
fn a_compaction_across_a_block_boundary_is_found() {
    const BLOCK: usize = 1 << 20;
    let mut head = vec![OPEN.to_owned()];
    head.extend(turns(2, 10));
    let compaction = compaction(22, 12);
    let type_at = compaction.find(r#","type":"compaction""#).unwrap();
    let after_type = compaction.len() + 1 - type_at;
    let result = |output: usize| {
        format!(
            r#"{{"id":23,"at":"2026-11-29T19:00:05.000Z","type":"tool.result","call_id":"c","output":"{}"}}"#,
            "x".repeat(output)
        )
    };
    let bare = result(0).len() + 1;
    for past_start in [-90_i64, -40, -1, 0, 1, 20, 60, 79, 80, 81, 200] {
        // The needle starts `past_start` bytes after the last block's start.
        let tail_len = (BLOCK as i64 - past_start) as usize - after_type;
        let mut lines = head.clone();
        lines.push(compaction.clone());
        lines.push(result(tail_len - bare));
        let log = joined(&lines);
        assert_eq!(
            (log.len() - log.rfind(r#","type":"compaction""#).unwrap()) as i64,
            BLOCK as i64 - past_start,
            "{past_start}"
        );
        assert_eq!(
            cut_of(&log),
            Some(Cut {
                compaction: EventId(22),
                up_to: EventId(12)
            }),
            "{past_start}"
        );
        if past_start == 0 {
            folds_as_a_full_parse(&log, &lines);
        }
    }
}
