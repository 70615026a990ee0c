//! The workspace and row-feed verbs' lines: each request formats to its
//! golden line and parses back, each bad shape is refused naming the
//! expected one, and the replies' own lines are what protocol.md says.

use chock_control::{Reply, Request, RequestError, WorkspaceDiff};
use pretty_assertions::assert_eq;

fn requests() -> Vec<(&'static str, Request)> {
    vec![
        (
            "diff /home/ada/proj\t20261129-190000-001-00000001\t65536\n",
            Request::Diff {
                project: "/home/ada/proj".into(),
                session: "20261129-190000-001-00000001".into(),
                limit: 65536,
            },
        ),
        (
            "apply /p\ts1\n",
            Request::Apply {
                project: "/p".into(),
                session: "s1".into(),
            },
        ),
        (
            "discard /p\ts1\n",
            Request::Discard {
                project: "/p".into(),
                session: "s1".into(),
            },
        ),
        ("all\n", Request::All),
        (
            "rows /home/ada/proj\n",
            Request::Rows {
                project: Some("/home/ada/proj".into()),
            },
        ),
        ("rows \n", Request::Rows { project: None }),
    ]
}

#[test]
fn every_new_verb_formats_to_its_golden_line_and_parses_back() {
    for (line, request) in requests() {
        assert_eq!(request.to_line().unwrap(), line);
        assert_eq!(Request::parse(line.trim_end_matches('\n')), Ok(request));
    }
    assert_eq!(Request::parse("rows"), Ok(Request::Rows { project: None }));
}

fn malformed(line: &str) -> String {
    match Request::parse(line) {
        Err(err @ RequestError::Malformed { .. }) => err.to_string(),
        other => panic!("{line:?} gave {other:?}"),
    }
}

#[test]
fn bad_shapes_of_the_new_verbs_are_refused_naming_the_expected_one() {
    assert_eq!(
        malformed("diff /p\ts\tlots"),
        "malformed 'diff' request: expected 'diff <project directory>\\t<session id>\\t<byte limit>', got 'diff /p?s?lots'"
    );
    assert_eq!(
        malformed("all x"),
        "malformed 'all' request: expected 'all', got 'all x'"
    );
    assert_eq!(
        malformed("rows /p\tx"),
        "malformed 'rows' request: expected 'rows <project directory, or nothing for every project>', got 'rows /p?x'"
    );
    for line in [
        "diff /p\ts",
        "diff /p\ts\t-1",
        "diff /p\ts\t",
        "diff /p\ts\t1\textra",
        "apply /p",
        "apply /p\ts\textra",
        "discard /p",
        "discard \ts",
        "all ",
    ] {
        malformed(line);
    }
}

#[test]
fn the_new_replies_format_to_their_golden_lines() {
    assert_eq!(Reply::Live.to_line(), "ok live\n");
    assert_eq!(
        Reply::Done("removed the workspace /w\nkept branch chock/s".into()).to_line(),
        "ok removed the workspace /w kept branch chock/s\n"
    );
    let diff = WorkspaceDiff {
        diff: "+a\n".into(),
        bytes: 3,
        truncated: false,
        files: vec![],
        description: "d".into(),
    };
    let json = serde_json::to_string(&diff).unwrap();
    assert_eq!(
        Reply::Diff(json).to_line(),
        "ok {\"diff\":\"+a\\n\",\"bytes\":3,\"truncated\":false,\"files\":[],\"description\":\"d\"}\n"
    );
    // A newer daemon's extra field, or a missing one, still reads.
    let read: WorkspaceDiff = serde_json::from_str(r#"{"diff":"x","later":1}"#).unwrap();
    assert_eq!((read.diff.as_str(), read.bytes), ("x", 0));
}
