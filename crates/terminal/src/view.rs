//! The session as the person watches it, drawn from the log's events the
//! moment they are recorded (the writer's tap) and from the model's text as
//! it streams. Each tool call is one line, the tool and its essential
//! argument, with the decision and the rule that decided when it was not a
//! shipped allow; a write's diff is shown before it runs (so an approval's
//! question has it above), and the outcome under the line once it ran. The
//! plan is shown each time it changes, and in an interactive session the
//! status line says whose turn it is: the model's, a command's, the
//! person's.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use chock_log::event::{
    AssistantMessage, Decision, PlanItem, PlanStatus, ToolCallEvent, ToolResult, Usage,
};
use chock_log::{Event, EventBody};
use serde_json::Value;

use crate::clean::visible;
use crate::describe::{DiffLine, diff, essential, outcome};
use crate::markdown::Markdown;
use crate::screen::{Screen, width};
use crate::style::{Looks, Tone};

/// Changed lines of a diff shown before `/show` is needed.
const DIFF_LINES: usize = 12;

/// The largest file read to show a write's diff.
const DIFF_FILE_BYTES: u64 = 1 << 20;

/// What the session waits for, as the status line says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Waiting {
    Model,
    Command(String),
    Tool(String),
    Person,
    Prompt,
}

impl Waiting {
    fn describe(&self) -> String {
        match self {
            Waiting::Model => "waiting for the model".to_owned(),
            Waiting::Command(line) => format!("running {line}"),
            Waiting::Tool(tool) => format!("running {tool}"),
            Waiting::Person => "waiting for your answer".to_owned(),
            Waiting::Prompt => "waiting for your message".to_owned(),
        }
    }
}

/// A call the model asked for, as shown.
#[derive(Debug, Clone)]
pub struct Shown {
    pub call_id: String,
    pub tool: String,
    pub arguments: Value,
    /// Whether its line is on the screen yet.
    lined: bool,
}

/// The view as the interface, the prompt and the log's tap share it. The
/// log writer must stay `Send` (it is handed between threads elsewhere),
/// so its tap is, and the view sits behind a mutex that only the
/// session's one thread ever takes.
#[derive(Debug, Clone)]
pub struct Shared(std::sync::Arc<std::sync::Mutex<View>>);

impl Shared {
    #[must_use]
    pub fn new(view: View) -> Shared {
        Shared(std::sync::Arc::new(std::sync::Mutex::new(view)))
    }

    /// The view, for as long as the guard lives (never across an await).
    pub fn borrow_mut(&self) -> std::sync::MutexGuard<'_, View> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The same, for reading.
    pub fn borrow(&self) -> std::sync::MutexGuard<'_, View> {
        self.borrow_mut()
    }
}

/// Everything the screen shows of one session.
#[derive(Debug)]
pub struct View {
    pub(crate) screen: Screen,
    pub(crate) looks: Looks,
    /// Whether the model's text is rendered as markdown (an interactive
    /// session on a terminal); otherwise it is written as it came.
    render: bool,
    /// Whether answers can be typed here (stdin is a terminal).
    stdin_tty: bool,
    pub(crate) id: String,
    pub(crate) model: String,
    root: PathBuf,
    pub(crate) log: PathBuf,
    pub(crate) usage: Usage,
    pub(crate) model_calls: usize,
    pub(crate) plan: Vec<PlanItem>,
    title: Option<String>,
    pub(crate) waiting: Waiting,
    markdown: Markdown,
    /// The model's current line, not yet ended.
    partial: String,
    /// The calls of this session, in the order the model asked for them.
    pub(crate) calls: Vec<Shown>,
    by_id: HashMap<String, usize>,
    /// The session has ended: the status line is not drawn again.
    ended: bool,
}

impl View {
    /// A view writing to `screen`; `render`: markdown and the status line.
    pub fn new(screen: Screen, looks: Looks, render: bool, stdin_tty: bool) -> View {
        View {
            screen,
            looks,
            render,
            stdin_tty,
            id: String::new(),
            model: String::new(),
            root: PathBuf::new(),
            log: PathBuf::new(),
            usage: Usage::default(),
            model_calls: 0,
            plan: Vec::new(),
            title: None,
            waiting: Waiting::Model,
            markdown: Markdown::default(),
            partial: String::new(),
            calls: Vec::new(),
            by_id: HashMap::new(),
            ended: false,
        }
    }

    /// The session has begun: its id is said at once, since `chock
    /// approve` and `chock detach` from another terminal need it.
    pub fn begin(&mut self, id: &str, model: &str, root: &Path, log: &Path) {
        id.clone_into(&mut self.id);
        model.clone_into(&mut self.model);
        root.clone_into(&mut self.root);
        log.clone_into(&mut self.log);
        let head = format!("session {id} · {model}");
        if self.render {
            let mut line = self.looks.painted(Tone::Bold, "chock");
            line.push_str(" · ");
            line.push_str(&head);
            self.screen.line(&line);
            self.screen.line(&self.looks.painted(
                Tone::Dim,
                &format!(
                    "workspace {} · /help lists the commands · Ctrl-C interrupts a turn · Ctrl-D leaves",
                    root.display()
                ),
            ));
        } else {
            self.screen.line(&format!("chock: {head}"));
        }
    }

    /// A piece of the model's text as it streams.
    pub fn text(&mut self, delta: &str) {
        let delta = visible(delta);
        if !self.render {
            self.screen.text(&delta, !delta.ends_with('\n'));
            return;
        }
        let mut rest: &str = &delta;
        while let Some(end) = rest.find('\n') {
            let (piece, after) = rest.split_at(end);
            self.screen.text(piece, true);
            self.partial.push_str(piece);
            let line = std::mem::take(&mut self.partial);
            let rendered = self.markdown.line(&line, self.looks);
            let fits = unicode_width::UnicodeWidthStr::width(line.as_str()) < width();
            if self.looks.colour && fits {
                let clear = crate::screen::clear_line();
                self.screen.text(&format!("{clear}{rendered}\n"), false);
            } else {
                self.screen.text("\n", false);
            }
            rest = &after[1..];
        }
        if !rest.is_empty() {
            self.screen.text(rest, true);
            self.partial.push_str(rest);
        }
    }

    /// One event, as the log recorded it.
    pub fn see(&mut self, event: &Event) {
        match &event.body {
            EventBody::UserMessage(_) => self.waiting = Waiting::Model,
            EventBody::AssistantMessage(message) => self.answered(message),
            EventBody::Decision(decision) => self.decided(decision),
            EventBody::ApprovalRequest(request) => {
                self.waiting = Waiting::Person;
                self.screen.clear_status();
                if !self.stdin_tty {
                    self.screen.line(&format!(
                        "chock: session {} is waiting for an answer: {}",
                        self.id,
                        visible(&request.question)
                    ));
                    self.screen.line(&format!(
                        "chock: nothing can be typed here (stdin is not a terminal): answer from another terminal with `chock approve {}`",
                        self.id
                    ));
                }
                return;
            }
            EventBody::ApprovalAnswer(answer) => {
                let said = match (&answer.text, answer.answer) {
                    (Some(text), _) => format!("answered: {}", visible(text)),
                    (None, chock_log::event::Answer::Yes) => "allowed".to_owned(),
                    (None, chock_log::event::Answer::No) => "refused".to_owned(),
                };
                self.step(Tone::Dim, &format!("  ↳ {said} (by {})", answer.by));
                self.waiting = Waiting::Tool(String::new());
            }
            EventBody::ToolCall(call) => self.running(call),
            EventBody::ToolResult(result) => self.result(result),
            EventBody::PlanUpdate(plan) => {
                self.plan.clone_from(&plan.items);
                self.show_plan();
            }
            EventBody::TitleSet(title) => self.title = Some(visible(&title.title).into_owned()),
            // What the start read is said by the start itself.
            EventBody::Notice(notice)
                if !matches!(notice.subject.as_str(), "context" | "start") =>
            {
                self.step(Tone::Asks, &format!("  ! {}", visible(&notice.text)));
            }
            EventBody::Compaction(_) => {
                self.step(
                    Tone::Dim,
                    "  (the conversation so far was summarised to fit the model's context)",
                );
            }
            EventBody::TurnEnd(_) => {
                self.screen.end_text();
                self.waiting = Waiting::Prompt;
            }
            EventBody::SessionEnd(_) | EventBody::Handover(_) => {
                self.screen.end_text();
                self.screen.clear_status();
                self.ended = true;
                return;
            }
            _ => {}
        }
        self.draw_status();
    }

    fn answered(&mut self, message: &AssistantMessage) {
        self.flush_text();
        self.usage.add(message.usage);
        self.model_calls += 1;
        for call in &message.tool_calls {
            let arguments = serde_json::from_str(call.arguments.get()).unwrap_or(Value::Null);
            self.by_id.insert(call.id.clone(), self.calls.len());
            self.calls.push(Shown {
                call_id: call.id.clone(),
                tool: call.name.clone(),
                arguments,
                lined: false,
            });
        }
        self.waiting = if message.tool_calls.is_empty() {
            Waiting::Prompt
        } else {
            Waiting::Tool(String::new())
        };
    }

    /// The model's last line of this answer, rendered, now that it is whole.
    fn flush_text(&mut self) {
        if !self.partial.is_empty() {
            self.text("\n");
        }
        self.screen.end_text();
    }

    fn decided(&mut self, decision: &Decision) {
        let shipped = decision.decision == "allow" && decision.layer == "default";
        let Some(at) = decision
            .call_id
            .as_ref()
            .and_then(|id| self.by_id.get(id).copied())
        else {
            // Of the decisions no call owns, only a connection's concern
            // the person (sandbox.jit and the like are read before the
            // first turn and said by the start).
            if !shipped && decision.action.starts_with("net.") {
                self.step(Tone::Asks, &format!("  ↳ {}", said(decision)));
            }
            return;
        };
        if self.calls[at].lined {
            if !shipped {
                self.step(Tone::Asks, &format!("    ↳ {}", said(decision)));
            }
            return;
        }
        self.line_for(at, (!shipped).then(|| said(decision)));
    }

    fn running(&mut self, call: &ToolCallEvent) {
        let at = match self.by_id.get(&call.call_id) {
            Some(&at) => at,
            None => {
                let arguments = serde_json::from_str(call.arguments.get()).unwrap_or(Value::Null);
                self.by_id.insert(call.call_id.clone(), self.calls.len());
                self.calls.push(Shown {
                    call_id: call.call_id.clone(),
                    tool: call.tool.clone(),
                    arguments,
                    lined: false,
                });
                self.calls.len() - 1
            }
        };
        if !self.calls[at].lined {
            self.line_for(at, None);
        }
        let shown = &self.calls[at];
        self.waiting = match shown.tool.as_str() {
            "run_command" => Waiting::Command(essential(&shown.tool, &shown.arguments)),
            tool => Waiting::Tool(tool.to_owned()),
        };
    }

    /// A call's line, with what decided it when that was not a shipped
    /// allow, and for a write, the diff it would make.
    fn line_for(&mut self, at: usize, decided: Option<String>) {
        self.calls[at].lined = true;
        let shown = self.calls[at].clone();
        let mut line = self.looks.painted(Tone::Bold, &format!("● {}", shown.tool));
        let what = essential(&shown.tool, &shown.arguments);
        if !what.is_empty() {
            line.push(' ');
            line.push_str(&visible(&what));
        }
        if let Some(decided) = decided {
            self.looks
                .paint(&mut line, Tone::Asks, &format!(" · {decided}"));
        }
        self.screen.line(&line);
        if let Some(lines) = self.write_diff(&shown) {
            let number = at + 1;
            for line in lines {
                let (tone, text) = match line {
                    DiffLine::Added(text) => (Tone::Added, format!("    + {text}")),
                    DiffLine::Removed(text) => (Tone::Removed, format!("    - {text}")),
                    DiffLine::Context(text) => (Tone::Dim, format!("      {text}")),
                    DiffLine::More(n) => (
                        Tone::Dim,
                        format!("    … {n} more changed lines (/show {number})"),
                    ),
                };
                self.step(tone, &visible(&text));
            }
        }
    }

    /// The diff a write_file or edit_file call would make, from the file
    /// as it is now.
    fn write_diff(&self, shown: &Shown) -> Option<Vec<DiffLine>> {
        let field = |name: &str| shown.arguments.get(name).and_then(Value::as_str);
        let path = field("path")?;
        let (old, new) = match shown.tool.as_str() {
            "write_file" => (
                read_beneath(&self.root, path)?,
                field("content")?.to_owned(),
            ),
            "edit_file" => {
                let (from, to) = (field("old_text")?, field("new_text")?);
                match read_beneath(&self.root, path) {
                    Some(old) if old.contains(from) => {
                        let all = shown.arguments.get("replace_all").and_then(Value::as_bool);
                        let new = match all {
                            Some(true) => old.replace(from, to),
                            _ => old.replacen(from, to, 1),
                        };
                        (old, new)
                    }
                    _ => (from.to_owned(), to.to_owned()),
                }
            }
            _ => return None,
        };
        Some(diff(&old, &new, DIFF_LINES))
    }

    fn result(&mut self, result: &ToolResult) {
        let tool = self
            .by_id
            .get(&result.call_id)
            .map(|&at| self.calls[at].tool.clone())
            .unwrap_or_default();
        let mut lines = outcome(&tool, result.ok, &result.output).into_iter();
        let (mark, tone) = if result.ok {
            ("✓", Tone::Added)
        } else {
            ("✗", Tone::Removed)
        };
        let first = lines.next().unwrap_or_default();
        let mut line = format!("  {} ", self.looks.painted(tone, mark));
        line.push_str(&visible(&first));
        self.screen.line(&line);
        for rest in lines {
            self.step(Tone::Dim, &format!("    {}", visible(&rest)));
        }
        self.waiting = Waiting::Model;
    }

    /// The plan as it stands.
    pub fn show_plan(&mut self) {
        if self.plan.is_empty() {
            self.step(Tone::Dim, "  (no plan yet)");
            return;
        }
        self.step(Tone::Bold, "  plan");
        for item in self.plan.clone() {
            let (mark, tone) = match item.status {
                PlanStatus::Done => ("[x]", Tone::Dim),
                PlanStatus::InProgress => ("[>]", Tone::Bold),
                PlanStatus::Pending | PlanStatus::Unknown => ("[ ]", Tone::Plain),
            };
            self.step(tone, &format!("    {mark} {}", visible(&item.text)));
        }
    }

    /// A step's line in one tone.
    pub fn step(&mut self, tone: Tone, text: &str) {
        let line = self.looks.painted(tone, text);
        self.screen.line(&line);
    }

    /// The status line's text, cut to the terminal's width.
    #[must_use]
    pub fn status_text(&self) -> String {
        let tokens = self.usage.total();
        let mut parts = vec![self.id.clone(), self.model.clone(), tokens_text(tokens)];
        if let Some(title) = &self.title {
            parts.push(title.clone());
        }
        parts.push(self.waiting.describe());
        let full = parts.join(" · ");
        let cols = width().saturating_sub(1);
        if full.chars().count() <= cols {
            return full;
        }
        let waiting = self.waiting.describe();
        waiting.chars().take(cols).collect()
    }

    /// Redraws the status line.
    pub fn draw_status(&mut self) {
        if self.screen.live() && !self.ended && self.waiting != Waiting::Person {
            let status = self.looks.painted(Tone::Dim, &self.status_text());
            self.screen.status(&status);
        }
    }
}

/// A decision that was not a shipped allow, in words.
fn said(decision: &Decision) -> String {
    let rule = if decision.rule.is_empty() {
        String::new()
    } else {
        format!(" rule {}", decision.rule)
    };
    format!(
        "{} {} ({}{rule})",
        decision.action, decision.decision, decision.layer
    )
}

/// A token count as a person reads it: 950, 12.3k, 1.2M.
fn tokens_text(tokens: u64) -> String {
    #[expect(clippy::cast_precision_loss, reason = "a count shown to one decimal")]
    let t = tokens as f64;
    match tokens {
        0..1_000 => format!("{tokens} tokens"),
        1_000..1_000_000 => format!("{:.1}k tokens", t / 1e3),
        _ => format!("{:.1}M tokens", t / 1e6),
    }
}

/// A file of the workspace as it is now, to diff a write against: `""`
/// for one that does not exist yet, `None` for one that cannot be read
/// safely. The workspace is the sandbox's to write, so the path is
/// resolved beneath the root with no symlink followed, and only a regular
/// file of at most [`DIFF_FILE_BYTES`] is read (a FIFO would otherwise
/// hold the session's one thread).
fn read_beneath(root: &Path, path: &str) -> Option<String> {
    use rustix::fs::{FileType, Mode, OFlags, ResolveFlags};
    use std::io::Read as _;
    let relative = path
        .strip_prefix("/workspace/")
        .unwrap_or(path)
        .trim_start_matches("./");
    if relative.starts_with('/') {
        return None;
    }
    let dir = rustix::fs::open(
        root,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let opened = rustix::fs::openat2(
        &dir,
        relative,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
        ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
    );
    let fd = match opened {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT) => return Some(String::new()),
        Err(_) => return None,
    };
    let stat = rustix::fs::fstat(&fd).ok()?;
    let size = u64::try_from(stat.st_size).ok()?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile || size > DIFF_FILE_BYTES {
        return None;
    }
    let mut text = String::new();
    std::fs::File::from(fd).read_to_string(&mut text).ok()?;
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_is_read_beneath_the_workspace_and_never_through_a_link_or_fifo() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("a.txt"), "old\n").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", root.path().join("link")).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            root.path().join("fifo"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        assert_eq!(read_beneath(root.path(), "a.txt").as_deref(), Some("old\n"));
        assert_eq!(
            read_beneath(root.path(), "/workspace/a.txt").as_deref(),
            Some("old\n")
        );
        assert_eq!(read_beneath(root.path(), "new.txt").as_deref(), Some(""));
        assert_eq!(read_beneath(root.path(), "link"), None);
        assert_eq!(read_beneath(root.path(), "fifo"), None);
        assert_eq!(read_beneath(root.path(), "../etc/passwd"), None);
        assert_eq!(read_beneath(root.path(), "/etc/passwd"), None);
    }

    #[test]
    fn tokens_are_counted_as_a_person_reads_them() {
        assert_eq!(tokens_text(950), "950 tokens");
        assert_eq!(tokens_text(12_345), "12.3k tokens");
        assert_eq!(tokens_text(1_234_567), "1.2M tokens");
    }
}
