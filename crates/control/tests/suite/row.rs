//! Rows written by other daemon versions keep loading: every field has a
//! default and unknown fields are ignored.

use chock_control::{ChildRow, RowLine, SessionRow};
use pretty_assertions::assert_eq;

#[test]
fn a_row_as_version_1_wrote_it_loads_whole() {
    let row: SessionRow = serde_json::from_str(include_str!("../fixtures/row-v1.json")).unwrap();
    assert_eq!(
        row,
        SessionRow {
            id: "0193a0c4-1".into(),
            project: "/home/ada/proj".into(),
            status: "ended".into(),
            reason: Some("done".into()),
            title: Some("Fix the parser".into()),
            model: Some("fake".into()),
            started_at: "2026-11-29T19:00:00Z".into(),
            last_event_id: 42,
            pending_approvals: vec![],
            child: Some(ChildRow {
                pid: 4242,
                ended: Some("exit 0".into())
            }),
        }
    );
}

#[test]
fn a_row_with_unknown_fields_and_missing_ones_loads_with_defaults() {
    let row: SessionRow =
        serde_json::from_str(include_str!("../fixtures/row-future.json")).unwrap();
    assert_eq!(row.id, "0193a0c4-2");
    assert_eq!(row.project, "");
    assert_eq!(row.last_event_id, 0);
    assert_eq!(
        row.child,
        Some(ChildRow {
            pid: 7,
            ended: None
        })
    );
    let empty: SessionRow = serde_json::from_str("{}").unwrap();
    assert_eq!(empty, SessionRow::default());
}

#[test]
fn a_list_line_reads_into_a_row() {
    let line = format!(
        "2026-11-29T19:00:00Z\t{}",
        include_str!("../fixtures/row-v1.json").trim()
    );
    let parsed = RowLine::parse(&line).unwrap();
    assert_eq!(parsed.session_row().unwrap().last_event_id, 42);
}
