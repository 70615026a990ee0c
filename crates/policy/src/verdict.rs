//! A decision with its reasons: what answered, from which layer, which rules
//! lost and why, and for a refusal or a question the rule that would permit
//! it and the file it goes in.

use std::fmt::{self, Write as _};
use std::path::PathBuf;

use serde::Serialize;

use crate::decision::Decision;
use crate::rule::{LayerKind, RuleRef};

/// When the question is put, which decides what an answer short of allow means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Timing {
    /// At the call, while the agent waits: ask reaches a person.
    AtCall,
    /// Before the first turn (model.select, nix.build, sandbox.jit, an MCP
    /// server's rows at its start, plugin capabilities): nobody is there to
    /// answer, so anything but allow refuses.
    BeforeFirstTurn,
    /// For a background command, which never asks: anything but allow refuses.
    Background,
    /// While the session runs but where nobody may be asked (a redirect hop
    /// of fetch_url, a device that arrives mid-session): anything but allow
    /// refuses.
    Unattended,
}

/// A rule that matched and did not decide.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Loser {
    /// Its layer.
    pub layer: LayerKind,
    /// The rule.
    pub rule: RuleRef,
    /// What it answered.
    pub decision: Decision,
    /// Why it did not decide.
    pub why: String,
}

/// What a person can do about a refusal or a question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Help {
    /// Add this rule to this file.
    AddRule {
        /// The rule line.
        rule: String,
        /// The whole block, ready to paste into an empty file.
        block: String,
        /// The file it goes in, where known.
        file: Option<PathBuf>,
        /// The layer that file is.
        layer: LayerKind,
    },
    /// The rule that decided names exactly this action: change it.
    ChangeRule {
        /// Where it is (`file:line:column`).
        at: String,
        /// The rule as it would read answering allow.
        rule: String,
    },
    /// The org bundle caps it; no file under the bundle can raise it.
    OrgCeiling {
        /// The bundle.
        file: Option<PathBuf>,
    },
    /// A promise this session (or its parent) made caps it.
    Promise {
        /// The promise.
        id: u64,
    },
}

impl fmt::Display for Help {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Help::AddRule {
                block, file, layer, ..
            } => {
                let where_ = match file {
                    Some(p) => p.display().to_string(),
                    None => format!("the {}", layer.describe()),
                };
                writeln!(f, "to permit it, add this rule to {where_}:")?;
                f.write_str(block)
            }
            Help::ChangeRule { at, rule } => {
                write!(f, "to permit it, change the rule at {at} to:\n    {rule}")
            }
            Help::OrgCeiling { file } => {
                let where_ = file.as_ref().map_or_else(
                    || "the org bundle".to_owned(),
                    |p| format!("the org bundle {}", p.display()),
                );
                write!(
                    f,
                    "{where_} caps this action and no rule under it can raise it: ask whoever manages that bundle"
                )
            }
            Help::Promise { id } => write!(
                f,
                "promise {id} this session made with restrict_self caps this action; leaving it is policy.widen"
            ),
        }
    }
}

/// The block that holds one rule, as it goes in a chock.zon or config.zon.
pub fn rule_block(rule: &str) -> String {
    format!(
        ".{{\n    .policy = .{{\n        .rules = .{{\n            {rule},\n        }},\n    }},\n}}\n"
    )
}

/// The answer to one action, with its reasons.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// The action asked about.
    pub action: String,
    /// The folded decision.
    pub decision: Decision,
    /// When it was asked.
    pub timing: Timing,
    /// The layer whose answer stood.
    pub layer: LayerKind,
    /// The rule that decided; `None` where no rule matched, or where an
    /// unreadable org bundle refused.
    pub rule: Option<RuleRef>,
    /// Rules that matched and did not decide, with why.
    pub losers: Vec<Loser>,
    /// Anything else a person should know about this answer.
    pub notes: Vec<String>,
    /// For anything not permitted outright, what would permit it.
    pub help: Option<Help>,
}

impl Verdict {
    /// Whether the action goes ahead with no question.
    pub fn permits(&self) -> bool {
        self.decision == Decision::Allow
    }

    /// Whether the action is refused outright: deny at a call, and anything
    /// but allow where nobody can be asked.
    pub fn refused(&self) -> bool {
        match self.timing {
            Timing::AtCall => self.decision == Decision::Deny,
            Timing::BeforeFirstTurn | Timing::Background | Timing::Unattended => {
                self.decision != Decision::Allow
            }
        }
    }

    /// The explanation a person reads (`chock policy explain`).
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "action:   {}", self.action);
        let outcome = if self.refused() {
            " (refused)"
        } else {
            match self.decision {
                Decision::Allow => "",
                Decision::AgentReview => " (a reviewing agent decides)",
                Decision::Ask => " (a person is asked)",
                Decision::AgentThenHuman => " (a reviewing agent, then a person)",
                Decision::Deny => " (refused)",
            }
        };
        let _ = writeln!(out, "decision: {}{outcome}", self.decision);
        let _ = writeln!(out, "layer:    {}", self.layer.describe());
        match &self.rule {
            Some(r) => {
                let _ = writeln!(out, "rule:     {}", r.text);
                let _ = writeln!(out, "at:       {}", r.location(self.layer));
            }
            None => {
                let _ = writeln!(out, "rule:     none");
            }
        }
        if !self.losers.is_empty() {
            let _ = writeln!(out, "lost:");
            for l in &self.losers {
                let place = match &l.rule.file {
                    Some(_) => format!("{}, {}", l.rule.location(l.layer), l.layer.describe()),
                    None => l.layer.describe().to_owned(),
                };
                let _ = writeln!(out, "  - {} ({place})", l.rule.text);
                let _ = writeln!(out, "    {}", l.why);
            }
        }
        for n in &self.notes {
            let _ = writeln!(out, "note: {n}");
        }
        if let Some(h) = &self.help {
            let _ = writeln!(out, "{h}");
        }
        out
    }
}
