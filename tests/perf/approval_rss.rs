//! `chock run` waiting on an approval: its peak resident memory (VmHWM in
//! /proc) once the approval request is in the log and the session sits on
//! its approve.sock (the target is under 15 MB), printed beside its
//! resident memory at that moment (VmRSS).

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use chock_log::{SessionId, StateDir, fold_log};
use chock_testkit::{TempProject, Turn};
use serde_json::json;

use super::first_request::{chock, fake_model};

fn status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with(field)).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn wait_for_pending(state: &Path) -> SessionId {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(entries) = std::fs::read_dir(state.join("sessions")) {
            for entry in entries.flatten() {
                let id = SessionId::parse(&entry.file_name().to_string_lossy()).unwrap();
                if let Ok(folded) = fold_log(&StateDir::at(state).log_path(&id))
                    && !folded.state.pending_approvals.is_empty()
                {
                    return id;
                }
            }
        }
        assert!(
            Instant::now() < deadline,
            "no approval was requested in time"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
#[ignore = "a measurement; run by hand, see the module docs"]
fn idle_session_waiting_on_an_approval() {
    let state = tempfile::tempdir().unwrap();
    let project = TempProject::git();
    project.write_chock_zon(
        ".{ .policy = .{ .rules = .{ .{ .action = \"call.write_file\", .decision = .ask } } } }\n",
    );
    // A session works in a worktree of the committed tree.
    project.commit_all("an ask rule for write_file");
    let write = json!({"path": "x.txt", "content": "x"});
    let _fake = fake_model(
        state.path(),
        [
            Turn::text("").call("w1", "write_file", &write).into(),
            Turn::text("Done.").into(),
        ],
    );
    let mut child = chock(state.path())
        .arg("run")
        .arg(project.path())
        .arg("write x.txt")
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let _ = wait_for_pending(state.path());
    let pid = child.id();
    let hwm = status_kib(pid, "VmHWM:");
    let rss = status_kib(pid, "VmRSS:");
    child.kill().unwrap();
    child.wait().unwrap();
    println!(
        "idle session waiting on an approval: peak RSS (VmHWM) {:.1} MB, resident now {:.1} MB (target < 15 MB)",
        hwm as f64 / 1024.0,
        rss as f64 / 1024.0
    );
}
