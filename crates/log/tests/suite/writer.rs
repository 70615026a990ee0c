//! The writer: numbering, one line per event, torn-tail repair, ownership.

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use chock_log::event::{EndReason, SessionEnd, TitleSet, UserMessage};
use chock_log::{EventId, LogWriter, SessionId, WriteError, read_after};

use super::{ids, line, temp_state, write};

#[test]
fn events_are_numbered_from_one_and_each_is_one_line() {
    let t = temp_state();
    let id = SessionId::new();
    let mut w = LogWriter::create(&t.state, &id).unwrap();
    for i in 1..=3u64 {
        let event = w
            .append(TitleSet {
                title: format!("t{i}"),
            })
            .unwrap();
        assert_eq!(event.id, EventId(i));
    }
    let text = fs::read_to_string(t.state.log_path(&id)).unwrap();
    assert_eq!(text.lines().count(), 3);
    assert!(text.ends_with('\n'));
    assert!(text.starts_with("{\"id\":1,\"at\":\""), "{text}");
}

#[test]
fn log_file_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let t = temp_state();
    let (_, path) = super::session_with(&t.state, 1);
    let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

#[test]
fn reopening_continues_the_numbering() {
    let t = temp_state();
    let (_, path) = super::session_with(&t.state, 4);
    let mut w = LogWriter::open(&path).unwrap();
    assert_eq!(w.last_id(), EventId(5));
    assert_eq!(append_text(&mut w, "more"), EventId(6));
}

#[test]
fn create_refuses_an_existing_log_and_keeps_it() {
    let t = temp_state();
    let (id, path) = super::session_with(&t.state, 2);
    let before = fs::read(&path).unwrap();
    let err = LogWriter::create(&t.state, &id).unwrap_err();
    assert!(matches!(err, WriteError::Exists { .. }), "{err}");
    assert!(err.to_string().contains("already exists"), "{err}");
    assert_eq!(fs::read(&path).unwrap(), before);
}

#[test]
fn torn_tail_is_cut_before_the_first_append_and_nothing_else_is_lost() {
    let t = temp_state();
    let path = t.state.sessions().join("x/log.jsonl");
    let whole = format!("{}{}", line(1, "a"), line(2, "b"));
    write(&path, &format!("{whole}{{\"id\":3,\"at\":\"2026-"));
    // A reader skips the torn line and still sees both events.
    let batch = read_after(&path, EventId::NONE).unwrap();
    assert_eq!(ids(&batch.events), [1, 2]);
    assert!(batch.torn_tail);
    assert!(batch.problems.is_empty(), "{:?}", batch.problems);
    let mut w = LogWriter::open(&path).unwrap();
    assert_eq!(fs::read_to_string(&path).unwrap(), whole);
    assert_eq!(append_text(&mut w, "c"), EventId(3));
    let batch = read_after(&path, EventId::NONE).unwrap();
    assert_eq!(ids(&batch.events), [1, 2, 3]);
    assert!(!batch.torn_tail);
}

#[test]
fn numbering_skips_a_broken_last_line() {
    let t = temp_state();
    let path = t.state.sessions().join("x/log.jsonl");
    write(
        &path,
        &format!("{}{}not json\n", line(1, "a"), line(2, "b")),
    );
    let mut w = LogWriter::open(&path).unwrap();
    assert_eq!(append_text(&mut w, "c"), EventId(3));
}

#[test]
fn a_second_writer_in_this_process_is_refused_with_our_pid() {
    let t = temp_state();
    let id = SessionId::new();
    let _first = LogWriter::create(&t.state, &id).unwrap();
    let err = LogWriter::open(t.state.log_path(&id)).unwrap_err();
    match &err {
        WriteError::Owned { pid, .. } => assert_eq!(*pid, Some(std::process::id())),
        other => panic!("{other}"),
    }
    let text = err.to_string();
    assert!(text.contains("is owned by process"), "{text}");
}

#[test]
fn dropping_the_writer_releases_the_lock() {
    let t = temp_state();
    let id = SessionId::new();
    drop(LogWriter::create(&t.state, &id).unwrap());
    LogWriter::open(t.state.log_path(&id)).unwrap();
}

#[test]
fn open_of_a_missing_log_names_it() {
    let t = temp_state();
    let path = t.state.sessions().join("nope/log.jsonl");
    let err = LogWriter::open(&path).unwrap_err();
    assert!(
        err.to_string().contains(&path.display().to_string()),
        "{err}"
    );
}

/// Not a test of its own: the child that `a_log_owned_by_another_process_*`
/// starts. It opens the writer named by CHOCK_TEST_HOLD, says so, and holds
/// the lock until its stdin closes.
#[test]
#[ignore = "helper process for another test"]
fn hold_lock_helper() {
    let Some(path) = std::env::var_os("CHOCK_TEST_HOLD") else {
        return;
    };
    let mut w = LogWriter::open(path).unwrap();
    w.append(SessionEnd {
        reason: EndReason::Done,
        detail: "held".into(),
    })
    .unwrap();
    println!("locked");
    std::io::stdout().flush().unwrap();
    let mut sink = String::new();
    let _ = std::io::stdin().read_line(&mut sink);
}

#[test]
fn a_log_owned_by_another_process_is_refused_naming_its_pid() {
    let t = temp_state();
    let (_, path) = super::session_with(&t.state, 1);
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "suite::writer::hold_lock_helper",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("CHOCK_TEST_HOLD", &path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut seen = String::new();
    while !seen.contains("locked") {
        let mut l = String::new();
        assert_ne!(
            out.read_line(&mut l).unwrap(),
            0,
            "helper exited early: {seen}"
        );
        seen.push_str(&l);
    }
    let before = fs::read(&path).unwrap();
    let err = LogWriter::open(&path).unwrap_err();
    match &err {
        WriteError::Owned { pid, .. } => assert_eq!(*pid, Some(child.id())),
        other => panic!("{other}"),
    }
    assert!(
        err.to_string().contains(&format!("process {}", child.id())),
        "{err}"
    );
    assert_eq!(
        fs::read(&path).unwrap(),
        before,
        "a refused writer changed the log"
    );
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());
    // Once the holder is gone the log can be taken over and carried on.
    let mut w = LogWriter::open(&path).unwrap();
    assert_eq!(w.last_id(), EventId(3));
    assert_eq!(append_text(&mut w, "mine"), EventId(4));
}

/// Not a test of its own: the child of `a_failed_write_leaves_no_torn_line`.
/// With the file-size limit just above the log's size, an append that does
/// not fit fails part way; the writer must cut it back and carry on.
#[test]
#[ignore = "helper process for another test"]
fn file_size_limit_helper() {
    let Some(path) = std::env::var_os("CHOCK_TEST_FSIZE") else {
        return;
    };
    // SAFETY: ignoring SIGXFSZ before any other thread of this process
    // writes; the write then fails with EFBIG instead of killing us.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    let mut w = LogWriter::open(&path).unwrap();
    let len = fs::metadata(&path).unwrap().len();
    let limit = len + 200;
    rustix::process::setrlimit(
        rustix::process::Resource::Fsize,
        rustix::process::Rlimit {
            current: Some(limit),
            maximum: None,
        },
    )
    .unwrap();
    let err = w
        .append(UserMessage {
            text: "x".repeat(1000),
        })
        .unwrap_err();
    assert!(matches!(err, WriteError::Append { .. }), "{err}");
    assert!(
        err.to_string().contains("the event was not written"),
        "{err}"
    );
    assert_eq!(
        fs::metadata(&path).unwrap().len(),
        len,
        "a torn line was left behind"
    );
    let event = w
        .append(UserMessage {
            text: "small".into(),
        })
        .unwrap();
    println!("ok {}", event.id);
}

#[test]
fn a_failed_write_leaves_no_torn_line() {
    let t = temp_state();
    let (_, path) = super::session_with(&t.state, 2);
    let before = fs::read_to_string(&path).unwrap();
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "suite::writer::file_size_limit_helper",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("CHOCK_TEST_FSIZE", &path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The failed event took no id: the next one got 4, right after 3.
    assert!(stdout.contains("ok 4"), "{stdout}");
    let after = fs::read_to_string(&path).unwrap();
    assert!(after.starts_with(&before));
    let batch = read_after(&path, EventId::NONE).unwrap();
    assert_eq!(ids(&batch.events), [1, 2, 3, 4]);
    assert!(batch.problems.is_empty() && !batch.torn_tail);
}

/// Appends a user message saying `text`; its id.
fn append_text(w: &mut LogWriter, text: &str) -> EventId {
    w.append(UserMessage { text: text.into() }).unwrap().id
}
