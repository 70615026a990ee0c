//! Integration tests of chock-policy: the reference's vectors, properties of
//! the fold, and (once files are read) loading and checking.

mod check;
mod load;
mod props;
mod vectors;

use chock_policy::{Decision, Layers, Org, Policy, Rule, RuleSet};

/// A rule set from `(action, decision)` pairs; `None` is a catch-all.
pub(crate) fn rs(rules: &[(Option<&str>, Decision)]) -> RuleSet {
    RuleSet::new(
        rules
            .iter()
            .map(|(a, d)| Rule::parse(*a, *d).unwrap_or_else(|e| panic!("{a:?}: {e}")))
            .collect(),
    )
}

/// A policy from a project rule set alone.
pub(crate) fn project(rules: &[(Option<&str>, Decision)]) -> Policy {
    Policy::new(Layers {
        project: Some(rs(rules)),
        ..Layers::default()
    })
}

/// A policy with an org bundle, an operator and a project.
pub(crate) fn layered(
    org: &[(Option<&str>, Decision)],
    operator: &[(Option<&str>, Decision)],
    project: &[(Option<&str>, Decision)],
) -> Policy {
    Policy::new(Layers {
        org: Org::Rules(rs(org)),
        operator: Some(rs(operator)),
        project: Some(rs(project)),
        ..Layers::default()
    })
}
