//! Rows written by other daemon versions keep loading: every field has a
//! default and unknown fields (the daemon's `child`, a newer version's
//! additions) are ignored.

use chock_control::{RowLine, SessionRow};
use pretty_assertions::assert_eq;

#[test]
fn a_row_as_version_1_wrote_it_loads() {
    let row: SessionRow = serde_json::from_str(include_str!("../fixtures/row-v1.json")).unwrap();
    assert_eq!(row.id, "20261129-190000-000-7f3a9c1e");
    assert_eq!(row.project, std::path::PathBuf::from("/home/ada/proj"));
    assert_eq!(row.status, "ended");
    assert_eq!(
        row.reason.as_ref().map(chock_log::event::EndReason::as_str),
        Some("done")
    );
    assert_eq!(row.title.as_deref(), Some("Fix the parser"));
    assert_eq!(row.events, 42);
    assert_eq!(
        row.started_at.unwrap().to_string(),
        "2026-11-29T19:00:00.000Z"
    );
}

#[test]
fn a_row_with_unknown_fields_and_missing_ones_loads_with_defaults() {
    let row: SessionRow =
        serde_json::from_str(include_str!("../fixtures/row-future.json")).unwrap();
    assert_eq!(row.id, "20261129-190100-000-00000001");
    assert_eq!(
        row.status, "thinking",
        "a status this version does not know is kept"
    );
    assert_eq!(row.events, 0);
    assert_eq!(row.project, std::path::PathBuf::new());
    let empty: SessionRow = serde_json::from_str("{}").unwrap();
    assert_eq!(empty, SessionRow::default());
}

#[test]
fn a_list_line_reads_into_a_row_and_keeps_the_daemons_fields() {
    let line = format!(
        "2026-11-29T19:00:00.000Z\t{}",
        include_str!("../fixtures/row-v1.json").trim()
    );
    let parsed = RowLine::parse(&line).unwrap();
    assert_eq!(parsed.session_row().unwrap().events, 42);
    assert_eq!(parsed.value()["child"]["ended"], "exit 0");
}
