//! Why a value cannot become (part of) an action name.

/// A value a builder refused, with the value and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ActionError {
    /// A name that has to be exactly one segment is not.
    #[error(
        "{what} `{value}` cannot be one segment of an action name: use letters, digits, '_' and '-' only"
    )]
    NotALabel {
        /// What the value names (a tool, a server, ...).
        what: &'static str,
        /// The value as given.
        value: String,
    },
    /// A value with a shape of its own (a model id, a path) that does not fit.
    #[error("{what} `{value}` cannot be part of an action name: {reason}")]
    Malformed {
        /// What the value names.
        what: &'static str,
        /// The value as given.
        value: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A secret name with something other than letters, digits and `_`.
    #[error(
        "secret name `{0}` may hold only letters, digits and '_': a dot in it would name a class of actions nobody wrote"
    )]
    BadSecretName(String),
    /// A host that is not a host name or IP address.
    #[error("host `{host}` cannot be named in a rule: {reason}")]
    BadHost {
        /// The host as given.
        host: String,
        /// Why not.
        reason: String,
    },
    /// A port that is not a number from 1 to 65535.
    #[error(
        "port `{0}` is not a number from 1 to 65535: net.serve.<port> names one port a person wrote"
    )]
    BadPort(String),
    /// A language server whose program name cannot be one label.
    #[error(
        "language server `{program}` is not started: the last part of its path, `{name}`, cannot be one label of a rule (letters, digits, '_' and '-' only)"
    )]
    LspName {
        /// The program path as configured.
        program: String,
        /// Its last path component.
        name: String,
    },
    /// A tool whose call is decided at another key.
    #[error("`call.{tool}` decides nothing: {tool} is decided at {instead}")]
    NotACall {
        /// The tool name.
        tool: String,
        /// Where it is decided instead.
        instead: &'static str,
    },
    /// A written name this version of Chock does not know.
    #[error("`{name}` is not an action name: {reason}")]
    Unknown {
        /// The name as written.
        name: String,
        /// What was expected.
        reason: String,
    },
    /// A written name that is right in shape but not in its canonical spelling.
    #[error("`{name}` is not written the way Chock names it: write `{canonical}`")]
    NotCanonical {
        /// The name as written.
        name: String,
        /// The spelling a builder gives.
        canonical: String,
    },
}
