//! Golden exchanges over the daemon's real socket: the greeting, and every
//! refusal (wrong number, verb before greeting, unknown verb, malformed
//! fields), byte for byte.

use pretty_assertions::assert_eq;

use super::{GREETING, HasTestDirs, StandIn, TestDaemon};

const OK: &str = "ok chock-control 1";

#[tokio::test(flavor = "multi_thread")]
async fn a_matching_greeting_is_answered_with_the_daemons_number() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    let input = format!("hello chock-control 1\nlist {}\n", h.project_text());
    assert_eq!(h.raw(input.as_bytes()).await, [OK]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wrong_number_is_refused_naming_both_and_the_verb_is_never_read() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    // The start below would create a session if the daemon read past the
    // greeting; it must not.
    let input = format!(
        "hello chock-control 2\nstart {}\tdo something\n",
        h.project_text()
    );
    assert_eq!(
        h.raw(input.as_bytes()).await,
        [
            "error chock-control 1\tprotocol mismatch: this daemon speaks chock-control 1 and the client chock-control 2; update the older of the two"
        ]
    );
    assert!(
        !h.state().join("sessions").exists(),
        "nothing below the greeting may run"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_client_library_names_both_numbers_too() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    let err = h.client().with_protocol(0).ping().await.unwrap_err();
    assert!(
        err.to_string()
            .contains("the daemon speaks chock-control 1 and this client chock-control 0"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_opens_with_a_verb_is_told_it_sent_no_greeting() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    assert_eq!(
        h.raw(b"list /tmp\n").await,
        [
            "error no greeting: a connection opens with 'hello chock-control <n>' (this daemon speaks chock-control 1), not with 'list /tmp'; update the client"
        ]
    );
    assert_eq!(
        h.raw(b"read abc 0\n").await,
        [
            "error no greeting: a connection opens with 'hello chock-control <n>' (this daemon speaks chock-control 1), not with 'read abc 0'; update the client"
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_malformed_greeting_is_refused_with_its_shape() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    assert_eq!(
        h.raw(b"hello chock-control one\n").await,
        [
            "error malformed 'hello' request: expected 'hello chock-control <protocol number>', got 'hello chock-control one'"
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_verb_is_refused_listing_the_verbs() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    let mut input = GREETING.to_vec();
    input.extend_from_slice(b"frobnicate /p\n");
    assert_eq!(
        h.raw(&input).await,
        [
            OK,
            "error unknown verb 'frobnicate': the verbs are start, adopt, read, list, watch, answer, reply, continue, interrupt, stop, detach"
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_second_greeting_is_refused() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    let mut input = GREETING.to_vec();
    input.extend_from_slice(GREETING);
    assert_eq!(
        h.raw(&input).await,
        [OK, "error this connection already greeted: send one verb"]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn malformed_fields_of_every_verb_are_refused_with_the_expected_shape() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    let cases = [
        (
            "start /p",
            "malformed 'start' request: expected 'start <project directory>\\t<message>', got 'start /p'",
        ),
        (
            "adopt /p",
            "malformed 'adopt' request: expected 'adopt <project directory>\\t<session id>', got 'adopt /p'",
        ),
        (
            "read s x",
            "malformed 'read' request: expected 'read <session id> <last event id>', got 'read s x'",
        ),
        (
            "list",
            "malformed 'list' request: expected 'list <project directory>', got 'list'",
        ),
        (
            "watch /p\ts",
            "malformed 'watch' request: expected 'watch <project directory>\\t<session id>\\t<last event id>', got 'watch /p?s'",
        ),
        (
            "answer /p\ts\tr1\tperhaps",
            "malformed 'answer' request: expected 'answer <project directory>\\t<session id>\\t<request id>\\t<yes|no>', got 'answer /p?s?r1?perhaps'",
        ),
    ];
    for (line, error) in cases {
        let mut input = GREETING.to_vec();
        input.extend_from_slice(line.as_bytes());
        input.push(b'\n');
        assert_eq!(
            h.raw(&input).await,
            [OK.to_owned(), format!("error {error}")],
            "{line}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn well_formed_requests_with_bad_values_are_refused_by_name() {
    let h = TestDaemon::boot(StandIn::EndsOnRelease).await;
    let project = h.project_text();
    let cases = [
        (
            "read ../../etc 0".to_owned(),
            "error '../../etc' is not a session id (ids look like 20261129-192736-123-7f3a9c1e): 'list <project directory>' shows the sessions".to_owned(),
        ),
        (
            "read 20991231-235959-999-ffffffff 0".to_owned(),
            "error no session 20991231-235959-999-ffffffff on this daemon's machine: 'list <project directory>' shows the sessions".to_owned(),
        ),
        (
            "list relative/dir".to_owned(),
            "error project directory 'relative/dir' is not an absolute path: send the full path".to_owned(),
        ),
        (
            format!("watch {project}\t20991231-235959-999-ffffffff\t0"),
            "error no session 20991231-235959-999-ffffffff on this daemon's machine: 'list <project directory>' shows the sessions".to_owned(),
        ),
    ];
    for (line, reply) in cases {
        let mut input = GREETING.to_vec();
        input.extend_from_slice(line.as_bytes());
        input.push(b'\n');
        assert_eq!(h.raw(&input).await, [OK.to_owned(), reply], "{line}");
    }
    let missing = h
        .raw(format!("hello chock-control 1\nlist {project}/absent\n").as_bytes())
        .await;
    assert!(
        missing[1].starts_with(&format!(
            "error no project directory {project}/absent on the daemon's machine"
        )),
        "{missing:?}"
    );
}
