//! Devices in a real session and in `chock devices`, on a machine built
//! by the testkit: a sysfs tree and device nodes that are real character
//! devices (with /dev/null's and /dev/zero's numbers), read through
//! `CHOCK_SYSFS` and `CHOCK_DEV`. The nodes of a named, allowed device are
//! reachable inside the sandbox and an unnamed one's are not; ask refuses;
//! a device plugged in or pulled out mid-session is seen at the next
//! command.

use std::path::Path;
use std::process::Command;

use chock_testkit::{FakeDevices, TempProject, UsbDevice};
use serde_json::{Value, json};

use super::chock;
use super::kit::{assert_success, fake_model, log_values, of_call, one_call_a_turn, only_log};

const BOARD: UsbDevice<'static> = UsbDevice {
    port: "1-1",
    ids: ("1d50", "6018"),
    serial: None,
    tty: Some("ttyACM0"),
    like: "/dev/null",
};

const ADAPTER: UsbDevice<'static> = UsbDevice {
    port: "1-2",
    ids: ("0403", "6001"),
    serial: Some("A50285BI"),
    tty: Some("ttyUSB0"),
    like: "/dev/zero",
};

fn on(machine: &FakeDevices, mut command: Command) -> Command {
    command
        .env("CHOCK_SYSFS", machine.sys())
        .env("CHOCK_DEV", machine.dev());
    command
}

fn project(text: &str) -> TempProject {
    let project = TempProject::git();
    project.write_chock_zon(text);
    project.commit_all("devices");
    project
}

/// The board's tty named and allowed, the adapter named and left to ask.
const ZON: &str = ".{\n    .devices = .{\n        .{ .action = \"device.tty.1d50.6018\" },\n        .{ .action = \"device.tty.serial.A50285BI\" },\n    },\n    .policy = .{ .rules = .{\n        .{ .action = \"device.tty.1d50.6018\", .decision = .allow },\n    } },\n}\n";

fn sh(id: &'static str, script: &str) -> (&'static str, &'static str, Value) {
    (
        id,
        "run_command",
        json!({ "command": ["sh", "-c", script] }),
    )
}

fn result(events: &[Value], call: &str) -> (bool, String) {
    let r = of_call(events, "tool.result", call).unwrap();
    (
        r["ok"].as_bool().unwrap(),
        r["output"].as_str().unwrap().to_owned(),
    )
}

fn notices<'a>(events: &'a [Value], subject: &str) -> Vec<&'a str> {
    events
        .iter()
        .filter(|e| e["type"] == "notice" && e["subject"] == subject)
        .filter_map(|e| e["text"].as_str())
        .collect()
}

#[test]
fn a_named_allowed_device_is_reachable_inside_and_an_unnamed_or_asked_one_is_not() {
    let machine = FakeDevices::new();
    machine.plug(&BOARD);
    machine.plug(&ADAPTER);
    let state = tempfile::tempdir().unwrap();
    let project = project(ZON);
    let _fake = fake_model(
        state.path(),
        one_call_a_turn(&[
            sh(
                "allowed",
                "test -c /dev/ttyACM0 && echo hello > /dev/ttyACM0",
            ),
            sh("asked", "echo x > /dev/ttyUSB0"),
            sh("unnamed", "ls /dev/bus/usb/001/011"),
        ]),
    );
    let mut run = on(&machine, chock(state.path()));
    let out = run
        .arg("run")
        .arg(project.path())
        .arg("talk to the board")
        .output()
        .unwrap();
    assert_success(&out);
    let events = log_values(&only_log(state.path()));
    let (ok, text) = result(&events, "allowed");
    assert!(ok, "{text}");
    assert!(!result(&events, "asked").0);
    assert!(!result(&events, "unnamed").0);
    let said = notices(&events, "devices");
    assert_eq!(said.len(), 1, "{said:?}");
    assert_eq!(
        said[0].lines().collect::<Vec<_>>(),
        [
            format!(
                "device.tty.serial.A50285BI ({}:4:9) is not passed in: the policy answers ask, and nobody can be asked for a device while a session runs; only allow passes one in: .{{ .action = \"device.tty.serial.A50285BI\", .decision = .allow }}",
                project
                    .path()
                    .join("chock.zon")
                    .canonicalize()
                    .unwrap()
                    .display()
            ),
            "device.tty.1d50.6018 is /dev/ttyACM0".to_owned(),
        ]
    );
    let decided: Vec<(&str, &str)> = events
        .iter()
        .filter(|e| e["type"] == "decision")
        .filter_map(|e| Some((e["action"].as_str()?, e["decision"].as_str()?)))
        .filter(|(a, _)| a.starts_with("device."))
        .collect();
    assert_eq!(
        decided,
        [
            ("device.tty.1d50.6018", "allow"),
            ("device.tty.serial.A50285BI", "ask")
        ]
    );
}

#[test]
fn a_device_plugged_in_mid_session_reaches_the_next_command_and_one_pulled_out_is_reported() {
    let machine = FakeDevices::new();
    let state = tempfile::tempdir().unwrap();
    let project = project(
        ".{\n    .devices = .{ .{ .action = \"device.usb.1d50.6018\" } },\n    .policy = .{ .rules = .{ .{ .action = \"device.usb.1d50.6018\", .decision = .allow } } },\n}\n",
    );
    // Each command waits in the workspace for the test's word, so the
    // board is plugged in and pulled out between two commands' starts,
    // which is when Chock looks.
    let node = format!("/dev/{}", FakeDevices::usb_devname(BOARD.port));
    let wait = |word: &str| format!("while [ ! -e {word} ]; do sleep 0.05; done");
    let _fake = fake_model(
        state.path(),
        one_call_a_turn(&[
            sh(
                "before",
                &format!("test -e {node}; r=$?; {}; exit $r", wait("go1")),
            ),
            sh(
                "plugged",
                &format!(
                    "test -c {node} && echo ok > {node} && touch wrote && {}",
                    wait("go2")
                ),
            ),
            sh("pulled", &format!("test -e {node}")),
        ]),
    );
    let mut run = on(&machine, chock(state.path()));
    let mut child = run
        .arg("run")
        .arg(project.path())
        .arg("wait for the board")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Duration::from_secs(60);
    let log = chock_testkit::wait_for(deadline, "the session's log", || {
        let sessions = state.path().join("sessions");
        let dir = std::fs::read_dir(sessions).ok()?.next()?.ok()?.path();
        Some(dir.join("log.jsonl")).filter(|l| l.exists())
    });
    let workspace = chock_testkit::wait_for(deadline, "the workspace", || {
        let events = log_values(&log);
        let open = events.iter().find(|e| e["type"] == "workspace.open")?;
        Some(std::path::PathBuf::from(open["dir"].as_str()?)).filter(|d| d.is_dir())
    });
    let called = |call: &'static str| {
        let log = log.clone();
        move || of_call(&log_values(&log), "tool.call", call).map(|_| ())
    };
    chock_testkit::wait_for(deadline, "the first command", called("before"));
    machine.plug(&BOARD);
    std::fs::write(workspace.join("go1"), "").unwrap();
    chock_testkit::wait_for(deadline, "the write to the board", || {
        workspace.join("wrote").exists().then_some(())
    });
    machine.unplug(BOARD.port, BOARD.tty);
    std::fs::write(workspace.join("go2"), "").unwrap();
    assert!(child.wait().unwrap().success());
    let events = log_values(&log);
    assert!(!result(&events, "before").0);
    let (ok, text) = result(&events, "plugged");
    assert!(ok, "{text}");
    assert!(
        text.starts_with(&format!("device.usb.1d50.6018 has arrived as {node}\n")),
        "{text}"
    );
    let (ok, text) = result(&events, "pulled");
    assert!(!ok, "{text}");
    assert!(
        text.starts_with(&format!("device.usb.1d50.6018 has left ({node} is gone)")),
        "{text}"
    );
    let said = notices(&events, "devices");
    assert_eq!(said.len(), 3, "{said:?}");
    assert!(
        said[0].contains("is not on this machine: the session runs without it"),
        "{said:?}"
    );
    assert!(Path::new(&node).starts_with("/dev/bus/usb"));
}

#[test]
fn chock_devices_lists_each_device_with_its_action_and_whether_a_session_gets_it() {
    let machine = FakeDevices::new();
    machine.plug(&BOARD);
    machine.plug(&ADAPTER);
    let project = project(ZON);
    let state = tempfile::tempdir().unwrap();
    let mut cmd = on(&machine, chock(state.path()));
    let out = cmd
        .args(["devices", "--project"])
        .arg(project.path())
        .output()
        .unwrap();
    assert_success(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    let dev = machine.dev();
    let expected = format!(
        "device.usb.1d50.6018  {d}/bus/usb/001/011  Test Board\n  not passed in: the project's chock.zon does not name it; add .{{ .action = \"device.usb.1d50.6018\" }} to its .devices block, and a rule that allows it\n\
device.usb.0403.6001  {d}/bus/usb/001/012  Test Board\n  not passed in: the project's chock.zon does not name it; add .{{ .action = \"device.usb.0403.6001\" }} to its .devices block, and a rule that allows it\n\
device.tty.1d50.6018  {d}/ttyACM0  Test Board\n  passed in at /dev/ttyACM0\n\
device.tty.serial.A50285BI  {d}/ttyUSB0  Test Board\n  not passed in: the policy answers ask (no rule names it); only allow passes a device in: .{{ .action = \"device.tty.serial.A50285BI\", .decision = .allow }}\n",
        d = dev.display()
    );
    assert_eq!(text, expected);
    let json = on(&machine, chock(state.path()))
        .args(["devices", "--json", "--project"])
        .arg(project.path())
        .output()
        .unwrap();
    let rows: Vec<Value> = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(rows.len(), 4);
    assert_eq!(rows[2]["passed"], true);
    assert_eq!(rows[3]["decision"], "ask");
}

#[test]
fn a_device_id_in_upper_case_is_refused_with_its_line_and_column() {
    let state = tempfile::tempdir().unwrap();
    let project = project(".{\n    .devices = .{ .{ .action = \"device.usb.1D50.6018\" } },\n}\n");
    let out = chock(state.path())
        .args(["policy", "check"])
        .arg(project.path().join("chock.zon"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.ends_with(
            "chock.zon:2:32: \"1D50\" in \"device.usb.1D50.6018\" is not lower case: write \"1d50\"\n"
        ),
        "{text}"
    );
}
