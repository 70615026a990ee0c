//! What a rule's `.action` names: one action, a class of them, or nothing.
//!
//! A class is written `prefix.*` and matches every name strictly under the
//! prefix: `net.fetch.org.ziglang.*` matches `net.fetch.org.ziglang.docs` but
//! not `net.fetch.org.ziglang` itself (that host is not *under* ziglang.org;
//! a rule for it is written separately). A `*` anywhere but as the whole last
//! segment is refused, and so is a prefix under which no action can exist,
//! so a rule that could never match is an error rather than a quiet no-op.

use std::fmt;

use crate::action::label::{
    is_attr_path, is_git_subcommand, is_label, is_model_id, is_program_name, is_usb_id,
};
use crate::action::{Action, ActionError};

/// The key of one rule.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Pattern {
    /// Exactly one action.
    Exact(Action),
    /// Every action strictly under the prefix (`prefix.*`); the prefix is
    /// stored without the trailing `.*`.
    Class(String),
    /// A rule with no `.action`: every action.
    CatchAll,
}

impl Pattern {
    /// Reads a rule's `.action` text.
    pub fn parse(text: &str) -> Result<Pattern, ActionError> {
        if text == "*" {
            return Err(ActionError::Unknown {
                name: text.to_owned(),
                reason: "a rule that names every action is written with no .action at all".into(),
            });
        }
        match text.strip_suffix(".*") {
            Some(prefix) => {
                check_class(prefix)?;
                Ok(Pattern::Class(prefix.to_owned()))
            }
            None if text.contains('*') => Err(ActionError::Unknown {
                name: text.to_owned(),
                reason:
                    "'*' may only stand as the whole last segment, as in net.fetch.org.ziglang.*"
                        .into(),
            }),
            None => Action::parse(text).map(Pattern::Exact),
        }
    }

    /// How specific the pattern is: exact beats every class, a longer class
    /// beats a shorter one, and a catch-all comes last.
    pub fn specificity(&self) -> u32 {
        match self {
            Pattern::Exact(_) => u32::MAX,
            Pattern::Class(p) => 1 + p.split('.').count() as u32,
            Pattern::CatchAll => 0,
        }
    }

    /// Whether `action` (a dotted name) falls under this pattern.
    pub fn matches(&self, action: &str) -> bool {
        match self {
            Pattern::Exact(a) => a.as_str() == action,
            Pattern::Class(p) => {
                action.len() > p.len() + 1
                    && action.starts_with(p.as_str())
                    && action.as_bytes()[p.len()] == b'.'
            }
            Pattern::CatchAll => true,
        }
    }

    /// Whether the pattern names something inside `prefix` (the namespace
    /// `prefix` itself or anything under it). A catch-all names nothing.
    pub fn within(&self, prefix: &str) -> bool {
        let inside = |p: &str| {
            p == prefix
                || (p.len() > prefix.len()
                    && p.starts_with(prefix)
                    && p.as_bytes()[prefix.len()] == b'.')
        };
        match self {
            Pattern::Exact(a) => inside(a.as_str()),
            Pattern::Class(p) => inside(p),
            Pattern::CatchAll => false,
        }
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pattern::Exact(a) => write!(f, "{a}"),
            Pattern::Class(p) => write!(f, "{p}.*"),
            Pattern::CatchAll => f.write_str("(every action)"),
        }
    }
}

fn host_labels(segs: &[&str]) -> bool {
    segs.iter().all(|s| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
    })
}

/// A class prefix is valid when some action can exist strictly under it.
fn check_class(prefix: &str) -> Result<(), ActionError> {
    let segs: Vec<&str> = prefix.split('.').collect();
    let nothing_under = |what: &str| ActionError::Unknown {
        name: format!("{prefix}.*"),
        reason: format!("nothing is named under {what}"),
    };
    let bad_segment = || ActionError::Unknown {
        name: format!("{prefix}.*"),
        reason: "a segment of the prefix is not a name this namespace uses".into(),
    };
    if segs.iter().any(|s| s.is_empty()) {
        return Err(bad_segment());
    }
    let ok = match segs.as_slice() {
        [
            "call" | "exec" | "net" | "web" | "skill" | "secret" | "nix" | "git" | "lsp" | "style"
            | "device" | "mcp" | "plugin" | "fs" | "provider" | "sandbox" | "workspace" | "policy"
            | "file",
        ] => true,
        ["exec", "devshell" | "workspace" | "path", rest @ ..] => {
            rest.iter().all(|s| is_program_name(s) || s.contains('/'))
        }
        ["exec", "nix"] | ["exec", "nix", "store"] => true,
        ["net", "connect" | "fetch", host @ ..] => host_labels(host),
        ["net", "serve"] => true,
        ["net", "serve", p] => return Err(ActionError::BadPort(format!("{p}.*"))),
        ["skill", "read"] | ["secret", "use"] => true,
        ["secret", "use", name] => return Err(ActionError::BadSecretName(format!("{name}.*"))),
        ["nix", "build", attr @ ..] => attr.is_empty() || is_attr_path(&attr.join(".")),
        ["nix", "net", host @ ..] => host_labels(host),
        ["git", sub @ ..] => is_git_subcommand(&sub.join(".")),
        ["device", "usb" | "tty"] | ["device", "tty", "serial"] => true,
        ["device", "usb" | "tty", v] => is_usb_id(v),
        ["mcp", s] | ["plugin", s] => is_label(s),
        ["mcp", s, "tool" | "host"] | ["plugin", s, "tool"] => is_label(s),
        ["mcp", s, "host", host @ ..] => is_label(s) && host_labels(host),
        ["provider", i, model @ ..] => {
            is_label(i) && (model.is_empty() || is_model_id(&model.join(".")))
        }
        ["workspace", "bind"] => true,
        _ => {
            return Err(if Action::parse(prefix).is_ok() {
                nothing_under(prefix)
            } else {
                bad_segment()
            });
        }
    };
    if ok { Ok(()) } else { Err(bad_segment()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_class_matches_strictly_under_its_prefix() {
        let p = Pattern::parse("net.fetch.org.ziglang.*").unwrap();
        assert!(p.matches("net.fetch.org.ziglang.docs"));
        assert!(p.matches("net.fetch.org.ziglang.a.b"));
        assert!(!p.matches("net.fetch.org.ziglang"));
        assert!(!p.matches("net.fetch.org.ziglangx.docs"));
        assert!(!p.matches("net.fetch.com.evil.org.ziglang"));
    }

    #[test]
    fn specificity_orders_exact_then_long_class_then_short_then_catch_all() {
        let exact = Pattern::parse("workspace.integrate").unwrap();
        let long = Pattern::parse("net.fetch.*").unwrap();
        let short = Pattern::parse("workspace.*").unwrap();
        assert!(exact.specificity() > long.specificity());
        assert!(long.specificity() > short.specificity());
        assert!(short.specificity() > Pattern::CatchAll.specificity());
    }

    #[test]
    fn malformed_classes_are_refused() {
        for bad in [
            "*",
            "net.*.com",
            "net.fe*",
            "net.serve.30*",
            "net.serve.3000.*",
            "secret.use.A.*",
            "frob.*",
            "lsp.zls.*",
            "call.read_file.*",
            ".*",
            "net..*",
        ] {
            assert!(Pattern::parse(bad).is_err(), "{bad}");
        }
        for good in [
            "call.*",
            "net.fetch.org.ziglang.*",
            "exec.nix.store.*",
            "mcp.time.tool.*",
            "mcp.notion.host.com.notion.*",
            "workspace.bind.*",
            "provider.openai.*",
            "device.usb.1d50.*",
        ] {
            assert!(Pattern::parse(good).is_ok(), "{good}");
        }
    }
}
