//! Typed shapes of `chock.zon` as the spec's snippets use it, written here
//! the way a consumer would (deny_unknown_fields, snake_case enums), so the
//! snippet tests check what a reader actually gets.

use serde::Deserialize;

#[derive(Debug, PartialEq, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct Project {
    #[serde(default)]
    pub(crate) policy: Option<Policy>,
    #[serde(default)]
    pub(crate) devices: Vec<Device>,
    #[serde(default)]
    pub(crate) apply: Option<Apply>,
}

#[derive(Debug, PartialEq, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct Policy {
    #[serde(default)]
    pub(crate) net: Option<Net>,
    #[serde(default)]
    pub(crate) rules: Vec<Rule>,
}

#[derive(Debug, PartialEq, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct Net {
    #[serde(default)]
    pub(crate) router: Option<NetMode>,
    #[serde(default)]
    pub(crate) background: Option<NetMode>,
}

#[derive(Debug, PartialEq, Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub(crate) enum NetMode {
    Auto,
    None,
    Filtered,
}

#[derive(Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Rule {
    #[serde(default)]
    pub(crate) action: Option<String>,
    pub(crate) decision: Decision,
}

#[derive(Debug, PartialEq, Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Decision {
    Deny,
    AgentThenHuman,
    Ask,
    AgentReview,
    Allow,
}

#[derive(Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Device {
    pub(crate) action: String,
}

#[derive(Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Apply {
    pub(crate) mode: ApplyMode,
}

#[derive(Debug, PartialEq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ApplyMode {
    Rebase,
    Merge,
    Squash,
    Park,
}

#[derive(Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Bind {
    pub(crate) name: String,
}

pub(crate) fn rule(action: &str, decision: Decision) -> Rule {
    Rule {
        action: Some(action.to_owned()),
        decision,
    }
}
