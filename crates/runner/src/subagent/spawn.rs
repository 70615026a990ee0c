//! `spawn_agent`, carried out by the session: the bounds (depth, live
//! children, the tree's tokens), the profile and the model, each refusal a
//! result the model reads; then the child `chock run`, waited for in the
//! foreground or kept in [`Children`] in the background.
//!
//! A background child's end is recorded at the parent's next turn boundary
//! (`background.end`, then `subagent.end`, whose text the fold puts in the
//! conversation) and handed to the model before its next call. At the
//! boundary after a final answer the parent waits for its background
//! children and then goes on, so their answers are read rather than lost.
//! The children themselves are kept in `children.rs`.

use std::io::IsTerminal as _;
use std::process::Stdio;
use std::time::{Duration, Instant};

use chock_log::SessionId;
use chock_log::event::{BackgroundStart, EndReason};
use chock_tools::{SpawnAgent, ToolOutput};

use super::Agents;
use super::children::{Children, Live, POLL};
use super::tree;
use crate::history;
use crate::provider::ToolCall;
use crate::session::{LogHooks, SessionError};

impl<F> LogHooks<'_, F> {
    /// Carries out a spawn_agent call: refused with a sentence the model
    /// reads, or a child started; a foreground child is waited for and its
    /// answer is the result.
    pub(crate) async fn spawn_agent(
        &mut self,
        args: SpawnAgent,
        call: &ToolCall,
    ) -> Result<ToolOutput, SessionError> {
        let record_call = |hooks: &Self, session: Option<SessionId>| {
            hooks.append(history::call_event(call, session))
        };
        let (model, profile) = match self.spawn_refusal(&args) {
            Ok(chosen) => chosen,
            Err(refusal) => {
                record_call(self, None)?;
                return Ok(ToolOutput::error(refusal));
            }
        };
        let children = self.children;
        let Some(agents) = children.agents else {
            return Ok(ToolOutput::error("this session cannot start subagents"));
        };
        let child = SessionId::new();
        record_call(self, Some(child.clone()))?;
        let terminal = !args.background && children.foreground && std::io::stdin().is_terminal();
        let process = match start(agents, children, &child, &args, &model, profile, terminal) {
            Ok(process) => process,
            Err(err) => {
                return Ok(ToolOutput::error(format!(
                    "the subagent could not be started: {err}"
                )));
            }
        };
        if args.background {
            self.append(BackgroundStart {
                job_id: child.to_string(),
                kind: "subagent".to_owned(),
                command: args.task.chars().take(200).collect(),
            })?;
        }
        children.live.borrow_mut().push(Live {
            id: child.clone(),
            call_id: call.id.clone(),
            background: args.background,
            process,
        });
        if args.background {
            return Ok(ToolOutput::ok(format!(
                "subagent {} started in the background with {model}. It works in your workspace beside you, so leave the files it works on alone until it ends. Go on with your work: its answer arrives as a message once it ends (job_output with job \"{}\" reads it sooner).",
                child.as_str(),
                child.as_str()
            )));
        }
        loop {
            let exited = {
                let mut live = children.live.borrow_mut();
                let at = live.iter().position(|l| l.id == child);
                match at.map(|i| (i, live[i].process.try_wait())) {
                    Some((i, Ok(Some(status)))) => Some((live.remove(i), status)),
                    Some((i, Err(_))) => Some((
                        live.remove(i),
                        std::os::unix::process::ExitStatusExt::from_raw(9),
                    )),
                    Some((_, Ok(None))) => None,
                    None => return Ok(ToolOutput::error("the subagent is gone")),
                }
            };
            if let Some((live, status)) = exited {
                let (ended, text) = children.record(self.writer, &live, status)?;
                return Ok(if ended.reason == EndReason::Done {
                    ToolOutput::ok(text)
                } else {
                    ToolOutput::error(text)
                });
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// The model and profile of a spawn, or why it is refused.
    fn spawn_refusal(&self, args: &SpawnAgent) -> Result<(String, Option<String>), String> {
        let children = self.children;
        let Some(agents) = children.agents else {
            return Err("this session cannot start subagents".to_owned());
        };
        let bounds = agents.bounds;
        if agents.depth >= bounds.max_depth {
            return Err(format!(
                "no subagent was started: this session is at depth {} and .subagents.max_depth = {} in config.zon; do the work yourself",
                agents.depth, bounds.max_depth
            ));
        }
        let live = children.live.borrow().len();
        if live >= bounds.max_live {
            return Err(format!(
                "no subagent was started: {live} of this session's subagents are running and .subagents.max_live = {} in config.zon; wait for one to end (job_output) or do the work yourself",
                bounds.max_live
            ));
        }
        let profile = match &args.agent {
            None => None,
            Some(name) => Some(agents.profiles.find(name).ok_or_else(|| {
                format!(
                    "no subagent was started: there is no agent profile named '{name}'; {}",
                    agents.profiles.names()
                )
            })?),
        };
        let model = args
            .model
            .clone()
            .or_else(|| profile.and_then(|p| p.model.clone()))
            .unwrap_or_else(|| children.label.clone());
        let choice = agents
            .config
            .choose(Some(&model), &agents.config_path)
            .map_err(|err| format!("no subagent was started: {err}"))?;
        let verdict = self
            .policy
            .model_select(choice.instance, choice.model)
            .map_err(|err| {
                format!("no subagent was started: the model '{model}' cannot be used: {err}")
            })?;
        if verdict.refused() {
            return Err(format!(
                "no subagent was started: the policy does not let a session use the model '{model}' (model.select is read before a subagent starts, so only allow lets it be used):\n{}",
                verdict.render()
            ));
        }
        let (_, spent) = tree::place(children.state, &children.id);
        if spent >= bounds.max_tree_tokens {
            return Err(format!(
                "no subagent was started: this session and its subagents have spent {spent} tokens and .subagents.max_tree_tokens = {} in config.zon; finish with what you have",
                bounds.max_tree_tokens
            ));
        }
        Ok((model, profile.map(|p| p.name.clone())))
    }

    /// At a turn boundary: records the background children that ended.
    /// After a final answer, waits for the ones still running; `true` when
    /// the turn should go on so the model reads what they said.
    pub(crate) async fn children_at_boundary(&mut self, last: bool) -> Result<bool, SessionError> {
        let children = self.children;
        children.record_exited(self.writer)?;
        if !last {
            return Ok(false);
        }
        while children.any_background() {
            self.say_holding().await;
            tokio::time::sleep(POLL).await;
            children.record_exited(self.writer)?;
        }
        Ok(!children.arrived.borrow().is_empty())
    }

    /// A session asked to hand over while it waits for its background
    /// children names what it holds, as at any boundary (seeds 000): the
    /// ask stays open until their ends are recorded.
    async fn say_holding(&self) {
        if !self.handover.asked() {
            return;
        }
        let log = self.writer.borrow().path().to_owned();
        if let Some((holdings, workspace)) = crate::handover::held(&log)
            && !holdings.is_empty()
        {
            let last = self.writer.borrow().last_id().0;
            let _ = self
                .handover
                .at_boundary(holdings, last, workspace.as_deref())
                .await;
        }
    }

    /// job_output for a subagent's id: whether it still runs, or what it
    /// said; `None` when `job` names no child of this session.
    pub(crate) async fn child_job(
        &mut self,
        job: &str,
        wait_secs: u64,
    ) -> Result<Option<ToolOutput>, SessionError> {
        let children = self.children;
        let deadline = Instant::now() + Duration::from_secs(wait_secs);
        loop {
            children.record_exited(self.writer)?;
            if let Some((_, text)) = children.finished.borrow().iter().find(|(id, _)| id == job) {
                return Ok(Some(ToolOutput::ok(text.clone())));
            }
            if !children.live.borrow().iter().any(|l| l.id.as_str() == job) {
                return Ok(None);
            }
            if Instant::now() >= deadline {
                return Ok(Some(ToolOutput::ok(format!(
                    "subagent {job} is still running; its answer arrives as a message once it ends"
                ))));
            }
            tokio::time::sleep(POLL).await;
        }
    }
}

/// Starts child `child`'s `chock run`. Its stdout (the streamed text) is
/// not shown: its answer comes back as the result. Its stderr goes to the
/// person's terminal when the child is in the foreground of one, which is
/// also where it asks its questions; otherwise to a file beside its
/// parent's log (`tree::stderr_path`).
fn start(
    agents: &Agents,
    children: &Children<'_>,
    child: &SessionId,
    args: &SpawnAgent,
    model: &str,
    profile: Option<String>,
    terminal: bool,
) -> std::io::Result<tokio::process::Child> {
    let mut command = tokio::process::Command::new(&agents.exe);
    command
        .arg("run")
        .arg("--session-id")
        .arg(child.as_str())
        .arg("--parent")
        .arg(children.id.as_str())
        .arg("--model")
        .arg(model);
    if let Some(profile) = profile {
        command.arg("--agent").arg(profile);
    }
    command.arg("--").arg(&children.project).arg(&args.task);
    command.stdout(Stdio::null());
    if terminal {
        command.stdin(Stdio::inherit()).stderr(Stdio::inherit());
    } else {
        let file = std::fs::File::create(tree::stderr_path(children.state, &children.id, child))?;
        command.stdin(Stdio::null()).stderr(file);
    }
    command.spawn()
}
