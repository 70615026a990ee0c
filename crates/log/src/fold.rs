//! The fold: a log's events in, a [`SessionState`] out.
//!
//! Every consumer that needs to know where a session stands (the runner
//! before it appends, `chock sessions`, `chock usage`, `chock plan`,
//! compaction, the daemon's list rows) calls this one function, so they all
//! agree. [`SessionState::apply`] takes one event at a time, so a follower
//! can keep a state current; [`fold_log`] reads a whole log and is the hot
//! path the benchmark measures.
//!
//! Rules worth knowing: any event after a `session.end` means a new owner
//! carries the session on (after a handover or a crash), so the status goes
//! back to running; a `session.open` clears approvals and background jobs
//! still open, because they lived in the process that is gone. A
//! `compaction` replaces the conversation up to its `up_to` with its summary
//! and keeps what came after.

use std::fs::File;
use std::path::{Path, PathBuf};

use crate::blocks::{self, Split};
use crate::event::{
    EndReason, Event, EventBody, PlanItem, Reading, Reasoning, RequestKind, ToolCall, Usage,
};
use crate::id::{EventId, SessionId};
use crate::lines;
use crate::reader::{self, ReadError, ReadProblem};
use crate::time::Timestamp;

/// Where a session stands.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Status {
    /// Its owner is working (or waiting for the person's next message).
    #[default]
    Running,
    /// It waits for a person to answer an approval request.
    WaitingForApproval,
    /// It waits to retry a model call the provider refused for now (a
    /// `notice` with subject `provider`, whose text this is).
    WaitingForProvider(String),
    /// Its owner wrote `session.end`.
    Ended {
        /// Why.
        reason: EndReason,
        /// The ending's sentence for a person.
        detail: String,
    },
}

impl Status {
    /// `running`, `waiting`, `retrying` or `ended`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::WaitingForApproval => "waiting",
            Status::WaitingForProvider(_) => "retrying",
            Status::Ended { .. } => "ended",
        }
    }
}

/// One model call and what it cost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelCall {
    /// The `assistant.message` that recorded it.
    pub event_id: EventId,
    /// When.
    pub at: Timestamp,
    /// The model that answered.
    pub model: String,
    /// Its tokens.
    pub usage: Usage,
}

/// An approval request nobody has answered yet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingApproval {
    /// The request id an answer must name.
    pub request_id: String,
    /// The action.
    pub action: String,
    /// The question.
    pub question: String,
    /// Whether it wants a yes or no, or a line of text.
    pub kind: RequestKind,
    /// The `approval.request` event.
    pub event_id: EventId,
}

/// A background job that started and has not ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackgroundJob {
    /// Its id.
    pub job_id: String,
    /// `command` or `subagent`.
    pub kind: String,
    /// What it runs.
    pub command: String,
    /// The `background.start` event.
    pub event_id: EventId,
}

/// The session's workspace.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Workspace {
    /// The directory.
    pub dir: PathBuf,
    /// The commit it started at.
    pub commit: String,
    /// Its branch, when it has one.
    pub branch: Option<String>,
    /// The repository's common git directory, when the log recorded it.
    pub common_dir: Option<PathBuf>,
    /// The `workspace.open` event (a handover test compares it to endings).
    pub event_id: EventId,
    /// Whether a `workspace.apply` came after it.
    pub applied: bool,
}

/// One message of the conversation a model is given.
#[derive(Clone, Debug, PartialEq)]
pub enum Message {
    /// A compaction's summary of everything up to `up_to`.
    Summary {
        /// The `compaction` event.
        event_id: EventId,
        /// The summary.
        text: String,
    },
    /// The person.
    User {
        /// Its event.
        event_id: EventId,
        /// The text.
        text: String,
    },
    /// The model.
    Assistant {
        /// Its event.
        event_id: EventId,
        /// The text.
        text: String,
        /// Tools it asked for.
        tool_calls: Vec<ToolCall>,
        /// Its reasoning before the answer.
        reasoning: Vec<Reasoning>,
    },
    /// A tool's answer to a call.
    ToolResult {
        /// Its event.
        event_id: EventId,
        /// The call.
        call_id: String,
        /// Whether it succeeded.
        ok: bool,
        /// Its output.
        output: String,
    },
}

impl Message {
    /// The event the message came from.
    pub fn event_id(&self) -> EventId {
        match self {
            Message::Summary { event_id, .. }
            | Message::User { event_id, .. }
            | Message::Assistant { event_id, .. }
            | Message::ToolResult { event_id, .. } => *event_id,
        }
    }
}

/// Everything known about a session from its log.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SessionState {
    /// From the first `session.open`.
    pub session_id: Option<SessionId>,
    /// The session that spawned this one (a subagent's `session.open`).
    pub parent: Option<SessionId>,
    /// The project directory.
    pub project: Option<PathBuf>,
    /// The session's model (from the latest `session.open`).
    pub model: Option<String>,
    /// The pid of the latest owner.
    pub owner_pid: Option<u32>,
    /// The chock version of the latest owner.
    pub chock_version: Option<String>,
    /// When the first event was written.
    pub started_at: Option<Timestamp>,
    /// When the newest event was written.
    pub updated_at: Option<Timestamp>,
    /// Where it stands.
    pub status: Status,
    /// Its title.
    pub title: Option<String>,
    /// The start of the person's first message: what an untitled session
    /// is listed by ([`preview`]).
    pub preview: Option<String>,
    /// The latest plan.
    pub plan: Vec<PlanItem>,
    /// Tokens over all model calls.
    pub usage: Usage,
    /// Every model call, in order.
    pub model_calls: Vec<ModelCall>,
    /// Approval requests still open, in the order asked.
    pub pending_approvals: Vec<PendingApproval>,
    /// Background jobs still running, in the order started.
    pub background: Vec<BackgroundJob>,
    /// The latest workspace.
    pub workspace: Option<Workspace>,
    /// The conversation, from the latest compaction on.
    pub conversation: Vec<Message>,
    /// The newest event's id.
    pub last_event_id: EventId,
    /// Events folded.
    pub events: u64,
    /// Completed turns (`turn.end` events).
    pub turns: u64,
}

impl SessionState {
    /// Fold events in log order.
    pub fn fold<'a>(events: impl IntoIterator<Item = &'a Event>) -> SessionState {
        let mut state = SessionState::default();
        for event in events {
            state.apply(event);
        }
        state
    }

    /// Fold one more event.
    pub fn apply(&mut self, event: &Event) {
        self.apply_owned(event.clone());
    }

    /// Fold one more event, taking its text instead of copying it (the
    /// whole-log fold's path: a tool's output is moved, not duplicated).
    pub fn apply_owned(&mut self, event: Event) {
        self.events += 1;
        self.last_event_id = event.id;
        self.started_at.get_or_insert(event.at);
        self.updated_at = Some(event.at);
        if matches!(self.status, Status::Ended { .. }) {
            self.status = Status::Running;
        }
        match event.body {
            EventBody::SessionOpen(open) => {
                self.session_id
                    .get_or_insert_with(|| open.session_id.clone());
                if let Some(parent) = open.parent {
                    self.parent.get_or_insert(parent);
                }
                self.project = Some(open.project.clone());
                self.model = Some(open.model.clone());
                self.owner_pid = Some(open.pid);
                self.chock_version = Some(open.chock_version.clone());
                self.pending_approvals.clear();
                self.background.clear();
            }
            EventBody::UserMessage(m) => {
                if self.preview.is_none() && !m.text.trim().is_empty() {
                    self.preview = Some(preview(&m.text));
                }
                self.conversation.push(Message::User {
                    event_id: event.id,
                    text: m.text,
                });
            }
            EventBody::AssistantMessage(m) => {
                self.usage.add(m.usage);
                self.model_calls.push(ModelCall {
                    event_id: event.id,
                    at: event.at,
                    model: match m.model {
                        Some(model) => model,
                        None => self.model.clone().unwrap_or_default(),
                    },
                    usage: m.usage,
                });
                self.conversation.push(Message::Assistant {
                    event_id: event.id,
                    text: m.text,
                    tool_calls: m.tool_calls,
                    reasoning: m.reasoning,
                });
            }
            EventBody::ToolResult(r) => self.conversation.push(Message::ToolResult {
                event_id: event.id,
                call_id: r.call_id,
                ok: r.ok,
                output: r.output,
            }),
            EventBody::ApprovalRequest(r) => self.pending_approvals.push(PendingApproval {
                request_id: r.request_id,
                action: r.action,
                question: r.question,
                kind: r.kind,
                event_id: event.id,
            }),
            EventBody::Review(r) => self.usage.add(r.usage),
            EventBody::ApprovalAnswer(a) => {
                self.pending_approvals
                    .retain(|p| p.request_id != a.request_id);
            }
            EventBody::PlanUpdate(p) => self.plan = p.items,
            EventBody::TitleSet(t) => self.title = Some(t.title),
            EventBody::Compaction(c) => {
                if let Some(usage) = c.usage {
                    self.usage.add(usage);
                }
                self.conversation
                    .retain(|m| m.event_id() > c.up_to && !matches!(m, Message::Summary { .. }));
                self.conversation.insert(
                    0,
                    Message::Summary {
                        event_id: event.id,
                        text: c.summary,
                    },
                );
            }
            EventBody::WorkspaceOpen(w) => {
                self.workspace = Some(Workspace {
                    dir: w.dir,
                    commit: w.commit,
                    branch: w.branch,
                    common_dir: w.common_dir,
                    event_id: event.id,
                    applied: false,
                });
            }
            EventBody::WorkspaceApply(_) => {
                if let Some(w) = &mut self.workspace {
                    w.applied = true;
                }
            }
            EventBody::BackgroundStart(b) => self.background.push(BackgroundJob {
                job_id: b.job_id,
                kind: b.kind,
                command: b.command,
                event_id: event.id,
            }),
            EventBody::BackgroundEnd(b) => self.background.retain(|j| j.job_id != b.job_id),
            // A background subagent's answer reaches the parent's model as
            // a message at its next turn boundary; a foreground one's is its
            // call's result already.
            EventBody::SubagentEnd(end) if end.background => {
                self.conversation.push(Message::User {
                    event_id: event.id,
                    text: end.text,
                });
            }
            EventBody::TurnEnd(_) => self.turns += 1,
            EventBody::SessionEnd(end) => {
                self.status = Status::Ended {
                    reason: end.reason,
                    detail: end.detail,
                };
                return;
            }
            EventBody::Notice(notice) if notice.subject == PROVIDER_NOTICE => {
                self.status = Status::WaitingForProvider(notice.text);
                return;
            }
            EventBody::ToolCall(_)
            | EventBody::Decision(_)
            | EventBody::Handover(_)
            | EventBody::Notice(_)
            | EventBody::Promise(_)
            | EventBody::PromiseRelease(_)
            | EventBody::Grant(_)
            | EventBody::SubagentEnd(_)
            | EventBody::Unknown { .. } => {}
        }
        self.status = if self.pending_approvals.is_empty() {
            Status::Running
        } else {
            Status::WaitingForApproval
        };
    }
}

/// The subject of the `notice` a session writes before it waits to retry
/// a model call; until its next event the session is waiting for the
/// provider.
pub const PROVIDER_NOTICE: &str = "provider";

/// A whole log folded, with the lines that could not be.
#[derive(Clone, Debug, Default)]
pub struct FoldedLog {
    /// The state.
    pub state: SessionState,
    /// Lines left out, and why.
    pub problems: Vec<ReadProblem>,
}

/// Read the log at `path` from the start and fold it.
pub fn fold_log(path: &Path) -> Result<FoldedLog, ReadError> {
    let file = reader::open(path)?;
    let io_err = |source| ReadError::Io {
        path: path.to_owned(),
        error: source,
    };
    let len = file.metadata().map_err(io_err)?.len();
    fold_file(&file, len, Split::for_len(len)).map_err(io_err)
}

/// The fold a session's row needs, which keeps none of the conversation:
/// every message's text is dropped as it is parsed, so the memory it takes
/// does not grow with the log (a daemon folds rows for every watcher and
/// every `list`). Everything [`crate::SessionRow::from_state`] reads is
/// the same as [`fold_log`]'s; `conversation` is left empty.
pub fn fold_row(path: &Path) -> Result<FoldedLog, ReadError> {
    let file = reader::open(path)?;
    let io_err = |source| ReadError::Io {
        path: path.to_owned(),
        error: source,
    };
    let len = file.metadata().map_err(io_err)?.len();
    let (mut folded, _) =
        fold_file_with(&file, len, Split::for_len(len), parse_for_row, true, None)
            .map_err(io_err)?;
    folded.state.conversation.clear();
    Ok(folded)
}

/// The most characters of a message a preview keeps.
pub const PREVIEW_CHARS: usize = 120;

/// The start of `text` as one line: whitespace runs (newlines too) become
/// one space, and past [`PREVIEW_CHARS`] it is cut with `…`.
pub fn preview(text: &str) -> String {
    let mut out = String::new();
    let mut chars = 0;
    for word in text.split_whitespace() {
        if chars > 0 {
            out.push(' ');
            chars += 1;
        }
        for c in word.chars() {
            if chars == PREVIEW_CHARS {
                out.push('…');
                return out;
            }
            out.push(if c.is_control() { ' ' } else { c });
            chars += 1;
        }
    }
    out
}

/// [`parse_for_fold`], with the text of messages and results dropped too:
/// a result's output and a message's text are not even read.
fn parse_for_row(line: &[u8]) -> serde_json::Result<Event> {
    let mut event = parse_for_fold(line, &|type_name, _| without_conversation(type_name))?;
    match &mut event.body {
        // What the row keeps of a message is its preview's length.
        EventBody::UserMessage(m) => m.text = preview(&m.text),
        EventBody::Compaction(c) => c.summary = String::new(),
        _ => {}
    }
    Ok(event)
}

/// A line parsed for the fold. Of the events [`SessionState::apply_owned`]
/// ignores, only the envelope is read: the body of a `tool.call`,
/// `decision`, `handover`, `promise`, `promise.release` or `grant` is
/// scanned as JSON (a line that is not JSON is still a problem) but not
/// read into its fields, which saves the allocations and copies of its
/// strings; of the others, as much as `reading` asks for. The other
/// ignored bodies (a `notice` not about the provider, a type this version
/// does not know) are parsed whole and dropped here, on the parsing
/// thread: freeing memory on the thread that allocated it is cheap,
/// handing it to the folding thread to free is not. Either way the
/// placeholder is an empty `Unknown` body, which the fold ignores.
fn parse_for_fold(
    line: &[u8],
    reading: &(dyn Fn(&str, Option<EventId>) -> Reading + Sync),
) -> serde_json::Result<Event> {
    let mut event = Event::parse_reading(line, &|type_name, id| {
        if ignored_by_fold(type_name) {
            Reading::Envelope
        } else {
            reading(type_name, id)
        }
    })?;
    let dropped = match &event.body {
        EventBody::Notice(notice) => notice.subject != PROVIDER_NOTICE,
        EventBody::Unknown { type_name, .. } => !type_name.is_empty(),
        _ => false,
    };
    if dropped {
        event.body = EventBody::Unknown {
            type_name: String::new(),
            fields: serde_json::Map::new(),
        };
    }
    Ok(event)
}

/// What the fold reads of an event whose part of the conversation is
/// dropped: nothing of a result or a subagent's answer, a model message's
/// cost, and the rest whole.
fn without_conversation(type_name: &str) -> Reading {
    match type_name {
        "tool.result" | "subagent.end" => Reading::Envelope,
        _ => Reading::Cost,
    }
}

/// The event types whose bodies the fold never reads.
fn ignored_by_fold(type_name: &str) -> bool {
    matches!(
        type_name,
        "tool.call" | "decision" | "handover" | "promise" | "promise.release" | "grant"
    )
}

/// Parsing is most of the fold's cost and each line parses on its own, so
/// lines are parsed on every core ([`blocks`]) and applied here, in order.
///
/// Most of what is parsed is the conversation, and a `compaction` drops
/// the conversation up to its `up_to`: so the log's last compaction is
/// looked for first, from the end ([`Cut::last_in`]), and the results and
/// model messages it covers are read only for what the fold keeps of them
/// beyond the conversation (a model call's cost). A cut is only as good as
/// its compaction being folded: when that line turns out not to be (out of
/// order, or not an event), the log is folded again reading every body.
fn fold_file(file: &File, len: u64, split: Split) -> std::io::Result<FoldedLog> {
    if let Some(cut) = Cut::last_in(file, len)? {
        let reading = |type_name: &str, id: Option<EventId>| match id {
            Some(id) if cut.covers(id) => without_conversation(type_name),
            _ => Reading::Whole,
        };
        let parse = |line: &[u8]| parse_for_fold(line, &reading);
        let (folded, folded_cut) = fold_file_with(file, len, split, parse, false, Some(cut))?;
        if folded_cut {
            return Ok(folded);
        }
    }
    let parse = |line: &[u8]| parse_for_fold(line, &|_, _| Reading::Whole);
    Ok(fold_file_with(file, len, split, parse, false, None)?.0)
}

/// The last `compaction` of a log, which every body before it and at or
/// before its `up_to` can be read without its conversation for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Cut {
    compaction: EventId,
    up_to: EventId,
}

impl Cut {
    /// Whether the event `id`'s message, if it is one, is dropped by the
    /// compaction: it came before it and at or before its `up_to`.
    fn covers(&self, id: EventId) -> bool {
        id < self.compaction && id <= self.up_to
    }

    /// The last line of the log that is a `compaction` as Chock writes one
    /// (`{"id":…,"at":"…","type":"compaction"` at the line's start), read
    /// backward from the end a block at a time; `None` when there is none.
    fn last_in(file: &File, len: u64) -> std::io::Result<Option<Cut>> {
        use std::os::unix::fs::FileExt as _;
        const NEEDLE: &[u8] = br#","type":"compaction""#;
        const BLOCK: u64 = 1 << 20;
        // How far into its line the needle can start: `{"id":`, twenty
        // digits, `,"at":` and a quoted timestamp.
        const ENVELOPE: usize = 80;
        let finder = memchr::memmem::FinderRev::new(NEEDLE);
        let mut buf = vec![0; BLOCK as usize + ENVELOPE + NEEDLE.len()];
        let mut end = len;
        while end > 0 {
            let start = end.saturating_sub(BLOCK);
            // A block is read with the envelope before it, so the start of
            // a line whose needle is in the block is seen, and a needle
            // past its end, so one that starts in it is seen whole.
            let base = start.saturating_sub(ENVELOPE as u64);
            let upto = (end + NEEDLE.len() as u64).min(len);
            let text = &mut buf[..(upto - base) as usize];
            file.read_exact_at(text, base)?;
            let (own, mut search) = ((start - base) as usize, &text[..]);
            // Needles that start in this block, the last first.
            while let Some(at) = finder.rfind(search).filter(|&at| at >= own) {
                search = &search[..at + NEEDLE.len() - 1];
                let line_start = match memchr::memrchr(b'\n', &text[..at]) {
                    Some(nl) => nl + 1,
                    None if base == 0 => 0,
                    None => continue,
                };
                if at - line_start <= ENVELOPE
                    && let Some(cut) = Cut::read(file, base + line_start as u64, len)?
                {
                    return Ok(Some(cut));
                }
            }
            end = start;
        }
        Ok(None)
    }

    /// The compaction whose line starts at `offset`, when it is one.
    fn read(file: &File, offset: u64, len: u64) -> std::io::Result<Option<Cut>> {
        use std::os::unix::fs::FileExt as _;
        // A summary is a few KiB; a line past this is not worth reading
        // for a cut (the fold is then only slower, never wrong).
        const MOST: u64 = 1 << 20;
        let mut line = vec![0; (len - offset).min(MOST) as usize];
        file.read_exact_at(&mut line, offset)?;
        let Some(nl) = memchr::memchr(b'\n', &line) else {
            return Ok(None);
        };
        Ok(match Event::parse(&line[..nl]) {
            Ok(Event {
                id,
                body: EventBody::Compaction(c),
                ..
            }) => Some(Cut {
                compaction: id,
                up_to: c.up_to,
            }),
            _ => None,
        })
    }
}

/// The fold over lines parsed by `parse`; `rows_only` empties the
/// conversation after every event, so nothing of it accumulates. Says too
/// whether `cut`'s compaction was folded.
fn fold_file_with(
    file: &File,
    len: u64,
    split: Split,
    parse: impl Fn(&[u8]) -> serde_json::Result<Event> + Sync,
    rows_only: bool,
    cut: Option<Cut>,
) -> std::io::Result<(FoldedLog, bool)> {
    let mut folded = FoldedLog::default();
    let mut folded_cut = false;
    let mut pending = Vec::new();
    blocks::for_each_line(file, 0, len, split, parse, |offset, parsed| match parsed {
        Err(err) => pending.push((
            offset,
            ReadProblem::Invalid {
                line: 0,
                message: err.to_string(),
            },
        )),
        Ok(event) if event.id <= folded.state.last_event_id => {
            pending.push((
                offset,
                ReadProblem::OutOfOrder {
                    line: 0,
                    id: event.id,
                    previous: folded.state.last_event_id,
                },
            ));
        }
        Ok(event) => {
            folded_cut |= cut.is_some_and(|cut| cut.compaction == event.id)
                && matches!(event.body, EventBody::Compaction(_));
            folded.state.apply_owned(event);
            if rows_only {
                folded.state.conversation.clear();
            }
        }
    })?;
    let offsets: Vec<u64> = pending.iter().map(|p| p.0).collect();
    let numbers = lines::line_numbers(file, &offsets)?;
    for ((_, mut problem), number) in pending.into_iter().zip(numbers) {
        if let ReadProblem::Invalid { line, .. } | ReadProblem::OutOfOrder { line, .. } =
            &mut problem
        {
            *line = number;
        }
        folded.problems.push(problem);
    }
    Ok((folded, folded_cut))
}

#[cfg(test)]
mod tests;
