//! `.policy.net`: whether a session is given a network at all, and what a
//! background command gets, and whether the router also runs the fake
//! resolver. A router is a mechanism, never a permission.

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
    /// The word a policy file writes (without the dot).
    pub fn word(self) -> &'static str {
        match self {
            NetMode::None => "none",
            NetMode::Auto => "auto",
            NetMode::Filtered => "filtered",
        }
    }

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

/// `.policy.net.resolver`: whether the router also answers the sandbox's
/// DNS with fake addresses, for tools that ignore the proxy variables.
/// Ordered from the least to the most, so the org bundle's word is a
/// ceiling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ResolverMode {
    /// No resolver: names resolve only through the proxy (the default).
    #[default]
    None,
    /// The fake-address resolver, wherever there is a router.
    Fake,
}

impl ResolverMode {
    /// Reads the word as a policy file writes it (without the dot).
    pub fn parse(word: &str) -> Option<ResolverMode> {
        match word {
            "none" => Some(ResolverMode::None),
            "fake" => Some(ResolverMode::Fake),
            _ => None,
        }
    }
}

/// The ports every fake address listens on, whatever the files say.
pub const RESOLVER_PORTS: [u16; 2] = [80, 443];

/// Most ports `.resolver_ports` may add: each is one listener per name.
pub const MAX_RESOLVER_PORTS: usize = 16;

/// The `.policy.net` block of one file; a word not written is `None`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetSettings {
    /// `.router`.
    pub router: Option<NetMode>,
    /// `.background`.
    pub background: Option<NetMode>,
    /// `.resolver`.
    pub resolver: Option<ResolverMode>,
    /// `.resolver_ports`: ports the fake addresses accept besides 80 and 443.
    pub resolver_ports: Option<Vec<u16>>,
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

/// The resolver word: the project's, else the operator's, else `.none`;
/// capped by the org bundle's.
pub(crate) fn effective_resolver(
    org: Option<ResolverMode>,
    operator: Option<ResolverMode>,
    project: Option<ResolverMode>,
) -> ResolverMode {
    let chosen = project.or(operator).unwrap_or_default();
    match org {
        Some(cap) => chosen.min(cap),
        None => chosen,
    }
}

/// 80, 443 and `extra`, sorted, each once.
pub(crate) fn resolver_ports(extra: Option<Vec<u16>>) -> Vec<u16> {
    let mut out: Vec<u16> = RESOLVER_PORTS
        .iter()
        .copied()
        .chain(extra.unwrap_or_default())
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}
