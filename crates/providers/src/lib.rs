//! Model providers: the wire formats, and nothing of the tools beyond
//! their schemas. A [`Provider`] is one instance named in config.zon
//! (`openai`, `anthropic` or `script` kind); [`Provider::start`] sends one
//! model call and returns a [`TurnStream`] that yields the assistant turn
//! as it arrives: text deltas, whole tool calls, usage, and finally the stop
//! reason. Everything runs on the caller's task: no threads are started, so
//! the loop can use it on a `current_thread` runtime.

mod anthropic;
mod config;
mod error;
mod http;
mod openai;
mod script;
mod types;

use std::collections::VecDeque;
use std::path::Path;
use std::time::Duration;

pub use error::{EXCERPT_CHARS, ProviderError, excerpt};
pub use types::{
    AssistantTurn, Message, ModelRequest, StopReason, StreamEvent, ToolCall, ToolSpec, Usage,
};

pub use config::{HttpProviderConfig, ProviderConfig, ScriptProviderConfig};
pub use http::error_chain;
use http::{Body, SseDecoder};
use openai::Flow;

/// Whether a provider can be handed an image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImageSupport {
    /// Its wire format carries images (OpenAI Chat Completions, Anthropic
    /// Messages); whether the model reads them is the model's affair.
    Accepted,
    /// It cannot; the text says why, for the model.
    Refused(String),
}

/// How long a provider may stay silent before the turn is abandoned, when
/// config.zon sets no `.timeout_secs`.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(120);

/// An API key. Its `Debug` form is redacted so that no log line, panic
/// message or error can carry it.
struct Secret(String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wire {
    OpenAi,
    Anthropic,
}

#[derive(Debug)]
struct Http {
    wire: Wire,
    client: reqwest::Client,
    url: String,
    key: Option<Secret>,
    stream: bool,
    idle: Duration,
    max_tokens: Option<u32>,
}

#[derive(Debug)]
enum Kind {
    Http(Box<Http>),
    Script(script::Script),
}

/// One configured provider instance.
#[derive(Debug)]
pub struct Provider {
    instance: String,
    kind: Kind,
}

impl Provider {
    /// Builds the instance `instance` from its config.zon entry, reading its
    /// API key (if it names one) from the process environment. A script's
    /// relative path is resolved against `base_dir`.
    pub fn new(
        instance: &str,
        config: &ProviderConfig,
        base_dir: &Path,
    ) -> Result<Self, ProviderError> {
        Self::with_env(instance, config, base_dir, |var| std::env::var(var).ok())
    }

    /// [`Provider::new`] with the environment given as a lookup function.
    pub fn with_env(
        instance: &str,
        config: &ProviderConfig,
        base_dir: &Path,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ProviderError> {
        let kind = match config {
            ProviderConfig::OpenAi(http) => {
                Kind::Http(Box::new(Http::new(instance, Wire::OpenAi, http, &env)?))
            }
            ProviderConfig::Anthropic(http) => {
                Kind::Http(Box::new(Http::new(instance, Wire::Anthropic, http, &env)?))
            }
            ProviderConfig::Script(script) => {
                Kind::Script(script::Script::load(&base_dir.join(&script.path))?)
            }
        };
        Ok(Self {
            instance: instance.to_owned(),
            kind,
        })
    }

    /// The instance's name in config.zon.
    pub fn instance(&self) -> &str {
        &self.instance
    }

    /// Whether the instance's wire format can carry an image to the model.
    pub fn image_support(&self) -> ImageSupport {
        match &self.kind {
            Kind::Http(_) => ImageSupport::Accepted,
            Kind::Script(_) => ImageSupport::Refused(format!(
                "the session's provider '{}' plays a script and cannot take images",
                self.instance
            )),
        }
    }

    /// Sends one model call. Errors that happen before the first byte of the
    /// answer (unreachable server, HTTP error status) are returned here;
    /// errors after it come out of the stream.
    pub async fn start(&self, request: &ModelRequest<'_>) -> Result<TurnStream, ProviderError> {
        match &self.kind {
            Kind::Script(script) => Ok(TurnStream::ready(&self.instance, script.answer(request)?)),
            Kind::Http(http) => http.start(&self.instance, request).await,
        }
    }
}

impl Http {
    fn new(
        instance: &str,
        wire: Wire,
        config: &HttpProviderConfig,
        env: &impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ProviderError> {
        let key = match &config.key_env {
            None => None,
            Some(var) => Some(Secret(env(var).filter(|key| !key.is_empty()).ok_or_else(
                || ProviderError::MissingKey {
                    instance: instance.to_owned(),
                    var: var.clone(),
                },
            )?)),
        };
        let base = config.base_url.trim_end_matches('/');
        let url = match wire {
            Wire::OpenAi => format!("{base}/chat/completions"),
            Wire::Anthropic => format!("{base}/v1/messages"),
        };
        Ok(Self {
            wire,
            client: http::client(instance, base)?,
            url,
            key,
            stream: config.stream.unwrap_or(true),
            idle: config
                .timeout_secs
                .map_or(DEFAULT_IDLE_TIMEOUT, Duration::from_secs),
            max_tokens: config.max_tokens,
        })
    }

    async fn start(
        &self,
        instance: &str,
        request: &ModelRequest<'_>,
    ) -> Result<TurnStream, ProviderError> {
        let body = match self.wire {
            Wire::OpenAi => openai::body(request, self.stream, self.max_tokens),
            Wire::Anthropic => anthropic::body(request, self.stream, self.max_tokens),
        };
        let mut builder = self
            .client
            .post(&self.url)
            .header("content-type", "application/json")
            .body(body.to_string());
        builder = match (self.wire, &self.key) {
            (Wire::OpenAi, Some(key)) => {
                builder.header("authorization", format!("Bearer {}", key.0))
            }
            (Wire::Anthropic, Some(key)) => builder.header("x-api-key", &key.0),
            (_, None) => builder,
        };
        if self.wire == Wire::Anthropic {
            builder = builder.header("anthropic-version", anthropic::API_VERSION);
        }
        if self.stream {
            builder = builder.header("accept", "text/event-stream");
        }
        let response = http::send(instance, &self.url, builder, self.idle).await?;
        let body = Body::new(response, self.idle);
        if !self.stream {
            let bytes = body.all(instance).await?;
            let text = String::from_utf8_lossy(&bytes);
            let events = match self.wire {
                Wire::OpenAi => openai::whole(instance, &text)?,
                Wire::Anthropic => anthropic::whole(instance, &text)?,
            };
            return Ok(TurnStream::ready(instance, events));
        }
        let parser = match self.wire {
            Wire::OpenAi => Parser::OpenAi(openai::StreamState::default()),
            Wire::Anthropic => Parser::Anthropic(anthropic::StreamState::default()),
        };
        Ok(TurnStream {
            instance: instance.to_owned(),
            pending: VecDeque::new(),
            live: Some(Live {
                body,
                sse: SseDecoder::default(),
                parser,
            }),
        })
    }
}

#[derive(Debug)]
enum Parser {
    OpenAi(openai::StreamState),
    Anthropic(anthropic::StreamState),
}

impl Parser {
    fn feed(
        &mut self,
        instance: &str,
        event: &http::SseEvent,
        out: &mut VecDeque<StreamEvent>,
    ) -> Result<Flow, ProviderError> {
        match self {
            Self::OpenAi(state) => state.feed(instance, event, out),
            Self::Anthropic(state) => state.feed(instance, event, out),
        }
    }

    fn finish(
        &mut self,
        instance: &str,
        out: &mut VecDeque<StreamEvent>,
    ) -> Result<(), ProviderError> {
        match self {
            Self::OpenAi(state) => state.finish(instance, out),
            Self::Anthropic(state) => state.finish(instance, out),
        }
    }
}

#[derive(Debug)]
struct Live {
    body: Body,
    sse: SseDecoder,
    parser: Parser,
}

/// One assistant turn as it arrives.
#[derive(Debug)]
pub struct TurnStream {
    instance: String,
    pending: VecDeque<StreamEvent>,
    live: Option<Live>,
}

impl TurnStream {
    fn ready(instance: &str, events: VecDeque<StreamEvent>) -> Self {
        Self {
            instance: instance.to_owned(),
            pending: events,
            live: None,
        }
    }

    /// The next event; `None` after [`StreamEvent::Stop`] or after an
    /// error.
    pub async fn next(&mut self) -> Option<Result<StreamEvent, ProviderError>> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Some(Ok(event));
            }
            let live = self.live.as_mut()?;
            let mut events = Vec::new();
            let ended = match live.body.chunk(&self.instance).await {
                Err(err) => {
                    self.live = None;
                    return Some(Err(err));
                }
                Ok(Some(bytes)) => {
                    live.sse.feed(&bytes, &mut events);
                    false
                }
                Ok(None) => {
                    live.sse.finish(&mut events);
                    true
                }
            };
            let mut done = false;
            for event in &events {
                match live.parser.feed(&self.instance, event, &mut self.pending) {
                    Ok(Flow::More) => {}
                    Ok(Flow::Done) => {
                        done = true;
                        break;
                    }
                    Err(err) => {
                        self.live = None;
                        self.pending.clear();
                        return Some(Err(err));
                    }
                }
            }
            if ended && !done {
                if let Err(err) = live.parser.finish(&self.instance, &mut self.pending) {
                    self.live = None;
                    self.pending.clear();
                    return Some(Err(err));
                }
                done = true;
            }
            if done {
                self.live = None;
            }
        }
    }

    /// Reads the whole turn, calling `on_text` with each text delta as it
    /// arrives.
    pub async fn collect(
        mut self,
        mut on_text: impl FnMut(&str),
    ) -> Result<AssistantTurn, ProviderError> {
        let mut text = String::new();
        let mut calls = Vec::new();
        let mut usage = None;
        while let Some(event) = self.next().await {
            match event? {
                StreamEvent::Text(delta) => {
                    on_text(&delta);
                    text.push_str(&delta);
                }
                StreamEvent::ToolCall(call) => calls.push(call),
                StreamEvent::Usage(got) => usage = Some(got),
                StreamEvent::Stop(stop) => {
                    return Ok(AssistantTurn {
                        text,
                        calls,
                        usage,
                        stop,
                    });
                }
            }
        }
        Err(ProviderError::Cut {
            instance: self.instance,
            detail: "the turn ended without a stop reason".to_owned(),
        })
    }
}
