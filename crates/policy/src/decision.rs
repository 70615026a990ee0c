//! The five answers a rule can give, ordered from the narrowest to the widest.
//!
//! The order is the fold: wherever two layers both answer, the smaller one
//! stands, so `Ord` on [`Decision`] is load-bearing and follows the variant
//! order deny < agent_then_human < ask < agent_review < allow (each step to
//! the left adds a gate).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// One answer to an action. `Ord` is the fold's order: `min` is the narrower.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Refused, and nobody is asked.
    Deny,
    /// A reviewing agent looks first, then a person must say yes.
    AgentThenHuman,
    /// A person is asked while the agent waits.
    Ask,
    /// A reviewing agent decides, without a person.
    AgentReview,
    /// Runs with no question.
    Allow,
}

impl Decision {
    /// Every decision, narrowest first.
    pub const ALL: [Decision; 5] = [
        Decision::Deny,
        Decision::AgentThenHuman,
        Decision::Ask,
        Decision::AgentReview,
        Decision::Allow,
    ];

    /// The spelling a policy file uses, without the leading dot.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Deny => "deny",
            Decision::AgentThenHuman => "agent_then_human",
            Decision::Ask => "ask",
            Decision::AgentReview => "agent_review",
            Decision::Allow => "allow",
        }
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A word that is not one of the five decisions.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown decision `{0}`: write one of .deny, .agent_then_human, .ask, .agent_review, .allow"
)]
pub struct UnknownDecision(pub String);

impl FromStr for Decision {
    type Err = UnknownDecision;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Decision::ALL
            .into_iter()
            .find(|d| d.as_str() == s)
            .ok_or_else(|| UnknownDecision(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_is_deny_then_agent_then_human_then_ask_then_agent_review_then_allow() {
        let mut shuffled = [
            Decision::Allow,
            Decision::Ask,
            Decision::Deny,
            Decision::AgentReview,
            Decision::AgentThenHuman,
        ];
        shuffled.sort();
        assert_eq!(shuffled, Decision::ALL);
    }

    #[test]
    fn spelling_round_trips() {
        for d in Decision::ALL {
            assert_eq!(d.as_str().parse::<Decision>(), Ok(d));
        }
        assert!("maybe".parse::<Decision>().is_err());
    }
}
