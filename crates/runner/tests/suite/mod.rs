//! Shared helpers for the runner's integration tests.

#![expect(
    clippy::unwrap_used,
    reason = "helpers outside #[test] functions fail the test by panicking"
)]

mod providers;
mod quirks;
mod resilience;
mod script;
mod session;
mod turn;
mod wire;
mod workspace;

use std::path::Path;

use chock_runner::config::{HttpProviderConfig, ProviderConfig};
use chock_runner::provider::{
    AssistantTurn, Message, ModelRequest, Provider, ProviderError, ToolSpec,
};
use chock_testkit::FakeModel;

/// The two HTTP wire formats every provider test runs against.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Kind {
    OpenAi,
    Anthropic,
    Responses,
}

pub(crate) const BOTH: [Kind; 2] = [Kind::OpenAi, Kind::Anthropic];

pub(crate) fn http_config(kind: Kind, fake: &FakeModel) -> HttpProviderConfig {
    HttpProviderConfig {
        base_url: match kind {
            Kind::OpenAi | Kind::Responses => fake.openai_url(),
            Kind::Anthropic => fake.url(),
        },
        key_env: Some("TEST_KEY".to_owned()),
        stream: None,
        timeout_secs: Some(10),
        ..HttpProviderConfig::default()
    }
}

pub(crate) fn provider_with(kind: Kind, http: HttpProviderConfig) -> Provider {
    let config = match kind {
        Kind::OpenAi => ProviderConfig::OpenAi(http),
        Kind::Anthropic => ProviderConfig::Anthropic(http),
        Kind::Responses => ProviderConfig::OpenAiResponses(http),
    };
    Provider::with_env("fake", &config, Path::new("/"), |var| {
        (var == "TEST_KEY").then(|| "sk-test-secret".to_owned())
    })
    .unwrap()
}

pub(crate) fn provider(kind: Kind, fake: &FakeModel) -> Provider {
    provider_with(kind, http_config(kind, fake))
}

pub(crate) fn tools() -> Vec<ToolSpec> {
    vec![ToolSpec {
        name: "read_file".to_owned(),
        description: "Read a file".to_owned(),
        parameters: serde_json::json!({
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        }),
    }]
}

/// The arguments of a `write_file` call.
pub(crate) fn write_args(path: &str, content: &str) -> serde_json::Value {
    serde_json::json!({"path": path, "content": content})
}

/// A request for `model` with `messages`, no system prompt and no tools.
pub(crate) fn plain_request<'a>(model: &'a str, messages: &'a [Message]) -> ModelRequest<'a> {
    ModelRequest {
        model,
        system: "",
        messages,
        tools: &[],
    }
}

/// One model call, collected whole.
pub(crate) async fn answer(
    provider: &Provider,
    request: &ModelRequest<'_>,
) -> Result<AssistantTurn, ProviderError> {
    provider.start(request).await?.collect(|_| {}).await
}

/// One model call with `messages`, the test tools and a brief system
/// prompt, collected whole.
pub(crate) async fn ask_with(
    provider: &Provider,
    messages: &[Message],
) -> Result<AssistantTurn, ProviderError> {
    let tools = tools();
    let request = ModelRequest {
        model: "test-model",
        system: "be brief",
        messages,
        tools: &tools,
    };
    answer(provider, &request).await
}

/// One model call with a one-message conversation, collected whole.
pub(crate) async fn ask(provider: &Provider) -> Result<AssistantTurn, ProviderError> {
    let messages = [Message::User {
        text: "hello".to_owned(),
    }];
    ask_with(provider, &messages).await
}
