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
    /// The Anthropic Messages API.
    #[serde(rename = "anthropic")]
    Anthropic(HttpProviderConfig),
    /// Assistant turns read from a file.
    #[serde(rename = "script")]
    Script(ScriptProviderConfig),
}

/// An instance reached over HTTP.
#[derive(Debug, Clone, PartialEq, Deserialize)]
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
}

/// An instance that plays a script.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ScriptProviderConfig {
    /// The script file; a relative path is taken from the project directory.
    pub path: PathBuf,
}
