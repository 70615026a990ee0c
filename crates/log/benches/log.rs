//! Session-log benchmarks: append with and without fsync, the fold over a
//! generated 1,000,000-event log (bytes/s), and reading the last 10 events
//! of that log by binary search. The log is generated into a temporary
//! directory on each run and never checked in.
//!
//! Run: `cargo bench -p chock-log --bench log`

#![expect(
    clippy::unwrap_used,
    reason = "a benchmark that cannot set up has nothing to measure"
)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use chock_log::event::{
    AssistantMessage, Compaction, Decision, Json, PlanItem, PlanStatus, PlanUpdate, SessionOpen,
    ToolCall, ToolCallEvent, ToolResult, TurnEnd, Usage, UserMessage,
};
use chock_log::{Event, EventBody, EventId, LogWriter, SessionId, StateDir, Timestamp};
use chock_testkit::CpuTime;
use criterion::measurement::Measurement;
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};

const EVENTS: u64 = 1_000_000;

/// A realistic mix, one turn at a time: a person's message now and then, a
/// model call asking for a tool, the policy's decision, the call, its output
/// (a few hundred bytes to a few KiB, as command output is), the turn's end,
/// a plan update every few turns and a compaction every ~10,000 events.
fn generate(path: &Path) -> u64 {
    let id = SessionId::new();
    let mut out = Vec::with_capacity(400 << 20);
    let mut n = 0u64;
    let t0 = Timestamp::parse("2026-11-29T08:00:00Z")
        .unwrap()
        .unix_millis();
    let push = |body: EventBody, out: &mut Vec<u8>, n: &mut u64| {
        *n += 1;
        let event = Event {
            id: EventId(*n),
            at: Timestamp::from_unix_millis(t0 + (*n as i64) * 37),
            body,
        };
        event.write_line(out).unwrap();
    };
    push(
        SessionOpen {
            session_id: id,
            project: "/home/ann/project".into(),
            model: "claude-sonnet".into(),
            pid: 4242,
            chock_version: "0.1.0".into(),
            parent: None,
        }
        .into(),
        &mut out,
        &mut n,
    );
    let mut turn = 0u64;
    while n < EVENTS {
        turn += 1;
        if turn % 5 == 1 {
            push(
                UserMessage {
                    text: format!("Please look at test case {turn} and make it pass; keep the change small and explain what was wrong."),
                }
                .into(),
                &mut out,
                &mut n,
            );
        }
        let call = format!("call_{turn}");
        let args = Json::parse(format!(
            r#"{{"argv":["cargo","test","-p","parser","--","case_{turn}"],"cwd":"crates/parser"}}"#
        ))
        .unwrap();
        push(
            AssistantMessage {
                text:
                    "I will run the failing test to see what it reports before changing anything."
                        .into(),
                tool_calls: vec![ToolCall {
                    id: call.clone(),
                    name: "run_command".into(),
                    arguments: args.clone(),
                }],
                usage: Usage {
                    input_tokens: 12_000 + turn % 5000,
                    output_tokens: 150 + turn % 300,
                    ..Default::default()
                },
                model: None,
                ..AssistantMessage::default()
            }
            .into(),
            &mut out,
            &mut n,
        );
        push(
            Decision {
                action: "exec.cargo".into(),
                decision: "allow".into(),
                layer: "default".into(),
                rule: ".exec.cargo = .allow".into(),
                call_id: Some(call.clone()),
            }
            .into(),
            &mut out,
            &mut n,
        );
        push(
            ToolCallEvent {
                call_id: call.clone(),
                tool: "run_command".into(),
                arguments: args,
                session: None,
            }
            .into(),
            &mut out,
            &mut n,
        );
        let lines = 4 + (turn * 7919) % 40;
        let mut output = String::new();
        for i in 0..lines {
            output.push_str(&format!("test parser::tests::case_{i} ... ok\n"));
        }
        output.push_str("error[E0308]: mismatched types\n  --> src/lib.rs:42:9\n   |\n42 |         \"text\"\n   |         ^^^^^^ expected `u32`, found `&str`\n");
        push(
            ToolResult {
                call_id: call,
                ok: !turn.is_multiple_of(3),
                output,
                truncated: false,
                diff: None,
            }
            .into(),
            &mut out,
            &mut n,
        );
        if turn.is_multiple_of(4) {
            push(
                PlanUpdate {
                    items: vec![
                        PlanItem {
                            text: "Reproduce the failure".into(),
                            status: PlanStatus::Done,
                        },
                        PlanItem {
                            text: "Fix the type error".into(),
                            status: PlanStatus::InProgress,
                        },
                        PlanItem {
                            text: "Run the whole suite".into(),
                            status: PlanStatus::Pending,
                        },
                    ],
                }
                .into(),
                &mut out,
                &mut n,
            );
        }
        if n % 10_000 < 7 && n > 10 {
            push(
                Compaction { summary: "So far: the parser's case tests fail on a type error at src/lib.rs:42; the fix in progress changes the literal to a number.".into(), up_to: EventId(n), usage: None, tokens: None, counted_by: None }.into(),
                &mut out,
                &mut n,
            );
        }
        push(TurnEnd {}.into(), &mut out, &mut n);
    }
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, &out).unwrap();
    n
}

struct Generated {
    _tmp: tempfile::TempDir,
    path: PathBuf,
    events: u64,
    bytes: u64,
}

fn generated() -> Generated {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("sessions/x/log.jsonl");
    let events = generate(&path);
    let bytes = std::fs::metadata(&path).unwrap().len();
    eprintln!(
        "generated {events} events, {bytes} bytes ({:.1} bytes/event)",
        bytes as f64 / events as f64
    );
    Generated {
        _tmp: tmp,
        path,
        events,
        bytes,
    }
}

fn append(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let state = StateDir::at(tmp.path());
    let mut w = LogWriter::create(&state, &SessionId::new()).unwrap();
    let mut group = c.benchmark_group("append");
    group.throughput(Throughput::Elements(1));
    group.bench_function("user.message (no fsync)", |b| {
        b.iter_batched(
            || UserMessage {
                text: "Please make the failing test pass.".into(),
            },
            |m| black_box(w.append(m).unwrap()),
            BatchSize::SmallInput,
        );
    });
    group.bench_function("turn.end (fdatasync)", |b| {
        b.iter(|| black_box(w.append(TurnEnd {}).unwrap()));
    });
    group.finish();
}

fn fold_and_read<M: Measurement>(c: &mut Criterion<M>, label: &str) {
    let log = generated();
    let mut group = c.benchmark_group(format!("fold{label}"));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    group.throughput(Throughput::Bytes(log.bytes));
    group.bench_function("1M events", |b| {
        b.iter(|| {
            let folded = chock_log::fold_log(&log.path).unwrap();
            assert_eq!(folded.state.last_event_id.0, log.events);
            black_box(folded)
        });
    });
    // The parse alone (every line into an Event, nothing folded), to show
    // where the fold's time goes.
    let text = std::fs::read(&log.path).unwrap();
    group.bench_function("parse only, 1M events", |b| {
        b.iter(|| {
            let mut n = 0u64;
            for line in text.split(|c| *c == b'\n').filter(|l| !l.is_empty()) {
                n += black_box(Event::parse(line).unwrap()).id.0 & 1;
            }
            n
        });
    });
    group.finish();

    let mut group = c.benchmark_group(format!("read_after{label}"));
    group.bench_function("last 10 of 1M", |b| {
        b.iter(|| {
            let batch = chock_log::read_after(&log.path, EventId(log.events - 10)).unwrap();
            assert_eq!(batch.events.len(), 10);
            black_box(batch)
        });
    });
    group.finish();

    let mut group = c.benchmark_group(format!("read_after_whole{label}"));
    group.sample_size(10);
    group.throughput(Throughput::Bytes(log.bytes));
    group.bench_function("from 0 of 1M", |b| {
        b.iter(|| {
            black_box(
                chock_log::read_after(&log.path, EventId::NONE)
                    .unwrap()
                    .events
                    .len(),
            )
        });
    });
    group.finish();
}

fn wall(c: &mut Criterion) {
    fold_and_read(c, "");
}

fn cpu(c: &mut Criterion<CpuTime>) {
    fold_and_read(c, " (cpu time)");
}

criterion_group!(benches, append, wall);
criterion_group! {
    name = cpu_benches;
    config = Criterion::default().with_measurement(CpuTime);
    targets = cpu
}
criterion_main!(benches, cpu_benches);
