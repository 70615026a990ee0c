//! One turn of a session: model call, the tool calls it asks for, their
//! results back to the model, again, until the model stops asking for tools.
//! Recording is not done here: every step goes through [`TurnHooks`], which
//! the session implements by appending log events (and, as policy lands, by
//! deciding each call before it runs). Keeping the driver free of the log
//! lets the same code run a session, a subagent or a reviewer call, and
//! lets it be tested against the fake model alone.
//!
//! After each model call and its tool calls, [`TurnHooks::boundary`] may
//! end the turn for a handover (seeds 000: a turn is as long as a model call
//! plus its tool calls, so that is where a session answers a handover).
//!
//! A turn always ends with a [`TurnEnd`]; nothing here can spin for ever:
//! the number of model calls per turn (and per session, when config.zon
//! bounds it) is capped, and a model that repeats a failing call is stopped
//! by the repeat guard (`guard.rs`).
//!
//! A model call that fails before its first token is retried here, inside
//! the same model call: each wait goes to [`TurnHooks::provider_wait`]
//! before it is waited, the retried call is not a new step of the turn,
//! and no tool runs twice, because tools run only after a whole answer.

use crate::guard::{RepeatGuard, Verdict};
pub use crate::handover::Boundary;
use crate::provider::{
    AssistantTurn, Message, ModelRequest, Provider, ProviderError, Retry, RetryWait, StopReason,
    ToolCall, ToolSpec, TurnStream,
};
use chock_tools::{Call, Commands, SessionTools, ToolOutput, Unparsed, Workspace};

/// Model calls one turn may make unless configured otherwise.
pub const DEFAULT_MAX_MODEL_CALLS: usize = 50;

/// Bounds on one turn.
#[derive(Debug, Clone, Copy)]
pub struct TurnLimits {
    pub max_model_calls: usize,
    pub repeat_limit: usize,
    /// Model calls the whole session may make (`.max_session_model_calls`),
    /// and how many it made before this turn.
    pub max_session_calls: Option<usize>,
    pub session_calls_before: usize,
}

impl Default for TurnLimits {
    fn default() -> Self {
        Self {
            max_model_calls: DEFAULT_MAX_MODEL_CALLS,
            repeat_limit: crate::guard::DEFAULT_REPEAT_LIMIT,
            max_session_calls: None,
            session_calls_before: 0,
        }
    }
}

/// Whether a tool call may run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gate {
    Run,
    /// Run, given these secrets in its environment.
    RunGiven(crate::secrets::Given),
    /// Refused; the text is the result the model reads.
    Refuse(String),
    /// The hook carried the call out itself (the session tools, which
    /// need the session's policy and approvals); this is its result.
    Answered(ToolOutput),
    /// A stop (`chock stop`) refused it; the text is the result the model
    /// reads, and the turn ends after this call.
    Stopped(String),
}

/// How a turn ended.
#[derive(Debug)]
pub enum TurnEnd {
    /// The model answered without asking for a tool.
    Done,
    /// The model stopped at its output token limit.
    MaxTokens,
    /// The model kept repeating a failing call.
    Stuck(String),
    /// The turn used its model-call budget.
    Budget(usize),
    /// The session used its model-call budget (`.max_session_model_calls`).
    SessionBudget(usize),
    /// The provider failed; the error says how.
    Provider(ProviderError),
    /// At a boundary a client confirmed a handover: the session ends its
    /// run here and another process carries it on from the log.
    HandOver,
    /// A stop refused an action; the text is the refusal.
    Stopped(String),
    /// The session was interrupted while the turn ran (Ctrl-C, a signal);
    /// the turn was abandoned at its next wait.
    Interrupted(Interruption),
}

/// What interrupted a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interruption {
    /// The person, with Ctrl-C (or a test's own future that completes).
    Person,
    /// A signal a terminal or a service manager sent (`SIGTERM`, `SIGHUP`).
    Signal(&'static str),
}

impl From<()> for Interruption {
    fn from((): ()) -> Interruption {
        Interruption::Person
    }
}

/// Where a turn's steps go. Every method may fail (a log that cannot be
/// written); a failure ends the turn at once and is returned as is.
pub trait TurnHooks {
    type Error;

    /// Text as it streams in, for a terminal to show.
    fn text(&mut self, _delta: &str) {}

    /// Thinking as it streams in; a terminal shows it folded.
    fn thinking(&mut self, _delta: &str) {}

    /// Before each model call, with the conversation about to be sent and
    /// the tools offered: the session may compact it (replace its older
    /// part with a summary).
    fn before_model_call(
        &mut self,
        _conversation: &mut Vec<Message>,
        _tools: &[ToolSpec],
    ) -> impl Future<Output = Result<(), Self::Error>> {
        std::future::ready(Ok(()))
    }

    /// A model call failed before its first token and will be retried after
    /// `wait`: said before the wait begins.
    fn provider_wait(
        &mut self,
        _wait: &RetryWait,
    ) -> impl Future<Output = Result<(), Self::Error>> {
        std::future::ready(Ok(()))
    }

    /// A whole assistant message, with its usage.
    fn assistant(&mut self, turn: &AssistantTurn) -> impl Future<Output = Result<(), Self::Error>>;

    /// Decides one tool call before it runs: `parsed` is the call as the
    /// turn parsed it, once ([`Call`]), or why it could not be.
    fn before_tool(
        &mut self,
        _call: &ToolCall,
        _parsed: &Result<Call, Unparsed>,
    ) -> impl Future<Output = Result<Gate, Self::Error>> {
        std::future::ready(Ok(Gate::Run))
    }

    /// A tool call's result (also for refused and unknown calls).
    fn tool_result(
        &mut self,
        call: &ToolCall,
        output: &ToolOutput,
    ) -> impl Future<Output = Result<(), Self::Error>>;

    /// The refusal, once a stop refused an action of the session (a call, or
    /// a connection a command opened): the turn ends after the call.
    /// Takes out of a tool's output what neither the model nor the log may
    /// see (the values of secrets given): called on every output before it
    /// is recorded or handed back.
    fn redact(&self, _output: &mut ToolOutput) {}

    fn stopped(&self) -> Option<String> {
        None
    }

    /// A turn boundary: a model call and all its tool calls are recorded.
    /// The only place a session may stop without cutting either in two.
    /// `last` is the boundary after the model's final answer, after which
    /// the turn has nothing more to run.
    fn boundary(&mut self, _last: bool) -> impl Future<Output = Result<Boundary, Self::Error>> {
        std::future::ready(Ok(Boundary::Continue))
    }
}

/// Everything a turn needs besides the conversation.
#[derive(Debug)]
pub struct TurnContext<'a> {
    pub provider: &'a Provider,
    pub model: &'a str,
    pub system: &'a str,
    pub workspace: &'a Workspace,
    pub commands: &'a Commands,
    /// What fetch_url, web_search, read_image and the memory tools share.
    pub tools: &'a SessionTools<'a>,
    pub limits: TurnLimits,
}

/// Runs one turn over `conversation`, which must end with the person's
/// message; the assistant messages and tool results are appended to it.
pub async fn run_turn<H: TurnHooks>(
    cx: &TurnContext<'_>,
    conversation: &mut Vec<Message>,
    hooks: &mut H,
) -> Result<TurnEnd, H::Error> {
    let builtin = chock_tools::specs_for(cx.commands, cx.tools);
    // The MCP tools are read each time: a server that failed is gone.
    let offered = || {
        let mut specs = builtin.clone();
        specs.extend(cx.tools.external_specs());
        specs
    };
    let mut guard = RepeatGuard::new(cx.limits.repeat_limit);
    for made in 0..cx.limits.max_model_calls {
        if let Some(bound) = cx.limits.max_session_calls
            && cx.limits.session_calls_before + made >= bound
        {
            return Ok(TurnEnd::SessionBudget(bound));
        }
        // Before the call the hooks withdraw a server that failed since
        // the last one, so what is offered is read after them.
        hooks.before_model_call(conversation, &offered()).await?;
        let specs = offered();
        let request = ModelRequest {
            model: cx.model,
            system: cx.system,
            messages: conversation,
            tools: &specs,
        };
        let turn = match start_retrying(cx.provider, &request, hooks).await? {
            Ok(stream) => {
                stream
                    .collect_with(|delta, thinking| {
                        if thinking {
                            hooks.thinking(delta);
                        } else {
                            hooks.text(delta);
                        }
                    })
                    .await
            }
            Err(err) => Err(err),
        };
        let turn = match turn {
            Ok(turn) => turn,
            Err(err) => return Ok(TurnEnd::Provider(err)),
        };
        hooks.assistant(&turn).await?;
        conversation.extend(turn.reasoning.iter().cloned().map(Message::Reasoning));
        conversation.push(Message::Assistant {
            text: turn.text.clone(),
            calls: turn.calls.clone(),
        });
        if turn.calls.is_empty() {
            match hooks.boundary(true).await? {
                Boundary::HandOver => return Ok(TurnEnd::HandOver),
                Boundary::Resume => continue,
                Boundary::Continue => {}
            }
            return Ok(match turn.stop {
                StopReason::MaxTokens => TurnEnd::MaxTokens,
                _ => TurnEnd::Done,
            });
        }
        let mut ended = None;
        for call in &turn.calls {
            // Every call gets a result, even after the turn was stopped: the
            // APIs refuse a conversation with a call left unanswered.
            let output = if ended.is_some() {
                ToolOutput::error("not run: the turn was stopped before this call")
            } else {
                let (output, end) = one_call(cx, hooks, &mut guard, call).await?;
                ended = end.or_else(|| hooks.stopped().map(TurnEnd::Stopped));
                output
            };
            hooks.tool_result(call, &output).await?;
            push_result(conversation, call, output);
        }
        if let Some(end) = ended {
            return Ok(end);
        }
        if hooks.boundary(false).await? == Boundary::HandOver {
            return Ok(TurnEnd::HandOver);
        }
    }
    Ok(TurnEnd::Budget(cx.limits.max_model_calls))
}

/// Starts one model call, retrying a failure before its first token as
/// the provider's bounds allow; each wait is told to the hooks first.
async fn start_retrying<H: TurnHooks>(
    provider: &Provider,
    request: &ModelRequest<'_>,
    hooks: &mut H,
) -> Result<Result<TurnStream, ProviderError>, H::Error> {
    let mut retrier = provider.retrier();
    loop {
        match provider.start_first(request).await {
            Ok(stream) => return Ok(Ok(stream)),
            Err(err) => match retrier.after(err) {
                Retry::After(wait) => {
                    hooks.provider_wait(&wait).await?;
                    tokio::time::sleep(wait.delay).await;
                }
                Retry::GiveUp(err) => return Ok(Err(err)),
            },
        }
    }
}

/// Decides and runs one call; the output, and how the turn ends after it
/// when a stop refused it or the model keeps repeating a failing call.
async fn one_call<H: TurnHooks>(
    cx: &TurnContext<'_>,
    hooks: &mut H,
    guard: &mut RepeatGuard,
    call: &ToolCall,
) -> Result<(ToolOutput, Option<TurnEnd>), H::Error> {
    // The one place a call's name and arguments are read.
    let parsed = Call::parse_with(&call.name, &call.arguments, Some(cx.tools));
    let given = crate::secrets::Given::default();
    let mut output = match hooks.before_tool(call, &parsed).await? {
        gate @ (Gate::Run | Gate::RunGiven(_)) => {
            let given = match &gate {
                Gate::RunGiven(given) => given,
                _ => &given,
            };
            match parsed {
                Ok(parsed) => {
                    chock_tools::carry_out(parsed, cx.workspace, cx.commands, cx.tools, given.env())
                        .await
                }
                Err(unparsed) => ToolOutput::error(unparsed.error),
            }
        }
        Gate::Refuse(text) => ToolOutput::error(text),
        Gate::Answered(output) => output,
        Gate::Stopped(text) => {
            return Ok((
                ToolOutput::error(text.clone()),
                Some(TurnEnd::Stopped(text)),
            ));
        }
    };
    hooks.redact(&mut output);
    let stop = match guard.record(&call.name, &call.arguments, output.is_error) {
        Verdict::Continue => None,
        Verdict::Warn(note) => {
            output.text.push_str("\n\n");
            output.text.push_str(&note);
            None
        }
        Verdict::Stop(why) => Some(TurnEnd::Stuck(why)),
    };
    Ok((output, stop))
}

/// A call's result, as the model is handed it (cut to its bound), with an
/// image beside it when the tool gave one.
fn push_result(conversation: &mut Vec<Message>, call: &ToolCall, output: ToolOutput) {
    conversation.push(Message::ToolResult {
        call_id: call.id.clone(),
        name: call.name.clone(),
        content: output.for_model(),
        is_error: output.is_error,
    });
    if let Some(image) = output.image {
        conversation.push(Message::Image {
            call_id: call.id.clone(),
            media_type: image.media_type,
            base64: image.base64,
        });
    }
}
