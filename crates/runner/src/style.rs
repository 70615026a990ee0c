//! The project's style rules at a session's start: whether any may run
//! (`style.parse`, read before the first turn, where nobody can be asked,
//! so only allow runs them), and the rules compiled once.
//!
//! A rule that does not compile refuses the session before its log is
//! opened, with the rule's name and its line and column in chock.zon: a
//! rule that quietly does not run is worse than no rule (seeds 004). Where
//! `style.parse` is anything but allow, nothing is compiled or parsed, and
//! the start says in one line that every write goes unchecked.

use chock_policy::{Action, Decision, Policy, Verdict};

use crate::judge::Judge;

/// What the start settled about the style rules.
#[derive(Debug)]
pub struct StyleStart {
    /// `style.parse`'s answer, when the files hold any rule.
    pub(crate) verdict: Option<Verdict>,
    /// The rules, compiled, when they may run.
    pub(crate) rules: Option<chock_style::Rules>,
    /// The one line the start says when they may not.
    pub(crate) unchecked: Option<String>,
}

impl StyleStart {
    /// Reads `style.parse` and compiles the rules `policy`'s files hold.
    pub fn prepare(policy: &Policy) -> Result<StyleStart, chock_style::CompileError> {
        let rules = policy.style_rules();
        if rules.is_empty() {
            return Ok(StyleStart {
                verdict: None,
                rules: None,
                unchecked: None,
            });
        }
        let verdict = Judge::before_first_turn(policy, &Action::style_parse());
        if verdict.decision != Decision::Allow {
            let unchecked = format!(
                "style rules are not checked: style.parse is {}, and it is read before the first turn, when nobody can be asked, so only allow runs the {} rule{} of the style block; every write of this session goes unchecked (to run them, add .{{ .action = \"style.parse\", .decision = .allow }} to chock.zon)",
                verdict.decision,
                rules.len(),
                if rules.len() == 1 { "" } else { "s" }
            );
            return Ok(StyleStart {
                verdict: Some(verdict),
                rules: None,
                unchecked: Some(unchecked),
            });
        }
        Ok(StyleStart {
            verdict: Some(verdict),
            rules: Some(chock_style::Rules::compile(rules)?),
            unchecked: None,
        })
    }

    /// The compiled rules, when they may run.
    pub fn rules(&self) -> Option<&chock_style::Rules> {
        self.rules.as_ref()
    }

    /// The line the start says when the rules may not run.
    pub fn unchecked(&self) -> Option<&str> {
        self.unchecked.as_deref()
    }
}
