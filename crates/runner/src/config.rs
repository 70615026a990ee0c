//! The operator's config, `$XDG_CONFIG_HOME/chock/config.zon`: provider
//! instances, the model a session uses, and the settings the loop needs
//! beyond them (context window, reviewer model, search engine, skills
//! directory). Other crates read their own parts of the same file (the
//! operator's policy rules), so fields this crate does not know are ignored
//! rather than refused.
//!
//! A model is named `instance/model`: everything before the first `/` is a
//! provider instance of `.providers`, everything after it is the model name
//! that instance's server knows (which may itself contain `/`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

pub use chock_tools::SearchConfig;

pub use chock_providers::{
    HttpProviderConfig, ProviderConfig, ReasoningEffort, ScriptProviderConfig,
};

/// The config.zon block a person with no provider is shown.
pub const EXAMPLE_PROVIDERS: &str = r#".{
    .providers = .{
        .local = .{ .kind = .openai, .base_url = "http://127.0.0.1:11434/v1" },
    },
    .model = "local/qwen2.5-coder",
}"#;

/// The whole operator config, as far as the runner reads it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Config {
    /// Provider instances by name.
    #[serde(default)]
    pub providers: BTreeMap<String, ProviderConfig>,
    /// The model sessions use, `instance/model`.
    #[serde(default)]
    pub model: Option<String>,
    /// The model that answers `agent_review` decisions, `instance/model`;
    /// the session's own model when absent.
    #[serde(default)]
    pub reviewer: Option<String>,
    /// Tokens the model's context holds, for every model that does not set
    /// its own; compaction starts as a session nears it.
    #[serde(default)]
    pub context_window: Option<u64>,
    /// The engine behind `web_search`.
    #[serde(default)]
    pub search: Option<SearchConfig>,
    /// Where skills are read from.
    #[serde(default)]
    pub skills_dir: Option<PathBuf>,
    /// The dev shell sessions run their commands in (docs/nix.md).
    #[serde(default)]
    pub devshell: Option<chock_tools::DevShellConfig>,
    /// Model calls one turn may make (default 50).
    #[serde(default)]
    pub max_model_calls: Option<usize>,
    /// Model calls one session may make in all, over every turn and every
    /// process that carries it on; no bound when absent.
    #[serde(default)]
    pub max_session_model_calls: Option<usize>,
    /// The bounds on subagents (docs/subagents.md).
    #[serde(default)]
    pub subagents: SubagentBounds,
}

/// `.subagents` in config.zon: how deep a tree of subagents may grow, how
/// many of one session's children may be live at once, and how many tokens
/// a whole tree may spend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SubagentBounds {
    /// Levels below the session a person started (1: its children may not
    /// spawn; 0: no subagents at all).
    pub max_depth: usize,
    /// Children of one session live at once.
    pub max_live: usize,
    /// Tokens (sent and produced) of a session and all its subagents.
    pub max_tree_tokens: u64,
}

impl Default for SubagentBounds {
    fn default() -> Self {
        SubagentBounds {
            max_depth: 2,
            max_live: 4,
            max_tree_tokens: 2_000_000,
        }
    }
}

/// A model chosen for a session: which instance, and the model's name there.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelChoice<'a> {
    pub instance: &'a str,
    pub model: &'a str,
    pub provider: &'a ProviderConfig,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {}: {detail}", path.display())]
    Read { path: PathBuf, detail: String },

    #[error("{}: {detail}", path.display())]
    Parse { path: PathBuf, detail: String },

    #[error("{detail}")]
    Unsafe { detail: String },

    #[error("{}: .{field} = 0 would let no model call be made: give at least 1, or leave it out", path.display())]
    ZeroBound { path: PathBuf, field: &'static str },

    #[error(
        "no model provider is configured: write this to {} (or pass --model instance/model naming one):\n\n{EXAMPLE_PROVIDERS}\n",
        path.display()
    )]
    NoProvider { path: PathBuf },

    #[error("no model is chosen: set .model = \"<instance>/<model>\" in {} or pass --model (instances: {known})", path.display())]
    NoModel { path: PathBuf, known: String },

    #[error(
        "the model '{given}' does not name an instance: write it as <instance>/<model>, e.g. {example}"
    )]
    BadModel { given: String, example: String },

    #[error("the model '{given}' names the provider instance '{instance}', which {} does not define (instances: {known})", path.display())]
    UnknownInstance {
        given: String,
        instance: String,
        path: PathBuf,
        known: String,
    },
}

impl Config {
    /// Reads the config at `path`; a file that does not exist is an empty
    /// config (so the error a person sees is the one that says what to
    /// write, not "file not found").
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        chock_policy::refuse_open_to_others(path).map_err(|err| ConfigError::Unsafe {
            detail: err.to_string(),
        })?;
        match std::fs::read_to_string(path) {
            Ok(text) => Self::parse(path, &text),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(err) => Err(ConfigError::Read {
                path: path.to_owned(),
                detail: err.to_string(),
            }),
        }
    }

    /// Parses config text; `path` is only used in errors.
    pub fn parse(path: &Path, text: &str) -> Result<Self, ConfigError> {
        let config: Self = chock_zon::from_str(text).map_err(|err| ConfigError::Parse {
            path: path.to_owned(),
            detail: err.to_string(),
        })?;
        for (field, bound) in [
            ("max_model_calls", config.max_model_calls),
            ("max_session_model_calls", config.max_session_model_calls),
        ] {
            if bound == Some(0) {
                return Err(ConfigError::ZeroBound {
                    path: path.to_owned(),
                    field,
                });
            }
        }
        Ok(config)
    }

    /// The bounds on a turn's and a session's model calls.
    pub fn turn_limits(&self) -> crate::turn::TurnLimits {
        let default = crate::turn::TurnLimits::default();
        crate::turn::TurnLimits {
            max_model_calls: self.max_model_calls.unwrap_or(default.max_model_calls),
            max_session_calls: self.max_session_model_calls,
            ..default
        }
    }

    /// `$XDG_CONFIG_HOME/chock/config.zon`, else `~/.config/chock/config.zon`.
    pub fn default_path() -> Option<PathBuf> {
        let base = std::env::var_os("XDG_CONFIG_HOME")
            .filter(|dir| !dir.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))?;
        Some(base.join("chock").join("config.zon"))
    }

    /// Picks the session's model: `over` (from `--model`) when given, else
    /// `.model`.
    pub fn choose<'a>(
        &'a self,
        over: Option<&'a str>,
        path: &Path,
    ) -> Result<ModelChoice<'a>, ConfigError> {
        let known = || {
            self.providers
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        };
        let Some(given) = over.or(self.model.as_deref()) else {
            if self.providers.is_empty() {
                return Err(ConfigError::NoProvider {
                    path: path.to_owned(),
                });
            }
            return Err(ConfigError::NoModel {
                path: path.to_owned(),
                known: known(),
            });
        };
        let Some((instance, model)) = given
            .split_once('/')
            .filter(|(i, m)| !i.is_empty() && !m.is_empty())
        else {
            let example = self.providers.keys().next().map_or_else(
                || "local/qwen2.5-coder".to_owned(),
                |first| format!("{first}/{given}"),
            );
            return Err(ConfigError::BadModel {
                given: given.to_owned(),
                example,
            });
        };
        let Some(provider) = self.providers.get(instance) else {
            if self.providers.is_empty() {
                return Err(ConfigError::NoProvider {
                    path: path.to_owned(),
                });
            }
            return Err(ConfigError::UnknownInstance {
                given: given.to_owned(),
                instance: instance.to_owned(),
                path: path.to_owned(),
                known: known(),
            });
        };
        Ok(ModelChoice {
            instance,
            model,
            provider,
        })
    }

    /// The context window for models of `instance`, when one is known.
    pub fn context_window(&self, instance: &str) -> Option<u64> {
        let own = match self.providers.get(instance) {
            Some(
                ProviderConfig::OpenAi(http)
                | ProviderConfig::OpenAiResponses(http)
                | ProviderConfig::Anthropic(http),
            ) => http.context_window,
            _ => None,
        };
        own.or(self.context_window)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    // The schema is plain serde, so its selection logic is tested here from
    // JSON; the ZON spelling is tested where the file is parsed.
    fn config(json: &str) -> Config {
        serde_json::from_str(json).unwrap()
    }

    fn two() -> Config {
        config(
            r#"{
                "providers": {
                    "local": {"kind": "openai", "base_url": "http://127.0.0.1:11434/v1"},
                    "claude": {"kind": "anthropic", "base_url": "https://api.anthropic.com",
                               "key_env": "ANTHROPIC_API_KEY", "context_window": 200000}
                },
                "model": "local/qwen2.5-coder",
                "context_window": 32768
            }"#,
        )
    }

    #[test]
    fn no_provider_shows_the_block_to_write() {
        let err = Config::default()
            .choose(None, Path::new("/home/me/.config/chock/config.zon"))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "no model provider is configured: write this to /home/me/.config/chock/config.zon (or pass --model instance/model naming one):

.{
    .providers = .{
        .local = .{ .kind = .openai, .base_url = \"http://127.0.0.1:11434/v1\" },
    },
    .model = \"local/qwen2.5-coder\",
}
"
        );
    }

    #[test]
    fn the_model_comes_from_the_config_or_the_override() {
        let config = two();
        let path = Path::new("c.zon");
        let chosen = config.choose(None, path).unwrap();
        assert_eq!((chosen.instance, chosen.model), ("local", "qwen2.5-coder"));
        let over = config
            .choose(Some("claude/claude-sonnet-4-5"), path)
            .unwrap();
        assert_eq!((over.instance, over.model), ("claude", "claude-sonnet-4-5"));
        assert!(matches!(over.provider, ProviderConfig::Anthropic(_)));
        let nested = config.choose(Some("local/library/qwen:7b"), path).unwrap();
        assert_eq!(nested.model, "library/qwen:7b", "only the first / splits");
    }

    #[test]
    fn a_bad_or_unknown_model_says_how_to_write_it() {
        let config = two();
        let path = Path::new("c.zon");
        assert_eq!(
            config.choose(Some("qwen"), path).unwrap_err().to_string(),
            "the model 'qwen' does not name an instance: write it as <instance>/<model>, e.g. claude/qwen"
        );
        assert_eq!(
            config.choose(Some("gpt/4o"), path).unwrap_err().to_string(),
            "the model 'gpt/4o' names the provider instance 'gpt', which c.zon does not define (instances: claude, local)"
        );
        let mut unset = two();
        unset.model = None;
        assert_eq!(
            unset.choose(None, path).unwrap_err().to_string(),
            "no model is chosen: set .model = \"<instance>/<model>\" in c.zon or pass --model (instances: claude, local)"
        );
    }

    #[test]
    fn the_context_window_of_an_instance_overrides_the_default() {
        let config = two();
        assert_eq!(config.context_window("claude"), Some(200_000));
        assert_eq!(config.context_window("local"), Some(32768));
    }
}

#[cfg(test)]
mod zon_tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const ISSUE_EXAMPLE: &str = r#".{
    .providers = .{
        .local = .{ .kind = .openai, .base_url = "http://127.0.0.1:11434/v1" },
        .claude = .{ .kind = .anthropic, .base_url = "https://api.anthropic.com", .key_env = "ANTHROPIC_API_KEY" },
        .demo = .{ .kind = .script, .path = "examples/hello.script" },
    },
    .model = "local/qwen2.5-coder",
}
"#;

    #[test]
    fn the_documented_shape_parses() {
        let config = Config::parse(Path::new("config.zon"), ISSUE_EXAMPLE).unwrap();
        assert_eq!(config.model.as_deref(), Some("local/qwen2.5-coder"));
        assert_eq!(
            config.providers["claude"],
            ProviderConfig::Anthropic(HttpProviderConfig {
                base_url: "https://api.anthropic.com".into(),
                key_env: Some("ANTHROPIC_API_KEY".into()),
                ..HttpProviderConfig::default()
            })
        );
        assert_eq!(
            config.providers["demo"],
            ProviderConfig::Script(ScriptProviderConfig {
                path: "examples/hello.script".into()
            })
        );
        assert!(matches!(
            config.providers["local"],
            ProviderConfig::OpenAi(_)
        ));
    }

    #[test]
    fn every_optional_field_parses() {
        let text = r#".{
    .providers = .{
        .vllm = .{ .kind = .openai, .base_url = "http://127.0.0.1:8000/v1", .stream = false,
                   .timeout_secs = 600, .max_tokens = 4096, .context_window = 131072 },
    },
    .model = "vllm/Qwen/Qwen2.5-Coder-7B-Instruct",
    .reviewer = "vllm/small",
    .context_window = 32768,
    .search = .{ .kind = .searxng, .base_url = "http://127.0.0.1:8888" },
    .skills_dir = "/home/me/skills",
    .rules = .{ .{ .action = "call.write_file", .decision = .ask } },
}"#;
        let config = Config::parse(Path::new("config.zon"), text).unwrap();
        assert_eq!(config.context_window("vllm"), Some(131_072));
        assert_eq!(
            config.search,
            Some(SearchConfig::Searxng {
                base_url: "http://127.0.0.1:8888".into()
            })
        );
        assert_eq!(config.reviewer.as_deref(), Some("vllm/small"));
        let chosen = config.choose(None, Path::new("config.zon")).unwrap();
        assert_eq!(chosen.model, "Qwen/Qwen2.5-Coder-7B-Instruct");
    }

    #[test]
    fn mistakes_are_reported_with_line_and_column() {
        let text = ".{\n    .providers = .{\n        .x = .{ .kind = .opneai, .base_url = \"u\" },\n    },\n}\n";
        let err = Config::parse(Path::new("/c/config.zon"), text).unwrap_err();
        let message = err.to_string();
        assert!(message.starts_with("/c/config.zon: line 3"), "{message}");
        assert!(message.contains("opneai"), "{message}");
        let missing = Config::parse(
            Path::new("c.zon"),
            ".{ .providers = .{ .x = .{ .kind = .openai } } }",
        )
        .unwrap_err()
        .to_string();
        assert!(missing.contains("base_url"), "{missing}");
    }

    #[test]
    fn a_missing_file_is_an_empty_config_that_asks_for_a_provider() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.zon");
        let config = Config::load(&path).unwrap();
        assert!(matches!(
            config.choose(None, &path),
            Err(ConfigError::NoProvider { .. })
        ));
    }
}
