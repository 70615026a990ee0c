//! Chock's policy: every action name, every rule layer, the fold that turns
//! them into one decision, and the explanation of that decision.
//!
//! The crate is shaped around one question, "what does this session answer
//! for this action?", asked many times a second: rules are indexed by
//! segment when a policy is built so [`Policy::decision`] costs one step per
//! segment of the action, and [`Policy::decide`] redoes the fold keeping every
//! matching rule when a person (or the session log) needs the reasons.
//!
//! ```
//! use chock_policy::{Action, Decision, Layers, Policy, Rule, RuleSet};
//!
//! let rule = Rule::parse(Some("net.fetch.org.ziglang.*"), Decision::Allow).unwrap();
//! let policy = Policy::new(Layers {
//!     project: Some(RuleSet::new(vec![rule])),
//!     ..Layers::default()
//! });
//! let docs = Action::net_fetch("docs.ziglang.org").unwrap();
//! assert_eq!(docs.as_str(), "net.fetch.org.ziglang.docs");
//! assert_eq!(policy.decision(&docs), Decision::Allow);
//!
//! // A host somebody else registered does not match the class: it asks,
//! // and the verdict says which rule would permit it.
//! let evil = policy.decide(&Action::net_fetch("ziglang.org.evil.com").unwrap());
//! assert_eq!(evil.decision, Decision::Ask);
//! assert!(evil.help.is_some());
//! ```

#![deny(clippy::print_stdout, clippy::print_stderr)]
#![forbid(unsafe_code)]

mod action;
mod binds;
mod check;
mod decision;
pub mod defaults;
mod devices;
mod explain;
mod files;
mod index;
mod load;
mod lsp;
mod mcp;
mod net;
mod pattern;
mod policy;
mod rule;
mod secrets;
mod style;
mod verdict;

pub use action::label::is_label;
pub use action::{Action, ActionError, ExecClass, ExecContext, SkillLayer, is_store_hash};
pub use binds::{BindMode, WorkspaceBind};
pub use check::{Checked, FileKind, KNOWN_BLOCKS, NOT_ACTED_ON, Problem, check_file, check_text};
pub use decision::{Decision, UnknownDecision};
pub use devices::{DeviceId, NamedDevice};
pub use files::FileGlobs;
pub use load::{LoadError, Sources, load_file, load_file_as, refuse_open_to_others};
pub use lsp::{DEFAULT_LSP_START_MS, DEFAULT_LSP_WAIT_MS, LANGUAGES, LspServer, language_of};
pub use mcp::{
    DEFAULT_CALL_TIMEOUT_MS, DEFAULT_START_TIMEOUT_MS, McpServer, McpServers, McpTransport,
    REVISIONS, url_host,
};
pub use net::{MAX_RESOLVER_PORTS, NetMode, NetSettings, RESOLVER_PORTS, ResolverMode};
pub use pattern::Pattern;
pub use policy::{Layers, Org, Policy, PromiseId, RuleSet, WidenError};
pub use rule::{LayerKind, Rule, RuleRef, rule_text};
pub use secrets::{
    BindTarget, DEFAULT_COMMAND_TIMEOUT_SECS, MAX_COMMAND_TIMEOUT_SECS, SecretBind, SecretSource,
    SecretSpec,
};
pub use style::{Measure, QueryAt, StyleRule};
pub use verdict::{Help, Loser, Timing, Verdict, rule_block};

#[cfg(test)]
mod tests {
    fn send_sync<T: Send + Sync>() {}

    #[test]
    fn a_policy_and_its_verdicts_cross_threads() {
        send_sync::<crate::Policy>();
        send_sync::<crate::Verdict>();
        send_sync::<crate::Action>();
    }
}
