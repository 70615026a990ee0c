//! edit_file with a language server: the time diagnostics add to an edit
//! (the target: no more than the server's own latency plus 5 ms), and the
//! same edits with no server.
//!
//! Three figures, medians of [`EDITS`] edits each, from the same machine in
//! the same run:
//! - the peer: pylsp's own latency, from a minimal Python client speaking
//!   to it directly (`tests/lsp/latency.py`): didChange and didSave, until
//!   its publishDiagnostics;
//! - a session's edit_file with pylsp serving the file: from the
//!   `tool.call` event to the `tool.result` event in the session's log
//!   (the log keeps milliseconds), which holds the file's write, the
//!   messages to pylsp in the sandbox and the wait for its diagnostics;
//! - the same session's edit_file on a file no server serves.
//!
//! pylsp (python-lsp-server with pyflakes) is what .ci/run installs under
//! /opt/chock-lsp. It lints after a debounce of 0.5 s, which is most of
//! its latency.

use std::path::Path;

use chock_testkit::{Reply, TempProject, Turn};
use serde_json::{Value, json};

use super::first_request::{fake_model, run_ok};

const EDITS: usize = 15;
const PYLSP: &str = "/opt/chock-lsp/venv/bin/pylsp";

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn millis(event: &Value) -> i64 {
    chock_log::Timestamp::parse(event["at"].as_str().unwrap())
        .unwrap()
        .unix_millis()
}

/// The milliseconds from each `tool.call` of `prefix`'s calls to its result.
fn edit_times(log: &Path, prefix: &str) -> Vec<f64> {
    let text = std::fs::read_to_string(log).unwrap();
    let events: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let at = |kind: &str, id: &str| {
        millis(
            events
                .iter()
                .find(|e| e["type"] == kind && e["call_id"] == id)
                .unwrap(),
        )
    };
    (0..EDITS)
        .map(|i| {
            let id = format!("{prefix}{i}");
            let result = events
                .iter()
                .find(|e| e["type"] == "tool.result" && e["call_id"] == id)
                .unwrap();
            if prefix == "py" {
                assert!(
                    result["output"]
                        .as_str()
                        .unwrap()
                        .contains(&format!("missing_{i}")),
                    "{result}"
                );
            }
            (at("tool.result", &id) - at("tool.call", &id)) as f64
        })
        .collect()
}

#[test]
#[ignore = "a measurement; run by hand, see the module docs"]
fn diagnostics_added_to_an_edit() {
    let peer = std::process::Command::new("/usr/bin/python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("lsp/latency.py"))
        .arg(PYLSP)
        .arg(EDITS.to_string())
        .output()
        .unwrap();
    assert!(peer.status.success());
    let own: Vec<f64> = String::from_utf8_lossy(&peer.stdout)
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();

    let project = TempProject::git();
    std::fs::write(
        project.path().join("app.py"),
        "import os\n\nprint(os.getcwd())\n",
    )
    .unwrap();
    std::fs::write(project.path().join("notes.txt"), "n 0\n").unwrap();
    project.write_chock_zon(&format!(
        ".{{\n    .lsp = .{{ .pylsp = .{{ .command = .{{ \"{PYLSP}\" }}, .files = .{{ \"*.py\" }} }} }},\n}}\n"
    ));
    project.commit_all("a python file");
    let mut replies: Vec<Reply> = vec![
        Turn::text("")
            .call("open", "diagnostics", &json!({"path": "app.py"}))
            .into(),
    ];
    for i in 0..EDITS {
        let old = if i == 0 {
            "print(os.getcwd())".to_owned()
        } else {
            format!("print(os.getcwd(), missing_{})", i - 1)
        };
        replies.push(
            Turn::text("")
                .call(
                    &format!("py{i}"),
                    "edit_file",
                    &json!({"path": "app.py", "old_text": old, "new_text": format!("print(os.getcwd(), missing_{i})")}),
                )
                .into(),
        );
        replies.push(
            Turn::text("")
                .call(
                    &format!("txt{i}"),
                    "edit_file",
                    &json!({"path": "notes.txt", "old_text": format!("n {i}"), "new_text": format!("n {}", i + 1)}),
                )
                .into(),
        );
    }
    replies.push(Turn::text("done").into());
    let state = tempfile::tempdir().unwrap();
    let _fake = fake_model(state.path(), replies);
    run_ok(state.path(), project.path(), "edit");
    let sessions: Vec<_> = std::fs::read_dir(state.path().join("sessions"))
        .unwrap()
        .collect();
    let log = sessions[0].as_ref().unwrap().path().join("log.jsonl");
    let with = median(edit_times(&log, "py"));
    let without = median(edit_times(&log, "txt"));
    let own = median(own);
    println!("edit_file, medians of {EDITS} edits:");
    println!("  pylsp's own latency (direct client): {own:.1} ms");
    println!("  edit_file with pylsp serving the file: {with:.1} ms");
    println!("  edit_file of a file no server serves: {without:.1} ms");
    println!(
        "  added beyond the server's latency: {:.1} ms (ratio {:.3})",
        with - own,
        with / own
    );
}
