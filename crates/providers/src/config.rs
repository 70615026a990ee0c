//! What config.zon says about one provider instance: its `.kind`, where it
//! is reached and how. The operator's config (crates/runner) holds a map of
//! these by instance name.

use std::path::PathBuf;

use serde::Deserialize;

/// One provider instance, told apart by `.kind`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "kind")]
pub enum ProviderConfig {
    /// Chat Completions: OpenAI, Ollama, llama.cpp's server, vLLM.
    #[serde(rename = "openai")]
    OpenAi(HttpProviderConfig),
    /// The OpenAI Responses API (`/v1/responses`).
    #[serde(rename = "openai_responses")]
    OpenAiResponses(HttpProviderConfig),
    /// The Anthropic Messages API.
    #[serde(rename = "anthropic")]
    Anthropic(HttpProviderConfig),
    /// Assistant turns read from a file.
    #[serde(rename = "script")]
    Script(ScriptProviderConfig),
}

/// An instance reached over HTTP.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct HttpProviderConfig {
    /// For `openai`, up to and including `/v1`; for `anthropic`, the host
    /// (`https://api.anthropic.com`).
    pub base_url: String,
    /// The environment variable holding the API key; no key is sent when
    /// absent (a local server).
    #[serde(default)]
    pub key_env: Option<String>,
    /// Stream answers (the default) or ask for one whole body.
    #[serde(default)]
    pub stream: Option<bool>,
    /// Seconds of silence after which a call is abandoned (default 120).
    #[serde(default)]
    pub timeout_secs: Option<u64>,
    /// Output tokens per call.
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// Tokens this instance's models hold; overrides the top-level value.
    #[serde(default)]
    pub context_window: Option<u64>,
    /// Retries of one model call that failed before its first token
    /// (default [`crate::DEFAULT_RETRIES`]); 0 turns retrying off.
    #[serde(default)]
    pub retries: Option<u32>,
    /// Seconds one model call may spend waiting between its retries in all
    /// (default [`crate::DEFAULT_RETRY_WAIT_SECS`]).
    #[serde(default)]
    pub retry_wait_secs: Option<u64>,
    /// Prompt caching: Anthropic cache breakpoints (on by default); `false`
    /// sends none.
    #[serde(default)]
    pub prompt_cache: Option<bool>,
    /// Anthropic extended thinking: the budget of thinking tokens per call
    /// (at least 1024); no thinking when absent.
    #[serde(default)]
    pub thinking_budget: Option<u32>,
    /// OpenAI reasoning effort (`.minimal`, `.low`, `.medium`, `.high`);
    /// the server's default when absent.
    #[serde(default)]
    pub reasoning_effort: Option<ReasoningEffort>,
}

/// How hard an OpenAI reasoning model thinks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReasoningEffort {
    Minimal,
    Low,
    Medium,
    High,
}

impl ReasoningEffort {
    /// The word the APIs take.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Minimal => "minimal",
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
        }
    }
}

/// An instance that plays a script.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ScriptProviderConfig {
    /// The script file; a relative path is taken from the project directory.
    pub path: PathBuf,
}

/// What an instance's config.zon entry says about the bodies it sends.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct WireOptions {
    pub(crate) stream: bool,
    pub(crate) max_tokens: Option<u32>,
    pub(crate) prompt_cache: bool,
    pub(crate) thinking_budget: Option<u32>,
    pub(crate) reasoning_effort: Option<ReasoningEffort>,
}
