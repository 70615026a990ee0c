//! `chock devices`: the USB and serial devices on this machine, each with
//! the action it would be asked under and whether a session of the project
//! would be given it, the way `chock policy explain` explains an action.

use std::fmt::Write as _;

use chock_policy::{Decision, Policy};
use serde::Serialize;

use super::sysfs::{self, Roots};

/// One device on this machine and what a session of the project would do
/// with it.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// The action it is asked under (`device.usb.1d50.6018`).
    pub action: String,
    /// Its node on this machine (`/dev/ttyUSB0`), or why the name there is
    /// not it.
    pub node: String,
    /// The maker's and product's words.
    pub label: String,
    /// Whether the project's `.devices` block names it.
    pub named: bool,
    /// What the policy answers for its action, read as a session reads it
    /// (only allow passes a device in).
    pub decision: Decision,
    /// Whether a session started now would be given it.
    pub passed: bool,
    /// Why, in a sentence.
    pub why: String,
}

/// The rows for the devices `roots` shows, under `policy`.
pub fn rows(policy: &Policy, roots: &Roots) -> Vec<Row> {
    sysfs::scan(roots)
        .into_iter()
        .map(|p| {
            let action = p.id.action();
            let named = policy.named_devices().iter().any(|n| n.id == p.id);
            let verdict = policy.decide_unattended(&action);
            let allowed = verdict.decision == Decision::Allow;
            let node_ok = p.node.is_ok();
            let why = match (named, allowed, &p.node) {
                (_, _, Err(why)) => format!("not passed in: {why}"),
                (true, true, Ok(_)) => format!("passed in at {}", p.inside().display()),
                (false, _, Ok(_)) => format!(
                    "not passed in: the project's chock.zon does not name it; add .{{ .action = \"{action}\" }} to its .devices block{}",
                    if allowed { "" } else { ", and a rule that allows it" }
                ),
                (true, false, Ok(_)) => format!(
                    "not passed in: the policy answers {} ({}); only allow passes a device in: .{{ .action = \"{action}\", .decision = .allow }}",
                    verdict.decision,
                    verdict.rule.as_ref().map_or_else(
                        || "no rule names it".to_owned(),
                        |r| format!("{}, {}", r.text, verdict.layer.describe())
                    ),
                ),
            };
            Row {
                action: action.to_string(),
                node: match &p.node {
                    Ok(node) => node.display().to_string(),
                    Err(_) => format!("(no node: {})", p.devname),
                },
                label: p.label,
                named,
                decision: verdict.decision,
                passed: named && allowed && node_ok,
                why,
            }
        })
        .collect()
}

/// The rows as a person reads them: one block per device.
pub fn render(rows: &[Row]) -> String {
    if rows.is_empty() {
        return "no USB or serial devices on this machine\n".to_owned();
    }
    let mut out = String::new();
    for row in rows {
        let label = if row.label.is_empty() {
            String::new()
        } else {
            format!("  {}", row.label)
        };
        let _ = writeln!(out, "{}  {}{label}", row.action, row.node);
        let _ = writeln!(out, "  {}", row.why);
    }
    out
}
