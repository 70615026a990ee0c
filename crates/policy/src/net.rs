//! `.policy.net`: whether a session is given a network at all, and what a
//! background command gets. A router is a mechanism, never a permission.

use serde::Serialize;

/// One of the three words `.router` and `.background` take. Ordered from the
/// least network to the most, so the org bundle's word is a ceiling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NetMode {
    /// No router whatever the rules say.
    None,
    /// Read the rules: a router only where some rule permits a host.
    Auto,
    /// A router even before any rule permits a host.
    Filtered,
}

impl NetMode {
    /// Reads the word as a policy file writes it (without the dot).
    pub fn parse(word: &str) -> Option<NetMode> {
        match word {
            "none" => Some(NetMode::None),
            "auto" => Some(NetMode::Auto),
            "filtered" => Some(NetMode::Filtered),
            _ => None,
        }
    }
}

/// The `.policy.net` block of one file; a word not written is `None`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NetSettings {
    /// `.router`.
    pub router: Option<NetMode>,
    /// `.background`.
    pub background: Option<NetMode>,
}

/// The project's word if it wrote one, else the operator's, else `.auto`;
/// then capped by the org bundle's word.
pub(crate) fn effective(
    org: Option<NetMode>,
    operator: Option<NetMode>,
    project: Option<NetMode>,
) -> NetMode {
    let chosen = project.or(operator).unwrap_or(NetMode::Auto);
    match org {
        Some(cap) => chosen.min(cap),
        None => chosen,
    }
}
