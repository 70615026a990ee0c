//! One rule and where it was written, and the layers rules come in.

use std::path::PathBuf;

use serde::Serialize;

use crate::decision::Decision;
use crate::pattern::Pattern;

/// Which layer a rule (or an answer) came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LayerKind {
    /// The organisation's bundle: a ceiling nothing under it can raise.
    Org,
    /// The operator's own config.zon.
    Operator,
    /// The project's chock.zon.
    Project,
    /// The rules Chock ships, read only where neither the operator nor the
    /// project has a matching rule.
    Default,
    /// A promise the session made with restrict_self: it only narrows.
    Promise,
    /// No rule matched anywhere: an action nobody named asks.
    None,
}

impl LayerKind {
    /// The name a person reads in an explanation.
    pub fn describe(self) -> &'static str {
        match self {
            LayerKind::Org => "org bundle",
            LayerKind::Operator => "operator config",
            LayerKind::Project => "project chock.zon",
            LayerKind::Default => "shipped defaults",
            LayerKind::Promise => "session promise",
            LayerKind::None => "no rule",
        }
    }
}

/// Where a rule was written, for explanations and refusals.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuleRef {
    /// The rule as a person would write it.
    pub text: String,
    /// The file it is in; `None` for a shipped default or a promise.
    pub file: Option<PathBuf>,
    /// 1-based line of the rule's `.{`, where there is a file.
    pub line: Option<u32>,
    /// 1-based column of the rule's `.{`, where there is a file.
    pub column: Option<u32>,
}

impl RuleRef {
    /// `file:line:column` where the rule has a file, else what it is.
    pub fn location(&self, layer: LayerKind) -> String {
        match (&self.file, self.line, self.column) {
            (Some(f), Some(l), Some(c)) => format!("{}:{l}:{c}", f.display()),
            (Some(f), _, _) => f.display().to_string(),
            _ => layer.describe().to_owned(),
        }
    }
}

/// One rule: a pattern, its answer, and where it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// What it names.
    pub pattern: Pattern,
    /// What it answers.
    pub decision: Decision,
    /// Where it came from.
    pub origin: RuleRef,
}

impl Rule {
    /// A rule with no file behind it (a shipped default, a promise, a test).
    pub fn new(pattern: Pattern, decision: Decision) -> Rule {
        let text = rule_text(&pattern, decision);
        Rule {
            pattern,
            decision,
            origin: RuleRef {
                text,
                file: None,
                line: None,
                column: None,
            },
        }
    }

    /// Reads `action` as a pattern (`None` for a catch-all) and builds a rule
    /// with no file behind it.
    pub fn parse(action: Option<&str>, decision: Decision) -> Result<Rule, crate::ActionError> {
        let pattern = match action {
            Some(a) => Pattern::parse(a)?,
            None => Pattern::CatchAll,
        };
        Ok(Rule::new(pattern, decision))
    }
}

/// The rule as a person writes it in a `.rules` block.
pub fn rule_text(pattern: &Pattern, decision: Decision) -> String {
    match pattern {
        Pattern::CatchAll => format!(".{{ .decision = .{decision} }}"),
        p => format!(".{{ .action = \"{p}\", .decision = .{decision} }}"),
    }
}
