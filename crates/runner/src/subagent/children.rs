//! The subagents one session started: the ones still running, what the
//! ended ones said, and the record of each end in the session's log
//! (`background.end` for a background one, then `subagent.end`). A
//! session's end ends the children it still has (SIGTERM, then SIGKILL
//! after [`END_GRACE`]) and records each.
//!
//! Children are watched by polling `try_wait` on the session's one thread:
//! a handful of processes, looked at every [`POLL`], with nothing held
//! across a wait.

use std::cell::RefCell;
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use chock_log::event::{BackgroundEnd, EndReason, SubagentEnd};
use chock_log::{LogWriter, SessionId, StateDir, WriteError};

use super::Agents;
use super::tree::{self, Ended};

/// How often a waited-for child is looked at.
pub(super) const POLL: Duration = Duration::from_millis(25);
/// How long a child has to end after SIGTERM when its parent ends.
const END_GRACE: Duration = Duration::from_secs(10);
/// Most characters of a child's answer its parent's model is handed.
const MAX_ANSWER: usize = 16 * 1024;

/// One child process still running.
#[derive(Debug)]
pub(super) struct Live {
    pub(super) id: SessionId,
    pub(super) call_id: String,
    pub(super) background: bool,
    pub(super) process: tokio::process::Child,
}

/// A session's subagents: the ones still running and what ended ones said.
#[derive(Debug)]
pub(crate) struct Children<'a> {
    /// This session.
    pub(super) id: SessionId,
    pub(super) state: &'a StateDir,
    /// This session's project, which its children are of.
    pub(super) project: std::path::PathBuf,
    /// `instance/model` of this session, a child's model by default.
    pub(super) label: String,
    /// Whether this session runs in the foreground of a terminal.
    pub(super) foreground: bool,
    pub(super) agents: Option<&'a Agents>,
    pub(super) live: RefCell<Vec<Live>>,
    /// What ended background children said, for the model's next call.
    pub(super) arrived: RefCell<Vec<String>>,
    /// Every ended child's text by id, for job_output.
    pub(super) finished: RefCell<Vec<(String, String)>>,
}

impl<'a> Children<'a> {
    /// The children of session `id` of `project`, whose model is `label`
    /// and which runs in the `foreground` of a terminal or not.
    pub(crate) fn new(
        id: SessionId,
        state: &'a StateDir,
        project: &std::path::Path,
        label: &str,
        foreground: bool,
        agents: Option<&'a Agents>,
    ) -> Children<'a> {
        Children {
            id,
            state,
            project: project.to_owned(),
            label: label.to_owned(),
            foreground,
            agents,
            live: RefCell::default(),
            arrived: RefCell::default(),
            finished: RefCell::default(),
        }
    }

    /// The answers of background children that ended since the model's
    /// last call, as messages for its next.
    pub(crate) fn take_arrived(&self) -> Vec<String> {
        std::mem::take(&mut self.arrived.borrow_mut())
    }

    pub(super) fn any_background(&self) -> bool {
        self.live.borrow().iter().any(|l| l.background)
    }

    /// Takes out every child that has exited, with how.
    fn exited(&self) -> Vec<(Live, ExitStatus)> {
        let mut live = self.live.borrow_mut();
        let mut out = Vec::new();
        let mut i = 0;
        while i < live.len() {
            match live[i].process.try_wait() {
                Ok(Some(status)) => out.push((live.remove(i), status)),
                Ok(None) => i += 1,
                // Not ours to wait for any more: it is gone either way.
                Err(_) => {
                    let gone = live.remove(i);
                    out.push((gone, std::os::unix::process::ExitStatusExt::from_raw(9)));
                }
            }
        }
        out
    }

    /// Records a child's end in this session's log: `background.end` for a
    /// background one, then `subagent.end`; returns the text for the model.
    pub(super) fn record(
        &self,
        writer: &RefCell<LogWriter>,
        live: &Live,
        status: ExitStatus,
    ) -> Result<(Ended, String), WriteError> {
        let ended = tree::ended(self.state, &self.id, &live.id, status);
        let text = report(&live.id, &ended, live.background, &live.call_id);
        let mut writer = writer.borrow_mut();
        if live.background {
            writer.append(BackgroundEnd {
                job_id: live.id.to_string(),
                status: match ended.reason {
                    EndReason::Done => "done",
                    EndReason::Interrupted | EndReason::Crashed => "killed",
                    _ => "failed",
                }
                .to_owned(),
                exit_code: status.code(),
            })?;
        }
        writer.append(SubagentEnd {
            session: live.id.clone(),
            call_id: live.call_id.clone(),
            background: live.background,
            reason: ended.reason.clone(),
            tokens: ended.tokens,
            text: text.clone(),
        })?;
        self.finished
            .borrow_mut()
            .push((live.id.to_string(), text.clone()));
        Ok((ended, text))
    }

    /// Records every background child that has ended; their texts wait for
    /// the model's next call.
    pub(super) fn record_exited(&self, writer: &RefCell<LogWriter>) -> Result<(), WriteError> {
        for (live, status) in self.exited() {
            let (_, text) = self.record(writer, &live, status)?;
            if live.background {
                self.arrived.borrow_mut().push(text);
            }
        }
        Ok(())
    }

    /// The session is ending: every child still running is asked to end
    /// (SIGTERM: it ends `interrupted`, its log closed), killed after
    /// [`END_GRACE`], and recorded.
    pub(crate) async fn end_all(&self, writer: &RefCell<LogWriter>) -> Result<(), WriteError> {
        if self.live.borrow().is_empty() {
            return Ok(());
        }
        for live in self.live.borrow().iter() {
            if let Some(pid) = live
                .process
                .id()
                .and_then(|p| rustix::process::Pid::from_raw(p as i32))
            {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
            }
        }
        let deadline = Instant::now() + END_GRACE;
        loop {
            self.record_ended(writer)?;
            if self.live.borrow().is_empty() {
                return Ok(());
            }
            if Instant::now() >= deadline {
                for live in self.live.borrow_mut().iter_mut() {
                    let _ = live.process.start_kill();
                }
            }
            tokio::time::sleep(POLL).await;
        }
    }

    fn record_ended(&self, writer: &RefCell<LogWriter>) -> Result<(), WriteError> {
        for (live, status) in self.exited() {
            self.record(writer, &live, status)?;
        }
        Ok(())
    }
}

/// What the parent's model is told of a child's end.
fn report(id: &SessionId, ended: &Ended, background: bool, call_id: &str) -> String {
    let mut text = if background {
        format!(
            "The background subagent {} (spawn_agent call {call_id}) ended {}",
            id.as_str(),
            ended.reason.as_str()
        )
    } else {
        format!("subagent {} ended {}", id.as_str(), ended.reason.as_str())
    };
    text.push_str(&format!(" after {} tokens", ended.tokens));
    if !ended.detail.is_empty() {
        text.push_str(&format!(": {}", ended.detail));
    }
    if ended.answer.is_empty() {
        text.push_str(". It gave no answer.");
    } else {
        text.push_str(". Its answer:\n");
        text.push_str(&chock_tools::truncate(&ended.answer, MAX_ANSWER));
    }
    text
}
