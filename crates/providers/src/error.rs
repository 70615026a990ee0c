//! Everything that can go wrong talking to a model, typed so the loop can
//! end a turn with a precise reason and a person can act on the message.
//! Every variant names the provider instance; bodies are cut to an excerpt
//! so a huge error page never floods a terminal or the log.

use std::path::PathBuf;
use std::time::Duration;

/// Longest excerpt of a body kept in an error.
pub const EXCERPT_CHARS: usize = 300;

#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    #[error(
        "provider '{instance}' reads its API key from ${var}, which is not set: export {var} or change .key_env in config.zon"
    )]
    MissingKey { instance: String, var: String },

    #[error("cannot build an HTTP client for provider '{instance}': {detail}")]
    Client { instance: String, detail: String },

    #[error(
        "cannot reach provider '{instance}' at {url}: {detail}; check that the server is running and .base_url in config.zon"
    )]
    Connect {
        instance: String,
        url: String,
        detail: String,
    },

    #[error("provider '{instance}' answered HTTP {status}: {body}")]
    Status {
        instance: String,
        status: u16,
        body: String,
        /// What its headers said about coming back.
        hint: RetryHint,
    },

    #[error(
        "provider '{instance}' still failed after {retries} retries and {waited} of waiting{why}: {last}; carry the session on once the provider answers (.retries and .retry_wait_secs in config.zon bound the retries)"
    )]
    GaveUp {
        instance: String,
        retries: u32,
        waited: String,
        why: String,
        last: String,
    },

    #[error("provider '{instance}': {detail}; change the instance in config.zon")]
    Setting { instance: String, detail: String },

    #[error("provider '{instance}' reported an error mid-stream: {message}")]
    Remote { instance: String, message: String },

    #[error(
        "the stream from provider '{instance}' broke off before the turn ended ({detail}); the turn can be retried"
    )]
    Cut { instance: String, detail: String },

    #[error("provider '{instance}' sent a chunk that could not be read ({detail}): {excerpt}")]
    Malformed {
        instance: String,
        detail: String,
        excerpt: String,
    },

    #[error(
        "provider '{instance}' sent nothing for {after:?}; the turn was abandoned (raise .timeout_secs in config.zon for a slow model)"
    )]
    Timeout { instance: String, after: Duration },

    #[error("cannot read the script {}: {detail}", path.display())]
    ScriptRead { path: PathBuf, detail: String },

    #[error("{}:{line}: {detail}", path.display())]
    ScriptSyntax {
        path: PathBuf,
        line: usize,
        detail: String,
    },

    #[error("the script {} has {turns} assistant turns and the session asked for turn {asked}: add a turn to the script", path.display())]
    ScriptExhausted {
        path: PathBuf,
        turns: usize,
        asked: usize,
    },
}

/// What a failed response said about when to come back, read from its
/// headers before the body was dropped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RetryHint {
    /// `retry-after-ms` or `retry-after`, as the server wrote it.
    pub retry_after: Option<String>,
    /// Whether `retry_after` came from `retry-after-ms`.
    pub in_ms: bool,
    /// The latest reset time of a rate limit the server says is used up
    /// (`anthropic-ratelimit-*-reset`, `x-ratelimit-reset-*`).
    pub reset_in: Option<Duration>,
}

/// At most [`EXCERPT_CHARS`] characters of `text`, marked when cut.
pub fn excerpt(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(EXCERPT_CHARS) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpt_keeps_short_text_and_cuts_long_text_on_a_char_boundary() {
        assert_eq!(excerpt("  short \n"), "short");
        let long = "é".repeat(EXCERPT_CHARS + 10);
        let cut = excerpt(&long);
        assert_eq!(cut.chars().count(), EXCERPT_CHARS + 3);
        assert!(cut.ends_with("..."));
    }
}
