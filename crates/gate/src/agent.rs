//! Who is acting: the agent clients Chock knows by name, and how an agent's
//! shell is told from a person's.
//!
//! Names are the vocabulary of `chock stop --agent NAME`, `chock sync
//! --client NAME` and the decision log, so they are a closed list: a typo in
//! `--agent` would otherwise write a stop that reaches nobody.
//!
//! Telling an agent from a person relies on the environment each client sets
//! for the commands it runs. It is a convention, not a security boundary: an
//! agent that scrubs its environment looks like a person. `docs/stop.md`
//! lists the variables and this limit.

use std::fmt;

/// An agent client Chock can stop by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Agent {
    /// Chock's own sessions.
    Chock,
    ClaudeCode,
    Codex,
    Gemini,
    Cursor,
    Goose,
    Cline,
    Windsurf,
    OpenCode,
}

impl Agent {
    /// Every agent, in the order tables list them.
    pub const ALL: [Agent; 9] = [
        Agent::Chock,
        Agent::ClaudeCode,
        Agent::Codex,
        Agent::Gemini,
        Agent::Cursor,
        Agent::Goose,
        Agent::Cline,
        Agent::Windsurf,
        Agent::OpenCode,
    ];

    /// The name used on the command line, in stop files and in the log.
    pub fn name(self) -> &'static str {
        match self {
            Agent::Chock => "chock",
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
            Agent::Cursor => "cursor",
            Agent::Goose => "goose",
            Agent::Cline => "cline",
            Agent::Windsurf => "windsurf",
            Agent::OpenCode => "opencode",
        }
    }

    /// Parse a name; `None` for anything not in [`Agent::ALL`].
    pub fn from_name(name: &str) -> Option<Agent> {
        Agent::ALL.into_iter().find(|agent| agent.name() == name)
    }

    /// Every name, comma separated, for error messages.
    pub fn names() -> String {
        Agent::ALL.map(Agent::name).join(", ")
    }
}

impl fmt::Display for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Environment variables that mark a process as run by an agent, and whose.
///
/// `CHOCK_AGENT` is the escape hatch for a client not listed here: a person
/// sets it in that client's environment configuration.
pub const AGENT_ENV: [(&str, Option<Agent>); 11] = [
    ("CHOCK_SESSION", Some(Agent::Chock)),
    ("CHOCK_AGENT", None),
    ("CLAUDECODE", Some(Agent::ClaudeCode)),
    ("CODEX_SANDBOX", Some(Agent::Codex)),
    ("CODEX_SANDBOX_NETWORK_DISABLED", Some(Agent::Codex)),
    ("CODEX_THREAD_ID", Some(Agent::Codex)),
    ("CODEX_CI", Some(Agent::Codex)),
    ("GEMINI_CLI", Some(Agent::Gemini)),
    ("CURSOR_AGENT", Some(Agent::Cursor)),
    ("GOOSE_TERMINAL", Some(Agent::Goose)),
    ("OPENCODE", Some(Agent::OpenCode)),
];

/// What the environment says about who runs this process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Actor {
    /// No agent marker: a person, as far as the environment tells.
    Person,
    /// An agent; `agent` is `None` when `CHOCK_AGENT` names a client Chock
    /// does not know, which every stop still reaches.
    Agent {
        agent: Option<Agent>,
        variable: &'static str,
    },
}

impl Actor {
    /// The agent, if it is one Chock knows by name.
    pub fn agent(&self) -> Option<Agent> {
        match self {
            Actor::Person => None,
            Actor::Agent { agent, .. } => *agent,
        }
    }

    pub fn is_agent(&self) -> bool {
        matches!(self, Actor::Agent { .. })
    }
}

/// Detect the actor from an environment lookup (`std::env::var_os` in the
/// binary, a map in tests). An empty value counts as unset.
pub fn detect(lookup: impl Fn(&str) -> Option<String>) -> Actor {
    for (variable, agent) in AGENT_ENV {
        let Some(value) = lookup(variable).filter(|value| !value.is_empty()) else {
            continue;
        };
        let agent = match agent {
            Some(agent) => Some(agent),
            None => Agent::from_name(&value),
        };
        return Actor::Agent { agent, variable };
    }
    Actor::Person
}

/// [`detect`] over this process's environment.
pub fn detect_from_env() -> Actor {
    detect(|name| std::env::var(name).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        }
    }

    #[test]
    fn a_plain_environment_is_a_person() {
        assert_eq!(
            detect(env(&[("HOME", "/root"), ("CODEX_HOME", "/x")])),
            Actor::Person
        );
    }

    #[test]
    fn each_client_marker_names_its_agent() {
        assert_eq!(
            detect(env(&[("CLAUDECODE", "1")])).agent(),
            Some(Agent::ClaudeCode)
        );
        assert_eq!(
            detect(env(&[("GEMINI_CLI", "1")])).agent(),
            Some(Agent::Gemini)
        );
        assert_eq!(
            detect(env(&[("CODEX_THREAD_ID", "t")])).agent(),
            Some(Agent::Codex)
        );
        assert_eq!(
            detect(env(&[("CHOCK_SESSION", "s1")])).agent(),
            Some(Agent::Chock)
        );
    }

    #[test]
    fn chock_agent_with_an_unknown_name_is_still_an_agent() {
        let actor = detect(env(&[("CHOCK_AGENT", "aider")]));
        assert!(actor.is_agent());
        assert_eq!(actor.agent(), None);
    }

    #[test]
    fn an_empty_marker_counts_as_unset() {
        assert_eq!(detect(env(&[("CLAUDECODE", "")])), Actor::Person);
    }

    #[test]
    fn names_round_trip() {
        for agent in Agent::ALL {
            assert_eq!(Agent::from_name(agent.name()), Some(agent));
        }
        assert_eq!(Agent::from_name("claude"), None);
    }
}
