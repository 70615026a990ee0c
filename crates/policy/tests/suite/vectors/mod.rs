//! The policy reference as a table: every example and every sentence about
//! how a rule is read, each one row. The sentence each row guards is quoted
//! (or paraphrased) beside it.

mod fold;
mod net;
mod rows;
mod shipped;

mod prelude {
    pub(super) use super::super::{layered, project, rs};
    pub(super) use super::{a, check};
    pub(super) use Decision::{AgentReview, AgentThenHuman, Allow, Ask, Deny};
    pub(super) use chock_policy::{
        Action, Decision, ExecClass, LayerKind, Layers, NetMode, NetSettings, Org, Policy, Rule,
        RuleSet, SkillLayer, Timing,
    };
}

use chock_policy::{Action, Decision, LayerKind, Policy};
use pretty_assertions::assert_eq;

fn a(name: &str) -> Action {
    Action::parse(name).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// (what the reference says, the policy, the action, decision, deciding layer)
fn check(cases: &[(&str, &Policy, &str, Decision, LayerKind)]) {
    for (said, policy, action, decision, layer) in cases {
        let v = policy.decide(&a(action));
        assert_eq!(
            (v.decision, v.layer),
            (*decision, *layer),
            "{said}: {action}\n{}",
            v.render()
        );
        assert_eq!(
            policy.decision(&a(action)),
            *decision,
            "fast path disagrees: {said}: {action}"
        );
    }
}
