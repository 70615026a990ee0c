//! The fields of each event type, one struct per type.
//!
//! Rules that keep the format a contract: field names are snake_case and
//! never renamed; every field that a person could leave out is
//! `#[serde(default)]`, so an older or newer writer that omits it still
//! loads; unknown fields are ignored (serde's default). The identifying
//! fields (a call id, a request id, an ending's reason) are required, because
//! an event without them cannot be folded into anything meaningful.

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::id::{EventId, SessionId};

/// A JSON value kept as its text: tool arguments are passed through to tools
/// and models untouched, and not building a tree for them keeps the fold fast.
#[derive(Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Json(pub Box<RawValue>);

impl Json {
    /// Wrap JSON text, checking that it is JSON.
    pub fn parse(text: impl Into<String>) -> Result<Json, serde_json::Error> {
        RawValue::from_string(text.into()).map(Json)
    }

    /// Any serialisable value as JSON.
    pub fn from_value<T: Serialize + ?Sized>(value: &T) -> Result<Json, serde_json::Error> {
        serde_json::value::to_raw_value(value).map(Json)
    }

    /// The JSON text.
    pub fn get(&self) -> &str {
        self.0.get()
    }
}

impl Default for Json {
    fn default() -> Self {
        Json(RawValue::NULL.to_owned())
    }
}

impl PartialEq for Json {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl fmt::Debug for Json {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.get())
    }
}

/// `session.open`: a process took ownership of the session and began (or
/// resumed) it. An adopted session gets a second `session.open`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SessionOpen {
    /// The session this log belongs to.
    pub session_id: SessionId,
    /// The project directory the session works for.
    #[serde(default)]
    pub project: PathBuf,
    /// The model the session talks to.
    #[serde(default)]
    pub model: String,
    /// The process that owns the log from here on.
    #[serde(default)]
    pub pid: u32,
    /// The version of chock that wrote this.
    #[serde(default)]
    pub chock_version: String,
    /// The session that spawned this one, when it is a subagent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<SessionId>,
}

/// `user.message`: the person said something.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UserMessage {
    /// What they said.
    #[serde(default)]
    pub text: String,
}

/// One tool call the model asked for.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call's id, as the model named it.
    pub id: String,
    /// The tool's name.
    #[serde(default)]
    pub name: String,
    /// The arguments, as JSON.
    #[serde(default)]
    pub arguments: Json,
}

/// Tokens one model call used.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens sent to the model.
    #[serde(default)]
    pub input_tokens: u64,
    /// Tokens the model produced.
    #[serde(default)]
    pub output_tokens: u64,
    /// Of `input_tokens`, those read from the provider's prompt cache.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_read_tokens: u64,
    /// Of `input_tokens`, those written to the provider's prompt cache.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_write_tokens: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Usage {
    /// Both counts summed.
    pub fn total(self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }

    /// Add another call's usage to this one.
    pub fn add(&mut self, other: Usage) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.cache_read_tokens = self
            .cache_read_tokens
            .saturating_add(other.cache_read_tokens);
        self.cache_write_tokens = self
            .cache_write_tokens
            .saturating_add(other.cache_write_tokens);
    }
}

/// A piece of a model's reasoning, kept so it can be shown (folded) and
/// sent back to the API that made it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reasoning {
    /// `thinking` or `redacted_thinking` (Anthropic), `reasoning` (the
    /// OpenAI Responses API); a kind a reader does not know is kept and
    /// never sent.
    pub kind: String,
    /// What a person may read: the thinking, or its summary.
    #[serde(default)]
    pub text: String,
    /// What the API needs back untouched: a signature, redacted data,
    /// encrypted content.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub opaque: String,
    /// The provider's id for it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub id: String,
}

/// `assistant.message`: one model call's answer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AssistantMessage {
    /// The text the model wrote.
    #[serde(default)]
    pub text: String,
    /// The tools it asked to run.
    #[serde(default)]
    pub tool_calls: Vec<ToolCall>,
    /// What the call cost.
    #[serde(default)]
    pub usage: Usage,
    /// The model that answered, when it differs from the session's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The reasoning before the answer, in the order it came.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasoning: Vec<Reasoning>,
    /// Output items of types the provider module did not know, kept as
    /// they came and never sent back to the model.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_items: Vec<Json>,
}

/// `tool.call`: a tool is about to run (after the policy allowed it).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolCallEvent {
    /// The call id from the assistant message.
    pub call_id: String,
    /// The tool's name.
    #[serde(default)]
    pub tool: String,
    /// Its arguments.
    #[serde(default)]
    pub arguments: Json,
    /// The subagent session the call started (`spawn_agent`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionId>,
}

/// `decision`: the policy's answer for one action.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// The action name, e.g. `exec.git`.
    #[serde(default)]
    pub action: String,
    /// `allow`, `deny`, `ask`, `agent_review` or `agent_then_human`.
    #[serde(default)]
    pub decision: String,
    /// The layer whose rule decided (org, operator, project, default).
    #[serde(default)]
    pub layer: String,
    /// The rule that decided, as written.
    #[serde(default)]
    pub rule: String,
    /// The tool call this decision is for, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
}

/// `approval.request`: a person is asked before an action runs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRequest {
    /// The id an answer refers to.
    pub request_id: String,
    /// The action that needs approval.
    #[serde(default)]
    pub action: String,
    /// The question as shown to the person.
    #[serde(default)]
    pub question: String,
    /// What kind of answer it wants: a yes or no (the default, left out
    /// of the line), or a line of text (`ask_user`).
    #[serde(default, skip_serializing_if = "RequestKind::is_approval")]
    pub kind: RequestKind,
}

/// What an `approval.request` wants back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestKind {
    /// A yes or a no to an action.
    #[default]
    Approval,
    /// A line of text: the model asked the person a question.
    Question,
    /// A kind this version does not know (a newer writer's).
    #[serde(other)]
    Unknown,
}

impl RequestKind {
    /// Whether this is the plain yes-or-no kind (left out of the line).
    pub fn is_approval(&self) -> bool {
        *self == RequestKind::Approval
    }

    /// The kind as the log spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            RequestKind::Approval => "approval",
            RequestKind::Question => "question",
            RequestKind::Unknown => "unknown",
        }
    }
}

/// A person's answer to an approval request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Answer {
    /// Go ahead.
    Yes,
    /// Do not.
    No,
}

/// `approval.answer`: the answer to an approval request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApprovalAnswer {
    /// The request this answers.
    pub request_id: String,
    /// Yes or no.
    pub answer: Answer,
    /// Who answered (e.g. `terminal`, `approve.sock`).
    #[serde(default)]
    pub by: String,
    /// The person's text, for a request of kind `question` (the answer is
    /// then `yes`: an answer was given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// `review`: a reviewer model's yes or no to an action decided
/// `agent_review` or `agent_then_human`, with its reason.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Review {
    /// The action reviewed.
    #[serde(default)]
    pub action: String,
    /// The tool call it is for, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// The reviewer's model, `instance/model`.
    #[serde(default)]
    pub reviewer: String,
    /// Whether the reviewer said yes.
    #[serde(default)]
    pub approved: bool,
    /// The reviewer's reason, as it gave it.
    #[serde(default)]
    pub reason: String,
    /// Tokens the review call used.
    #[serde(default)]
    pub usage: Usage,
}

/// One rule of a promise, as the log keeps it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PromiseRule {
    /// The action pattern (`call.write_file`, `exec.path.*`).
    #[serde(default)]
    pub action: String,
    /// `deny`, `ask`, ... as the policy spells it.
    #[serde(default)]
    pub decision: String,
}

/// `promise`: the session narrowed its own policy with `restrict_self`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Promise {
    /// The promise's number in this session, for `promise.release`.
    #[serde(default)]
    pub promise_id: u64,
    /// Its rules.
    #[serde(default)]
    pub rules: Vec<PromiseRule>,
    /// Why the model said it made it.
    #[serde(default)]
    pub reason: String,
}

/// `grant`: a person said yes to the agent's `request_action`, so that
/// exact action is allowed for the rest of the session where the policy
/// would have asked.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Grant {
    /// The action, exactly as granted.
    #[serde(default)]
    pub action: String,
    /// The approval request the yes answered.
    #[serde(default)]
    pub request_id: String,
}

/// `promise.release`: a promise was left (`policy.widen` permitted it).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PromiseRelease {
    /// The promise left.
    #[serde(default)]
    pub promise_id: u64,
}

/// `tool.result`: what a tool call produced.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The call this is the result of.
    pub call_id: String,
    /// Whether the tool succeeded.
    #[serde(default)]
    pub ok: bool,
    /// What it printed or returned, as the model will see it.
    #[serde(default)]
    pub output: String,
    /// Whether `output` was cut short.
    #[serde(default)]
    pub truncated: bool,
    /// What a write changed (write_file, edit_file), as a unified diff
    /// headed `--- a/<path>` / `+++ b/<path>` and cut at 64 KiB with a
    /// last line saying how many lines were left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
}

/// Where a plan item stands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanStatus {
    /// Not started.
    #[default]
    Pending,
    /// Being worked on.
    InProgress,
    /// Finished.
    Done,
    /// A status this version does not know (a newer writer's).
    #[serde(other)]
    Unknown,
}

impl PlanStatus {
    /// The status as the log spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            PlanStatus::Pending => "pending",
            PlanStatus::InProgress => "in_progress",
            PlanStatus::Done => "done",
            PlanStatus::Unknown => "unknown",
        }
    }
}

/// One item of the plan.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PlanItem {
    /// What is to be done.
    #[serde(default)]
    pub text: String,
    /// Where it stands.
    #[serde(default)]
    pub status: PlanStatus,
}

/// `plan.update`: the whole plan as it now stands (not a diff).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PlanUpdate {
    /// The items, in order.
    #[serde(default)]
    pub items: Vec<PlanItem>,
}

/// `title.set`: the session's title.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TitleSet {
    /// The title.
    #[serde(default)]
    pub title: String,
}

/// `compaction`: the conversation up to an event, replaced by a summary.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Compaction {
    /// The summary a model is given in place of those messages.
    #[serde(default)]
    pub summary: String,
    /// The last event the summary covers.
    #[serde(default)]
    pub up_to: EventId,
    /// Tokens the summarising call used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// The conversation's size in tokens that started the compaction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    /// How that size was had: `count_tokens` (the provider counted the
    /// request), `usage` (the provider's usage of the last call plus an
    /// estimate of what came after it) or `estimate` (a quarter of the
    /// characters, when neither was to be had).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counted_by: Option<String>,
}

/// `workspace.open`: the directory the session works in and where it started.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkspaceOpen {
    /// The workspace directory.
    #[serde(default)]
    pub dir: PathBuf,
    /// The commit the checkout started at.
    #[serde(default)]
    pub commit: String,
    /// The branch of the checkout, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The person's repository's common git directory, as the host found
    /// it when it made the checkout: every git of the host for this
    /// checkout is pointed here, never where the checkout's `.git` says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub common_dir: Option<PathBuf>,
    /// The paths the project's `.workspace` block binds beside the
    /// checkout, as this owner's start decided them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub binds: Vec<BoundPath>,
}

/// One bind of a `workspace.open`: a path the worktree does not carry.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BoundPath {
    /// The name as the block spells it (`workspace.bind.<name>`).
    #[serde(default)]
    pub name: String,
    /// Where it appears inside the sandbox (`/workspace/node_modules`).
    #[serde(default)]
    pub at: PathBuf,
    /// The host path the block names, resolved where it exists.
    #[serde(default)]
    pub path: PathBuf,
    /// The mode the block asks for: `read_only`, `temp_copy`, `write`,
    /// `copy`.
    #[serde(default)]
    pub mode: String,
    /// How it is made: `read_only`, `read_write`, `copy` (a private copy),
    /// or `not_made`.
    #[serde(default)]
    pub made: String,
}

/// `workspace.apply`: the workspace's work was brought back to the project.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkspaceApply {
    /// The commit that was applied, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Where it went (a branch name, or `worktree` for uncommitted files).
    #[serde(default)]
    pub target: String,
}

/// `background.start`: a background command or subagent began.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BackgroundStart {
    /// The job's id within the session.
    pub job_id: String,
    /// `command` or `subagent`.
    #[serde(default)]
    pub kind: String,
    /// The command line or the subagent's task.
    #[serde(default)]
    pub command: String,
}

/// `background.end`: a background job finished.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BackgroundEnd {
    /// The job's id.
    pub job_id: String,
    /// How it ended: `done`, `failed` or `killed`.
    #[serde(default)]
    pub status: String,
    /// The exit code of a command, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
}

/// `subagent.end`: a subagent this session started has ended. For a
/// background one, `text` is what the parent's model is handed at its next
/// turn boundary (the fold puts it in the conversation); a foreground one's
/// answer is its call's `tool.result`, and `text` repeats it for readers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SubagentEnd {
    /// The subagent's session.
    pub session: SessionId,
    /// The `spawn_agent` call that started it.
    #[serde(default)]
    pub call_id: String,
    /// Whether it ran in the background.
    #[serde(default)]
    pub background: bool,
    /// How its session ended.
    pub reason: EndReason,
    /// Its tokens, and its own subagents'.
    #[serde(default)]
    pub tokens: u64,
    /// What the parent's model is told.
    #[serde(default)]
    pub text: String,
}

/// `handover`: the owner agreed to let another process take the log.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Handover {
    /// Who takes over (e.g. `daemon`).
    #[serde(default)]
    pub to: String,
}

/// `notice`: something a person should know about the session that is not
/// a step of the conversation (e.g. the sandbox running with a layer
/// missing). Written at most once per subject.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Notice {
    /// What the notice is about (`sandbox`).
    #[serde(default)]
    pub subject: String,
    /// A sentence for a person.
    #[serde(default)]
    pub text: String,
}

/// `turn.end`: the durable boundary after a model call and its tool calls.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TurnEnd {}

/// Why a session ended. Read and written as its word; a word this version
/// does not know (a newer writer's) is kept as it was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EndReason {
    /// The agent finished its task.
    Done,
    /// An error stopped it.
    Error,
    /// A person interrupted it.
    Interrupted,
    /// It was handed to another process, which carries on in the same log.
    Handover,
    /// A stop (`chock stop`) ended it.
    Stopped,
    /// It crashed; recorded by whoever found it so.
    Crashed,
    /// A reason this version does not know (a newer writer's), as written.
    Unknown(String),
}

impl EndReason {
    /// The reason as the log spells it.
    pub fn as_str(&self) -> &str {
        match self {
            EndReason::Done => "done",
            EndReason::Error => "error",
            EndReason::Interrupted => "interrupted",
            EndReason::Handover => "handover",
            EndReason::Stopped => "stopped",
            EndReason::Crashed => "crashed",
            EndReason::Unknown(word) => word,
        }
    }

    /// The reason a word names; any other word is [`EndReason::Unknown`].
    pub fn from_word(word: &str) -> EndReason {
        match word {
            "done" => EndReason::Done,
            "error" => EndReason::Error,
            "interrupted" => EndReason::Interrupted,
            "handover" => EndReason::Handover,
            "stopped" => EndReason::Stopped,
            "crashed" => EndReason::Crashed,
            other => EndReason::Unknown(other.to_owned()),
        }
    }

    /// The one rule for "this session is over": every ending but a
    /// handover, after which the next owner carries on in the same log.
    pub fn is_over(&self) -> bool {
        *self != EndReason::Handover
    }
}

impl Serialize for EndReason {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for EndReason {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let word = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        Ok(EndReason::from_word(&word))
    }
}

/// `session.end`: the owner stopped writing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SessionEnd {
    /// Why.
    pub reason: EndReason,
    /// A sentence for a person.
    #[serde(default)]
    pub detail: String,
}
