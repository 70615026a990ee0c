//! The USB and serial devices a session is given: those the project's
//! `.devices` block names and a policy rule allows.
//!
//! Each named device is decided once, when the session starts, at its
//! action (`device.usb.1d50.6018`). Only allow passes it in: the decision
//! is read where nobody is at the keyboard for it (a session is already
//! running by the time a board is plugged in), so ask refuses
//! (`Policy::decide_unattended`). Where an allowed device is
//! is found anew at every command's start ([`SessionDevices`], through
//! the tools' `CommandDevices`): one plugged in mid-session reaches the
//! next command, one pulled out is reported and gone from it. `chock
//! devices` ([`list`]) shows the same answers for the devices on this
//! machine.

pub mod list;
pub mod sysfs;

use std::cell::RefCell;
use std::collections::BTreeMap;

use chock_policy::{Decision, DeviceId, Policy, Verdict};
use chock_sandbox::DeviceNode;
use chock_tools::CommandDevices;

use sysfs::{Present, Roots};

/// The devices a session may reach, and where each was at the last
/// command's start.
#[derive(Debug)]
pub struct SessionDevices {
    roots: Roots,
    /// The allowed devices, each with the block's place that names it.
    allowed: Vec<(DeviceId, String)>,
    /// The node each allowed device had at the last ask.
    last: RefCell<BTreeMap<DeviceId, Vec<String>>>,
}

/// What a session's start decided about its devices.
#[derive(Debug)]
pub struct Decided {
    pub devices: SessionDevices,
    /// One verdict per named device, for the log's `decision` events.
    pub verdicts: Vec<Verdict>,
    /// The sentences for the start's notice: which node each device is,
    /// or why it is not passed in.
    pub said: Vec<String>,
}

/// Decides each device `policy`'s project block names, and finds the
/// allowed ones under `roots`.
pub fn decide(policy: &Policy, roots: Roots) -> Decided {
    let mut allowed = Vec::new();
    let mut verdicts = Vec::new();
    let mut said = Vec::new();
    for named in policy.named_devices() {
        let action = named.id.action();
        // Read as a row nobody may be asked about while the session runs
        // (docs/policy.md): anything but allow refuses.
        let verdict = policy.decide_unattended(&action);
        if verdict.decision == Decision::Allow {
            allowed.push((named.id.clone(), named.origin.clone()));
        } else {
            said.push(refused(&action.to_string(), &named.origin, &verdict));
        }
        verdicts.push(verdict);
    }
    let devices = SessionDevices {
        roots,
        allowed,
        last: RefCell::new(BTreeMap::new()),
    };
    let (_, found) = devices.look();
    said.extend(found);
    Decided {
        devices,
        verdicts,
        said,
    }
}

/// Why a named device is not passed in.
fn refused(action: &str, origin: &str, verdict: &Verdict) -> String {
    let why = match verdict.decision {
        Decision::Deny => "the policy denies it".to_owned(),
        other => format!(
            "the policy answers {other}, and nobody can be asked for a device while a session runs; only allow passes one in: .{{ .action = \"{action}\", .decision = .allow }}"
        ),
    };
    format!("{action} ({origin}) is not passed in: {why}")
}

impl SessionDevices {
    /// The nodes of the allowed devices present now, and a sentence for
    /// each that is new, moved or gone since the last look.
    fn look(&self) -> (Vec<DeviceNode>, Vec<String>) {
        if self.allowed.is_empty() {
            return (Vec::new(), Vec::new());
        }
        let ids: Vec<DeviceId> = self.allowed.iter().map(|(id, _)| id.clone()).collect();
        let present = sysfs::scan_for(
            &self.roots,
            sysfs::Want {
                ids: Some(&ids),
                labels: false,
            },
        );
        let mut last = self.last.borrow_mut();
        let mut nodes = Vec::new();
        let mut said = Vec::new();
        let mut now = BTreeMap::new();
        for (id, origin) in &self.allowed {
            let action = id.action();
            let mine: Vec<&Present> = present.iter().filter(|p| p.id == *id).collect();
            let mut names = Vec::new();
            let mut refusals = Vec::new();
            for p in &mine {
                match &p.node {
                    Ok(host) => {
                        nodes.push(DeviceNode {
                            host: host.clone(),
                            at: p.inside(),
                        });
                        names.push(p.inside().display().to_string());
                    }
                    Err(why) => refusals.push(format!("{action} is not passed in: {why}")),
                }
            }
            // A device that is here with a node that is not it is said
            // once, at the first look, and not also as missing.
            let first = !last.contains_key(id);
            let refused_here = !refusals.is_empty() && names.is_empty();
            if first {
                said.append(&mut refusals);
            }
            let sentence = change(&action.to_string(), origin, last.get(id), &names);
            if let Some(sentence) = sentence.filter(|_| !(first && refused_here)) {
                said.push(sentence);
            }
            now.insert(id.clone(), names);
        }
        *last = now;
        (nodes, said)
    }
}

/// The sentence for a device whose nodes were `before` at the last look
/// (`None`: this is the first) and are `now`; `None` when nothing changed.
fn change(
    action: &str,
    origin: &str,
    before: Option<&Vec<String>>,
    now: &[String],
) -> Option<String> {
    let now_text = now.join(", ");
    Some(match before {
        None if now.is_empty() => format!(
            "{action} ({origin}) is not on this machine: the session runs without it, and it is passed in at the first command after it is plugged in"
        ),
        None => format!("{action} is {now_text}"),
        Some(before) if before.as_slice() == now => return None,
        Some(before) if now.is_empty() => format!(
            "{action} has left ({} is gone): commands from now on run without it, and it is passed in again at the first command after it is back",
            before.join(", ")
        ),
        Some(before) if before.is_empty() => format!("{action} has arrived as {now_text}"),
        Some(_) => format!("{action} is now {now_text}"),
    })
}

impl CommandDevices for SessionDevices {
    fn nodes(&self) -> (Vec<DeviceNode>, Vec<String>) {
        self.look()
    }
}

#[cfg(test)]
mod tests {
    use chock_policy::{FileKind, Layers, Policy, check_file};
    use chock_testkit::{FakeDevices, UsbDevice};

    use super::*;

    fn policy(text: &str) -> Policy {
        let checked = check_file(text, None, FileKind::Project);
        assert!(checked.problems.is_empty(), "{:?}", checked.problems);
        Policy::new(Layers {
            project: Some(checked.rules),
            ..Layers::default()
        })
    }

    const BOARD: UsbDevice<'static> = UsbDevice {
        port: "1-1",
        ids: ("1d50", "6018"),
        serial: Some("B1"),
        tty: Some("ttyACM0"),
        like: "/dev/null",
    };

    #[test]
    fn only_an_allowed_named_device_is_passed_in_and_ask_refuses() {
        let machine = FakeDevices::new();
        machine.plug(&BOARD);
        let policy = policy(
            ".{ .devices = .{ .{ .action = \"device.usb.1d50.6018\" }, .{ .action = \"device.tty.serial.B1\" } },\n.policy = .{ .rules = .{ .{ .action = \"device.usb.1d50.6018\", .decision = .allow } } } }",
        );
        let roots = Roots {
            sys: machine.sys(),
            dev: machine.dev(),
        };
        let decided = decide(&policy, roots);
        let decisions: Vec<_> = decided.verdicts.iter().map(|v| v.decision).collect();
        assert_eq!(decisions, [Decision::Allow, Decision::Ask]);
        assert_eq!(
            decided.said,
            [
                "device.tty.serial.B1 (line 1, column 57) is not passed in: the policy answers ask, and nobody can be asked for a device while a session runs; only allow passes one in: .{ .action = \"device.tty.serial.B1\", .decision = .allow }",
                "device.usb.1d50.6018 is /dev/bus/usb/001/011",
            ]
        );
        let (nodes, said) = decided.devices.nodes();
        assert!(said.is_empty(), "{said:?}");
        assert_eq!(
            nodes,
            [DeviceNode {
                host: machine.dev().join("bus/usb/001/011"),
                at: "/dev/bus/usb/001/011".into(),
            }]
        );
    }

    #[test]
    fn a_device_that_leaves_and_comes_back_is_said_each_time_and_only_then() {
        let machine = FakeDevices::new();
        let policy = policy(
            ".{ .devices = .{ .{ .action = \"device.tty.serial.B1\" } },\n.policy = .{ .rules = .{ .{ .action = \"device.tty.serial.B1\", .decision = .allow } } } }",
        );
        let roots = Roots {
            sys: machine.sys(),
            dev: machine.dev(),
        };
        let decided = decide(&policy, roots);
        assert_eq!(
            decided.said,
            [
                "device.tty.serial.B1 (line 1, column 18) is not on this machine: the session runs without it, and it is passed in at the first command after it is plugged in"
            ]
        );
        let devices = decided.devices;
        assert_eq!(devices.nodes(), (vec![], vec![]));
        machine.plug(&BOARD);
        let (nodes, said) = devices.nodes();
        assert_eq!(nodes.len(), 1);
        assert_eq!(said, ["device.tty.serial.B1 has arrived as /dev/ttyACM0"]);
        assert!(devices.nodes().1.is_empty());
        machine.unplug("1-1", Some("ttyACM0"));
        let (nodes, said) = devices.nodes();
        assert!(nodes.is_empty());
        assert_eq!(
            said,
            [
                "device.tty.serial.B1 has left (/dev/ttyACM0 is gone): commands from now on run without it, and it is passed in again at the first command after it is back"
            ]
        );
    }

    #[test]
    fn a_device_whose_node_is_not_it_is_said_once_and_not_as_missing() {
        let machine = FakeDevices::new();
        machine.plug(&BOARD);
        let node = machine.dev().join("ttyACM0");
        std::fs::remove_file(&node).unwrap();
        std::fs::write(&node, "").unwrap();
        let policy = policy(
            ".{ .devices = .{ .{ .action = \"device.tty.serial.B1\" } },\n.policy = .{ .rules = .{ .{ .action = \"device.tty.serial.B1\", .decision = .allow } } } }",
        );
        let decided = decide(
            &policy,
            Roots {
                sys: machine.sys(),
                dev: machine.dev(),
            },
        );
        assert_eq!(
            decided.said,
            [format!(
                "device.tty.serial.B1 is not passed in: {} is not a character device",
                node.display()
            )]
        );
        assert_eq!(decided.devices.nodes(), (vec![], vec![]));
    }
}
