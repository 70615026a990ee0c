//! Model providers: the wire formats, and nothing of the tools beyond
//! their schemas. A [`Provider`] is one instance named in config.zon
//! (`openai`, `openai_responses`, `anthropic` or `script` kind);
//! [`Provider::start`] sends one model call and returns a [`TurnStream`]
//! that yields the assistant turn as it arrives: text and thinking deltas,
//! whole tool calls and reasoning, usage, and finally the stop reason.
//! [`Provider::start_first`] also waits for the answer's first event, so a
//! failure before the first token can be retried ([`Retrier`]), and
//! [`Provider::start_retrying`] runs that loop for callers with nothing to
//! record. Everything runs on the caller's task: no threads are started,
//! so the loop can use it on a `current_thread` runtime.

mod anthropic;
mod config;
mod error;
mod http;
mod openai;
mod responses;
mod retry;
mod script;
mod types;

use std::collections::VecDeque;
use std::path::Path;
use std::time::Duration;

pub use error::{EXCERPT_CHARS, ProviderError, excerpt};
pub use retry::{
    DEFAULT_RETRIES, DEFAULT_RETRY_WAIT_SECS, Retrier, Retry, RetryHint, RetryPolicy, RetryWait,
};
pub use types::{
    AssistantTurn, Message, ModelRequest, Reasoning, ReasoningKind, StopReason, StreamEvent,
    ToolCall, ToolSpec, UnknownItem, Usage,
};

use config::WireOptions;
pub use config::{HttpProviderConfig, ProviderConfig, ReasoningEffort, ScriptProviderConfig};
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
    Responses,
    Anthropic,
}

/// Anthropic's least thinking budget.
const MIN_THINKING_BUDGET: u32 = 1024;

#[derive(Debug)]
struct Http {
    wire: Wire,
    client: reqwest::Client,
    url: String,
    count_url: Option<String>,
    key: Option<Secret>,
    idle: Duration,
    options: WireOptions,
    retry: RetryPolicy,
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
            ProviderConfig::OpenAiResponses(http) => {
                Kind::Http(Box::new(Http::new(instance, Wire::Responses, http, &env)?))
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

    /// [`Provider::start`], and the answer's first event awaited: an answer
    /// that breaks off before it is a failure before the first token, which
    /// may be retried; one that breaks off later comes out of the stream.
    pub async fn start_first(
        &self,
        request: &ModelRequest<'_>,
    ) -> Result<TurnStream, ProviderError> {
        let mut stream = self.start(request).await?;
        stream.first().await?;
        Ok(stream)
    }

    /// A fresh retry budget for one model call, with this instance's
    /// bounds.
    pub fn retrier(&self) -> Retrier {
        let policy = match &self.kind {
            Kind::Http(http) => http.retry,
            Kind::Script(_) => RetryPolicy {
                retries: 0,
                ..RetryPolicy::default()
            },
        };
        Retrier::new(&self.instance, policy)
    }

    /// [`Provider::start_first`] with retries, each wait told to `on_wait`
    /// before it is waited.
    pub async fn start_retrying(
        &self,
        request: &ModelRequest<'_>,
        mut on_wait: impl FnMut(&RetryWait),
    ) -> Result<TurnStream, ProviderError> {
        let mut retrier = self.retrier();
        loop {
            match self.start_first(request).await {
                Ok(stream) => return Ok(stream),
                Err(err) => match retrier.after(err) {
                    Retry::After(wait) => {
                        on_wait(&wait);
                        tokio::time::sleep(wait.delay).await;
                    }
                    Retry::GiveUp(err) => return Err(err),
                },
            }
        }
    }

    /// Counts the tokens `request` would send, where the API offers a
    /// counting call (Anthropic's `count_tokens`); `None` where it does not.
    pub async fn count_tokens(
        &self,
        request: &ModelRequest<'_>,
    ) -> Result<Option<u64>, ProviderError> {
        match &self.kind {
            Kind::Http(http) => http.count(&self.instance, request).await,
            Kind::Script(_) => Ok(None),
        }
    }

    /// Whether [`Provider::count_tokens`] can count.
    pub fn counts_tokens(&self) -> bool {
        matches!(&self.kind, Kind::Http(http) if http.count_url.is_some())
    }
}

/// Refuses settings the instance's kind would not act on, and values its
/// API would refuse: a setting that is silently ignored is a surprise a
/// person finds only on the bill.
fn check_settings(
    instance: &str,
    wire: Wire,
    config: &HttpProviderConfig,
) -> Result<(), ProviderError> {
    let fail = |detail: String| {
        Err(ProviderError::Setting {
            instance: instance.to_owned(),
            detail,
        })
    };
    let kind = match wire {
        Wire::OpenAi => "openai",
        Wire::Responses => "openai_responses",
        Wire::Anthropic => "anthropic",
    };
    if let Some(budget) = config.thinking_budget {
        if wire != Wire::Anthropic {
            return fail(format!(
                ".thinking_budget is Anthropic's extended thinking and .kind = .{kind} has none; set .reasoning_effort instead"
            ));
        }
        if budget < MIN_THINKING_BUDGET {
            return fail(format!(
                ".thinking_budget = {budget} is below the API's least budget, {MIN_THINKING_BUDGET}"
            ));
        }
        if let Some(max) = config.max_tokens.filter(|&max| max <= budget) {
            return fail(format!(
                ".max_tokens = {max} must be larger than .thinking_budget = {budget}, which it includes"
            ));
        }
    }
    if config.reasoning_effort.is_some() && wire == Wire::Anthropic {
        return fail(
            ".reasoning_effort is OpenAI's; an anthropic instance thinks with .thinking_budget"
                .to_owned(),
        );
    }
    if config.prompt_cache == Some(false) && wire != Wire::Anthropic {
        return fail(format!(
            ".prompt_cache = false does nothing for .kind = .{kind}, whose server caches prefixes by itself; remove it"
        ));
    }
    Ok(())
}

impl Http {
    fn new(
        instance: &str,
        wire: Wire,
        config: &HttpProviderConfig,
        env: &impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ProviderError> {
        check_settings(instance, wire, config)?;
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
        let (url, count_url) = match wire {
            Wire::OpenAi => (format!("{base}/chat/completions"), None),
            Wire::Responses => (format!("{base}/responses"), None),
            Wire::Anthropic => (
                format!("{base}/v1/messages"),
                Some(format!("{base}/v1/messages/count_tokens")),
            ),
        };
        let default_retry = RetryPolicy::default();
        Ok(Self {
            wire,
            client: http::client(instance, base)?,
            url,
            count_url,
            key,
            idle: config
                .timeout_secs
                .map_or(DEFAULT_IDLE_TIMEOUT, Duration::from_secs),
            options: WireOptions {
                stream: config.stream.unwrap_or(true),
                max_tokens: config.max_tokens,
                prompt_cache: config.prompt_cache.unwrap_or(true),
                thinking_budget: config.thinking_budget,
                reasoning_effort: config.reasoning_effort,
            },
            retry: RetryPolicy {
                retries: config.retries.unwrap_or(default_retry.retries),
                total_wait: config
                    .retry_wait_secs
                    .map_or(default_retry.total_wait, Duration::from_secs),
            },
        })
    }

    /// A POST of `body` to `url` with the instance's key and headers.
    fn post(&self, url: &str, body: &serde_json::Value, stream: bool) -> reqwest::RequestBuilder {
        let mut builder = self
            .client
            .post(url)
            .header("content-type", "application/json")
            .body(body.to_string());
        builder = match (self.wire, &self.key) {
            (Wire::OpenAi | Wire::Responses, Some(key)) => {
                builder.header("authorization", format!("Bearer {}", key.0))
            }
            (Wire::Anthropic, Some(key)) => builder.header("x-api-key", &key.0),
            (_, None) => builder,
        };
        if self.wire == Wire::Anthropic {
            builder = builder.header("anthropic-version", anthropic::API_VERSION);
        }
        if stream {
            builder = builder.header("accept", "text/event-stream");
        }
        builder
    }

    async fn count(
        &self,
        instance: &str,
        request: &ModelRequest<'_>,
    ) -> Result<Option<u64>, ProviderError> {
        let Some(url) = &self.count_url else {
            return Ok(None);
        };
        let body = anthropic::count_body(request, &self.options);
        let response = http::send(instance, url, self.post(url, &body, false), self.idle).await?;
        let bytes = Body::new(response, self.idle).all(instance).await?;
        let counted: anthropic::Counted =
            openai::parse(instance, &String::from_utf8_lossy(&bytes))?;
        Ok(Some(counted.input_tokens))
    }

    async fn start(
        &self,
        instance: &str,
        request: &ModelRequest<'_>,
    ) -> Result<TurnStream, ProviderError> {
        let stream = self.options.stream;
        let body = match self.wire {
            Wire::OpenAi => openai::body(request, &self.options),
            Wire::Responses => responses::body(request, &self.options),
            Wire::Anthropic => anthropic::body(request, &self.options),
        };
        let builder = self.post(&self.url, &body, stream);
        let response = http::send(instance, &self.url, builder, self.idle).await?;
        let body = Body::new(response, self.idle);
        if !stream {
            let bytes = body.all(instance).await?;
            let text = String::from_utf8_lossy(&bytes);
            let events = match self.wire {
                Wire::OpenAi => openai::whole(instance, &text)?,
                Wire::Responses => responses::whole(instance, &text)?,
                Wire::Anthropic => anthropic::whole(instance, &text)?,
            };
            return Ok(TurnStream::ready(instance, events));
        }
        let parser = match self.wire {
            Wire::OpenAi => Parser::OpenAi(openai::StreamState::default()),
            Wire::Responses => Parser::Responses(responses::StreamState::default()),
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
    Responses(responses::StreamState),
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
            Self::Responses(state) => state.feed(instance, event, out),
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
            Self::Responses(state) => state.finish(instance, out),
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

    /// Waits for the first event and keeps it for [`TurnStream::next`].
    async fn first(&mut self) -> Result<(), ProviderError> {
        if !self.pending.is_empty() {
            return Ok(());
        }
        match self.next().await {
            Some(Ok(event)) => {
                self.pending.push_front(event);
                Ok(())
            }
            Some(Err(err)) => Err(err),
            None => Ok(()),
        }
    }

    /// Reads the whole turn, calling `on_text` with each text delta as it
    /// arrives.
    pub async fn collect(
        self,
        mut on_text: impl FnMut(&str),
    ) -> Result<AssistantTurn, ProviderError> {
        self.collect_with(|delta, _| on_text(delta)).await
    }

    /// Reads the whole turn, calling `on_delta` with each text delta
    /// (`false`) and each thinking delta (`true`) as it arrives.
    pub async fn collect_with(
        mut self,
        mut on_delta: impl FnMut(&str, bool),
    ) -> Result<AssistantTurn, ProviderError> {
        let mut text = String::new();
        let mut calls = Vec::new();
        let mut reasoning = Vec::new();
        let mut unknown = Vec::new();
        let mut usage = None;
        while let Some(event) = self.next().await {
            match event? {
                StreamEvent::Text(delta) => {
                    on_delta(&delta, false);
                    text.push_str(&delta);
                }
                StreamEvent::Thinking(delta) => on_delta(&delta, true),
                StreamEvent::Reasoning(piece) => reasoning.push(piece),
                StreamEvent::Unknown(item) => unknown.push(item),
                StreamEvent::ToolCall(call) => calls.push(call),
                StreamEvent::Usage(got) => usage = Some(got),
                StreamEvent::Stop(stop) => {
                    return Ok(AssistantTurn {
                        text,
                        calls,
                        reasoning,
                        unknown,
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
