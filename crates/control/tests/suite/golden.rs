//! Golden vectors: the exact bytes of every request and reply. A change here
//! is a protocol change and needs a new protocol number. A verb added
//! beside the others (`reply`) is not: no line an older peer sends or reads
//! changes, and an older daemon refuses the new verb by name.

use chock_control::{
    Answer, EventLine, GreetingError, Reply, Request, RequestError, RowLine, check_greeting_reply,
};
use pretty_assertions::assert_eq;

fn requests() -> Vec<(&'static str, Request)> {
    vec![
        ("hello chock-control 1\n", Request::Hello { protocol: 1 }),
        (
            "start /home/ada/proj\tfix the failing test\n",
            Request::Start {
                project: "/home/ada/proj".into(),
                message: "fix the failing test".into(),
            },
        ),
        (
            "adopt /home/ada/proj\t0193a0c4-s1\n",
            Request::Adopt {
                project: "/home/ada/proj".into(),
                session: "0193a0c4-s1".into(),
            },
        ),
        (
            "read 0193a0c4-s1 42\n",
            Request::Read {
                session: "0193a0c4-s1".into(),
                after: 42,
            },
        ),
        (
            "list /home/ada/my proj\n",
            Request::List {
                project: "/home/ada/my proj".into(),
            },
        ),
        (
            "watch /home/ada/proj\t0193a0c4-s1\t0\n",
            Request::Watch {
                project: "/home/ada/proj".into(),
                session: "0193a0c4-s1".into(),
                after: 0,
            },
        ),
        (
            "answer /home/ada/proj\t0193a0c4-s1\t17\tyes\n",
            Request::Answer {
                project: "/home/ada/proj".into(),
                session: "0193a0c4-s1".into(),
                request: "17".into(),
                answer: Answer::Yes,
            },
        ),
        (
            "answer /p\ts\tr-2\tno\n",
            Request::Answer {
                project: "/p".into(),
                session: "s".into(),
                request: "r-2".into(),
                answer: Answer::No,
            },
        ),
        (
            "reply /home/ada/proj\t0193a0c4-s1\t18\tuse the staging database, not prod\n",
            Request::Reply {
                project: "/home/ada/proj".into(),
                session: "0193a0c4-s1".into(),
                request: "18".into(),
                text: "use the staging database, not prod".into(),
            },
        ),
    ]
}

#[test]
fn every_verb_formats_to_its_golden_line() {
    for (line, request) in requests() {
        assert_eq!(request.to_line().unwrap(), line);
    }
}

#[test]
fn every_verb_parses_from_its_golden_line() {
    for (line, request) in requests() {
        assert_eq!(Request::parse(line.trim_end_matches('\n')), Ok(request));
    }
}

#[test]
fn a_message_keeps_its_tabs_because_it_is_the_last_field() {
    assert_eq!(
        Request::parse("start /p\tcol1\tcol2"),
        Ok(Request::Start {
            project: "/p".into(),
            message: "col1\tcol2".into()
        })
    );
}

#[test]
fn a_reply_keeps_its_tabs_because_it_is_the_last_field() {
    assert_eq!(
        Request::parse("reply /p\ts\t3\tyes\tand no"),
        Ok(Request::Reply {
            project: "/p".into(),
            session: "s".into(),
            request: "3".into(),
            text: "yes\tand no".into(),
        })
    );
}

#[test]
fn a_reply_with_a_newline_is_not_sent() {
    let request = Request::Reply {
        project: "/p".into(),
        session: "s".into(),
        request: "3".into(),
        text: "two\nlines".into(),
    };
    assert_eq!(
        request.to_line(),
        Err(RequestError::Newline { field: "reply" })
    );
}

#[test]
fn a_carriage_return_before_the_newline_is_tolerated() {
    assert_eq!(
        Request::parse("read s 3\r"),
        Ok(Request::Read {
            session: "s".into(),
            after: 3
        })
    );
}

fn malformed(line: &str) -> String {
    match Request::parse(line) {
        Err(err @ RequestError::Malformed { .. }) => err.to_string(),
        other => panic!("{line:?} gave {other:?}"),
    }
}

#[test]
fn malformed_fields_are_refused_naming_the_expected_shape() {
    assert_eq!(
        malformed("read abc"),
        "malformed 'read' request: expected 'read <session id> <last event id>', got 'read abc'"
    );
    assert_eq!(
        malformed("read abc -1"),
        "malformed 'read' request: expected 'read <session id> <last event id>', got 'read abc -1'"
    );
    assert_eq!(
        malformed("watch /p\ts"),
        "malformed 'watch' request: expected 'watch <project directory>\\t<session id>\\t<last event id>', got 'watch /p?s'"
    );
    assert_eq!(
        malformed("answer /p\ts\t1\tmaybe"),
        "malformed 'answer' request: expected 'answer <project directory>\\t<session id>\\t<request id>\\t<yes|no>', got 'answer /p?s?1?maybe'"
    );
    for line in [
        "hello",
        "hello chock-control",
        "hello chock-control x",
        "hello other-proto 1",
        "hello chock-control +1",
        "start /p",
        "start \tmessage",
        "start /p\t",
        "adopt /p",
        "adopt /p\ts\textra",
        "read s 1 2",
        "read s 99999999999999999999999",
        "list",
        "list /p\textra",
        "watch /p\ts\tx",
        "watch /p\t\t1",
        "answer /p\ts\t1",
        "answer /p\ts\tr 1\tyes",
        "reply /p\ts\t1",
        "reply /p\ts\t1\t",
        "reply /p\ts\tr 1\ttext",
        "reply /p\t\t1\ttext",
    ] {
        malformed(line);
    }
}

#[test]
fn unknown_and_empty_verbs_are_refused_listing_the_verbs() {
    assert_eq!(
        Request::parse("frobnicate x").unwrap_err().to_string(),
        "unknown verb 'frobnicate': the verbs are start, adopt, read, list, watch, answer, reply, diff, apply, discard, all, rows, continue, interrupt, stop, detach"
    );
    assert_eq!(
        Request::parse("").unwrap_err().to_string(),
        "empty request: send one of start, adopt, read, list, watch, answer, reply, diff, apply, discard, all, rows, continue, interrupt, stop, detach"
    );
    assert_eq!(
        Request::parse("\u{1b}[2J\u{7}").unwrap_err().to_string(),
        "unknown verb '?[2J?': the verbs are start, adopt, read, list, watch, answer, reply, diff, apply, discard, all, rows, continue, interrupt, stop, detach"
    );
}

#[test]
fn a_request_that_cannot_be_sent_faithfully_is_refused_before_sending() {
    let err = Request::Start {
        project: "/p".into(),
        message: "two\nlines".into(),
    }
    .to_line()
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "the message holds a newline, which would end the request early: remove it"
    );
    let err = Request::Adopt {
        project: "/with\ttab".into(),
        session: "s".into(),
    }
    .to_line()
    .unwrap_err();
    assert!(
        matches!(err, RequestError::Unsendable { verb: "adopt", .. }),
        "{err:?}"
    );
    let err = Request::Read {
        session: "has space".into(),
        after: 1,
    }
    .to_line()
    .unwrap_err();
    assert!(
        matches!(err, RequestError::Unsendable { verb: "read", .. }),
        "{err:?}"
    );
}

#[test]
fn every_reply_formats_to_its_golden_line() {
    let cases = [
        (Reply::Greeting, "ok chock-control 1\n".to_owned()),
        (
            Reply::Mismatch { client: 2 },
            "error chock-control 1\tprotocol mismatch: this daemon speaks chock-control 1 and the client chock-control 2; update the older of the two\n".to_owned(),
        ),
        (
            Reply::NoGreeting { got: "list /p".into() },
            "error no greeting: a connection opens with 'hello chock-control <n>' (this daemon speaks chock-control 1), not with 'list /p'; update the client\n".to_owned(),
        ),
        (
            Reply::Started { session: "s1".into(), log: "/state/sessions/s1/log.jsonl".into() },
            "ok s1\t/state/sessions/s1/log.jsonl\n".to_owned(),
        ),
        (Reply::Answered, "ok answered\n".to_owned()),
        (
            Reply::WatchHeader { session: "s1".into(), row: r#"{"id":"s1","status":"running"}"#.into() },
            "ok s1\t{\"id\":\"s1\",\"status\":\"running\"}\n".to_owned(),
        ),
        (
            Reply::Row { started_at: "2026-11-29T19:00:00Z".into(), row: r#"{"id":"s1"}"#.into() },
            "2026-11-29T19:00:00Z\t{\"id\":\"s1\"}\n".to_owned(),
        ),
        (
            Reply::Event(r#"{"id":1,"at":"2026-11-29T19:00:00Z","type":"session.open"}"#.into()),
            "{\"id\":1,\"at\":\"2026-11-29T19:00:00Z\",\"type\":\"session.open\"}\n".to_owned(),
        ),
        (Reply::Error("no session s9\nanywhere".into()), "error no session s9 anywhere\n".to_owned()),
    ];
    for (reply, line) in cases {
        assert_eq!(reply.to_line(), line);
    }
}

#[test]
fn the_client_checks_numbers_not_the_shape_of_the_reply() {
    assert_eq!(check_greeting_reply("ok chock-control 1", 1), Ok(()));
    assert_eq!(
        check_greeting_reply("ok chock-control 2", 1),
        Err(GreetingError::Mismatch {
            daemon: 2,
            client: 1
        })
    );
    let refused = Reply::Mismatch { client: 1 }.to_line();
    // A daemon speaking 1 refusing a client speaking 1 cannot happen; a
    // daemon speaking 1 refusing a client speaking 7 reads as a mismatch.
    assert_eq!(
        check_greeting_reply(refused.trim_end(), 7),
        Err(GreetingError::Mismatch {
            daemon: 1,
            client: 7
        })
    );
    assert_eq!(
        check_greeting_reply("welcome chock-control 3 friend", 1),
        Err(GreetingError::Mismatch {
            daemon: 3,
            client: 1
        })
    );
    assert_eq!(
        GreetingError::Mismatch {
            daemon: 2,
            client: 1
        }
        .to_string(),
        "protocol mismatch: the daemon speaks chock-control 2 and this client chock-control 1; update the older of the two"
    );
    assert!(matches!(
        check_greeting_reply("error refused: uid 5 is not uid 0", 1),
        Err(GreetingError::Refused(m)) if m == "refused: uid 5 is not uid 0"
    ));
    assert!(matches!(
        check_greeting_reply("SSH-2.0-OpenSSH_9.2", 1),
        Err(GreetingError::NotAGreeting(_))
    ));
}

#[test]
fn rows_and_events_parse_back() {
    let row = RowLine::parse("2026-11-29T19:00:00Z\t{\"id\":\"s1\",\"future\":true}").unwrap();
    assert_eq!(row.started_at, "2026-11-29T19:00:00Z");
    assert_eq!(row.value()["future"], true);
    assert_eq!(RowLine::parse("2026\t[1]"), None);
    assert_eq!(RowLine::parse("no tab"), None);
    // The row is kept as the text that came, checked to be whole JSON.
    assert_eq!(row.row.get(), "{\"id\":\"s1\",\"future\":true}");
    assert_eq!(row.session_row().unwrap().id, "s1");
    assert_eq!(RowLine::parse("2026\t{\"id\":\"s1\""), None, "a torn row");
    assert_eq!(RowLine::parse("2026\t{\"id\":1} {}"), None, "two values");
    assert_eq!(
        RowLine::parse("2026\t\"{}\""),
        None,
        "a string, not an object"
    );
    assert_eq!(RowLine::parse("\t{}"), None, "no started-at");
    let line = r#"{"id":7,"at":"x","type":"unknown.kind","extra":{}}"#;
    assert_eq!(
        EventLine::parse(line),
        Some(EventLine {
            id: 7,
            line: line.into()
        })
    );
    assert_eq!(EventLine::parse("{\"at\":\"x\"}"), None);
}
