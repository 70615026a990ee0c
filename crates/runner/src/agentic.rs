//! The session's own judgement around a tool call: the gate every decided
//! call passes (allow, a person's yes, a reviewer's yes, or both), the
//! session tools that need the session itself (ask_user, restrict_self,
//! request_action), and compaction before a model call. All of it is a
//! part of [`LogHooks`], kept apart from `session.rs` so the loop there
//! stays short: everything here appends its own events (`approval.*`,
//! `review`, `promise`, `promise.release`, `grant`, `compaction`) and so
//! can be replayed by the next owner of the log.

use chock_log::event::{Compaction, Grant, Notice, Promise, PromiseRelease, PromiseRule};
use chock_log::{EventBody, EventId, fold_log, read_after};
use chock_policy::{Action, Decision, Help, LayerKind, PromiseId, Rule, Verdict};

use crate::approval::{self, Answer, Given, Wants};
use crate::compact;
use crate::history;
use crate::judge::{Refusal, Subject};
use crate::person::Told;
use crate::provider::{Message, ModelRequest, ToolCall, ToolSpec};
use crate::session::{LogHooks, SessionError};
use crate::turn::Gate;
use chock_tools::{AskUser, Call, RequestAction, RestrictSelf, ToolOutput, Unparsed};

impl<F> LogHooks<'_, F> {
    fn log_path(&self) -> std::path::PathBuf {
        self.writer.borrow().path().to_owned()
    }

    /// Re-applies the promises, releases and grants already in the log, in
    /// order, so a carried-on session keeps what it promised. Promise ids
    /// are handed out in the same order as when they were made, so the ids
    /// in the log stay the ids in force.
    pub(crate) fn replay(&mut self) -> Result<(), SessionError> {
        let batch = read_after(&self.log_path(), EventId::NONE)?;
        for raw in &batch.events {
            let Ok(event) = raw.parse() else { continue };
            match event.body {
                EventBody::Promise(promise) => {
                    let rules = promise
                        .rules
                        .iter()
                        .filter_map(|r| promise_rule(&r.action, &r.decision).ok())
                        .collect();
                    self.judge.restrict(rules);
                }
                EventBody::PromiseRelease(release) => {
                    // It was permitted when it was made; a policy that now
                    // denies policy.widen keeps the promise, which is the
                    // narrower mistake.
                    let _ = self.judge.widen(PromiseId(release.promise_id), true);
                }
                EventBody::Grant(grant) => {
                    self.judge.grant(&grant.action);
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Decides `action` for tool call `call_id` and records the
    /// `decision` event ([`crate::judge::Judge::verdict`]).
    pub(crate) fn decide(
        &mut self,
        action: &Action,
        call_id: Option<String>,
    ) -> Result<Verdict, SessionError> {
        Ok(self.judge.verdict(action, call_id, false)?)
    }

    /// Decides a tool call at `action` to the end, through the judge:
    /// `None` lets it run, `Some` is the refusal the model reads.
    pub(crate) async fn gate(
        &mut self,
        call: &ToolCall,
        action: &Action,
    ) -> Result<Option<String>, SessionError> {
        // The whole call is in the log's tool call; the question shows
        // enough to decide on.
        let arguments: String = call.arguments.chars().take(400).collect();
        let what = format!("the model calls {} with {arguments}", call.name);
        let question = |verdict: &Verdict, reviewer_said: Option<&str>| {
            approval::question(&what, verdict, reviewer_said)
        };
        let subject = Subject {
            action,
            tool: &call.name,
            arguments: &call.arguments,
            call_id: Some(call.id.clone()),
            background: false,
            question: &question,
        };
        let judged = self.judge.decide(&subject, true).await?;
        let verdict = &judged.verdict;
        Ok(judged.refusal.map(|refusal| match refusal {
            Refusal::Denied | Refusal::NotOutright | Refusal::NobodyToAsk => denied(verdict),
            Refusal::ReviewerSaidNo(reason) => approval::reviewer_refusal(verdict, &reason),
            Refusal::PersonSaidNo | Refusal::PersonSaidNoAfterReviewer => {
                approval::refusal(verdict)
            }
        }))
    }

    /// Carries out a session tool; its result goes back as the gate.
    pub(crate) async fn session_tool(
        &mut self,
        typed: &Call,
        call: &ToolCall,
    ) -> Result<Gate, SessionError> {
        // A spawn's call names the child it starts, so it records its own.
        if let Call::SpawnAgent(args) = typed {
            let output = self.spawn_agent(args.clone(), call).await?;
            // A stop written while a foreground child ran holds here too:
            // the child has ended by it, and so does this turn.
            if !args.background
                && let Some(text) = self.judge.stop("call.spawn_agent", Some(call.id.clone()))?
            {
                return Ok(Gate::Stopped(text));
            }
            return Ok(Gate::Answered(output));
        }
        self.append(history::call_event(call, None))?;
        let output = match typed {
            Call::AskUser(args) => self.ask_user(args.clone()).await?,
            Call::RestrictSelf(args) => self.restrict_self(args.clone())?,
            Call::RequestAction(args) => self.request_action(args.clone(), call).await?,
            Call::Local(_)
            | Call::RunCommand(_)
            | Call::JobOutput(_)
            | Call::ServePort(_)
            | Call::FetchUrl(_)
            | Call::WebSearch(_)
            | Call::ReadImage(_)
            | Call::ReadMemory(_)
            | Call::WriteMemory(_)
            | Call::ReadSkill(_)
            | Call::NixEval(_)
            | Call::ProvideTool(_)
            | Call::SpawnAgent(_)
            | Call::Diagnostics(_)
            | Call::External(_) => return Ok(Gate::Run),
        };
        Ok(Gate::Answered(output))
    }

    /// The refusal of a built-in tool an agent profile left out of this
    /// subagent's tools.
    pub(crate) fn narrowed(&self, parsed: &Result<Call, Unparsed>) -> Option<String> {
        let tool = match parsed {
            Ok(call) => call.tool()?,
            Err(unparsed) => unparsed.tool?,
        };
        (!self.tools.allows(tool.as_str())).then(|| {
            format!(
                "{} is not among this subagent's tools: its agent profile names the tools it may use",
                tool.as_str()
            )
        })
    }

    async fn ask_user(&mut self, args: AskUser) -> Result<ToolOutput, SessionError> {
        let given = self
            .judge
            .ask_person("ask_user", args.question, Wants::Text)
            .await?;
        Ok(match given {
            Given::Text(text) => ToolOutput::ok(format!("the person answered: {text}")),
            Given::Answer(answer) => ToolOutput::ok(format!("the person answered: {answer}")),
        })
    }

    fn restrict_self(&mut self, args: RestrictSelf) -> Result<ToolOutput, SessionError> {
        let mut rules = Vec::with_capacity(args.rules.len());
        for rule in &args.rules {
            match promise_rule(&rule.action, &rule.decision) {
                Ok(parsed) => rules.push(parsed),
                Err(why) => {
                    return Ok(ToolOutput::error(format!(
                        "no promise was made: the rule for '{}' is not valid: {why}",
                        rule.action
                    )));
                }
            }
        }
        let id = self.judge.restrict(rules);
        self.append(Promise {
            promise_id: id.0,
            rules: args
                .rules
                .iter()
                .map(|r| PromiseRule {
                    action: r.action.clone(),
                    decision: r.decision.clone(),
                })
                .collect(),
            reason: args.reason,
        })?;
        let listed: Vec<String> = args
            .rules
            .iter()
            .map(|r| format!("{} {}", r.action, r.decision))
            .collect();
        Ok(ToolOutput::ok(format!(
            "promise {} is in force from the next call on: {}. It can only narrow the policy; leaving it is policy.widen (ask with request_action)",
            id.0,
            listed.join(", ")
        )))
    }

    async fn request_action(
        &mut self,
        args: RequestAction,
        call: &ToolCall,
    ) -> Result<ToolOutput, SessionError> {
        let action: Action = match args.action.trim().parse() {
            Ok(action) => action,
            Err(err) => {
                return Ok(ToolOutput::error(format!(
                    "'{}' is not an action name: {err}",
                    args.action
                )));
            }
        };
        let verdict = self.decide(&action, Some(call.id.clone()))?;
        if verdict.decision == Decision::Allow {
            return Ok(ToolOutput::ok(format!(
                "{action} is already allowed: go ahead"
            )));
        }
        if let Some(Help::Promise { id }) = verdict.help {
            return self.widen(&action, PromiseId(id), &args.reason, call).await;
        }
        if verdict.decision == Decision::Deny || verdict.layer == LayerKind::Org {
            return Ok(ToolOutput::error(format!(
                "{action} cannot be granted in a session: {}. Take another way",
                denied(&verdict)
            )));
        }
        let rule = verdict
            .rule
            .as_ref()
            .map(|r| format!(" (rule {})", r.text))
            .unwrap_or_default();
        let question = format!(
            "the agent asks to be allowed {action} for the rest of this session, saying: {}; the {} says {}{rule}",
            args.reason.trim(),
            verdict.layer.describe(),
            verdict.decision
        );
        let request_id = (self.writer.borrow().last_id().0 + 1).to_string();
        let given = self
            .judge
            .ask_person(action.as_str(), question, Wants::YesNo)
            .await?;
        if given != Given::Answer(Answer::Yes) {
            return Ok(ToolOutput::error(approval::refusal(&verdict)));
        }
        self.judge.grant(action.as_str());
        self.append(Grant {
            action: action.as_str().to_owned(),
            request_id,
        })?;
        Ok(ToolOutput::ok(format!(
            "the person said yes: {action} is allowed for the rest of this session"
        )))
    }

    /// request_action for an action a promise caps: leaving the promise is
    /// `policy.widen`, decided and, where it asks, asked.
    async fn widen(
        &mut self,
        action: &Action,
        id: PromiseId,
        reason: &str,
        call: &ToolCall,
    ) -> Result<ToolOutput, SessionError> {
        // A parent's promise binds its subagent whatever anybody answers,
        // so nobody is asked a question whose yes could not count.
        if self.judge.inherited(id) {
            return Ok(ToolOutput::error(format!(
                "{action} stays capped: {}. Keep to the promise or take another way",
                chock_policy::WidenError::Inherited(id)
            )));
        }
        let widen = self.decide(&Action::policy_widen(), Some(call.id.clone()))?;
        let approved = match widen.decision {
            Decision::Allow => true,
            Decision::Deny => false,
            _ => {
                let question = format!(
                    "the agent asks to leave promise {} it made with restrict_self, to use {action}, saying: {}",
                    id.0,
                    reason.trim()
                );
                let given = self
                    .judge
                    .ask_person("policy.widen", question, Wants::YesNo)
                    .await?;
                given == Given::Answer(Answer::Yes)
            }
        };
        if let Err(err) = self.judge.widen(id, approved) {
            return Ok(ToolOutput::error(format!(
                "{action} stays capped: {err}. Keep to the promise or take another way"
            )));
        }
        self.append(PromiseRelease { promise_id: id.0 })?;
        let now = self.judge.decision(action);
        Ok(ToolOutput::ok(format!(
            "promise {} was left; {action} is decided by the policy again and now answers {now}",
            id.0
        )))
    }

    /// Compacts the conversation when it nears the context window.
    pub(crate) async fn maybe_compact(
        &mut self,
        conversation: &mut Vec<Message>,
        tools: &[ToolSpec],
    ) -> Result<(), SessionError> {
        if let Some(Message::User { text }) = conversation
            .iter()
            .rev()
            .find(|m| matches!(m, Message::User { .. }))
        {
            self.judge.set_task(text);
        }
        if self.compaction.failed {
            return Ok(());
        }
        let Some((tokens, counted_by)) = self.size(conversation, tools).await? else {
            return Ok(());
        };
        let folded = fold_log(&self.log_path())?.state.conversation;
        let Some(start) = compact::split(&folded, self.compaction.window()) else {
            return Ok(());
        };
        let up_to = folded[start - 1].event_id();
        let older = history::from_fold(&folded[..start]);
        let summary =
            compact::summarise(self.compaction.provider(), self.compaction.model(), &older).await;
        match summary {
            Ok((summary, usage)) if !summary.trim().is_empty() => {
                self.append(Compaction {
                    summary,
                    up_to,
                    usage: Some(history::to_log_usage(usage)),
                    tokens: Some(tokens),
                    counted_by: Some(counted_by.to_owned()),
                })?;
                let folded = fold_log(&self.log_path())?.state.conversation;
                *conversation = history::from_fold(&folded);
                self.compaction.last_usage = None;
            }
            other => {
                self.compaction.failed = true;
                let why = match other {
                    Err(err) => err.to_string(),
                    Ok(_) => "the summary came back empty".to_owned(),
                };
                self.append(Notice {
                    subject: "compaction".to_owned(),
                    text: format!(
                        "the conversation nears the context window ({tokens} of {} tokens) but could not be summarised, so it is sent whole: {why}",
                        self.compaction.window()
                    ),
                })?;
            }
        }
        Ok(())
    }
}

impl<F> LogHooks<'_, F> {
    /// The conversation's size when it may need compacting, and how it was
    /// had; `None` when it is well inside the window.
    ///
    /// The provider's usage of the last call counts everything up to its
    /// answer; only what came after (tool results) is estimated. When that
    /// figure says compaction is due and the API can count a request
    /// (Anthropic's count_tokens), the request is counted and the count
    /// decides, so an overestimate never compacts early. A count that fails
    /// is said once and the figure stands.
    async fn size(
        &mut self,
        conversation: &[Message],
        tools: &[ToolSpec],
    ) -> Result<Option<(u64, &'static str)>, SessionError> {
        let compactor = &self.compaction;
        let (tokens, how) = self.figure(conversation);
        if !compact::needed(tokens, compactor.window()) {
            return Ok(None);
        }
        if !compactor.provider().counts_tokens() || compactor.count_failed {
            return Ok(Some((tokens, how)));
        }
        let request = ModelRequest {
            model: compactor.model(),
            system: compactor.system,
            messages: conversation,
            tools,
        };
        match compactor.provider().count_tokens(&request).await {
            Ok(Some(counted)) if compact::needed(counted, compactor.window()) => {
                Ok(Some((counted, "count_tokens")))
            }
            Ok(Some(_)) => Ok(None),
            Ok(None) => Ok(Some((tokens, how))),
            Err(err) => {
                self.compaction.count_failed = true;
                self.append(Notice {
                    subject: "compaction".to_owned(),
                    text: format!(
                        "the conversation's tokens could not be counted, so compaction goes by the {how} figure ({tokens} tokens) for the rest of this run: {err}"
                    ),
                })?;
                Ok(Some((tokens, how)))
            }
        }
    }
}

impl<F> LogHooks<'_, F> {
    /// The conversation's size as the last call's usage says, plus an
    /// estimate of what came after it; an estimate of all of it when there
    /// is no usage to go by. And how it was had.
    fn figure(&self, conversation: &[Message]) -> (u64, &'static str) {
        match self.compaction.last_usage {
            Some((reported, upto)) => {
                let after = conversation
                    .get(upto.min(conversation.len())..)
                    .unwrap_or_default();
                (reported + compact::estimate(after), "usage")
            }
            None => (compact::estimate(conversation), "estimate"),
        }
    }

    /// `/compact`: everything before the last answer summarised now, by
    /// the model the session talks to, and recorded as automatic
    /// compaction is (a `compaction` event, then a `notice` saying the
    /// person asked for it). Refused, with nothing changed, when there is
    /// too little to summarise or the summary cannot be had.
    pub(crate) async fn compact_now(
        &mut self,
        conversation: &mut Vec<Message>,
    ) -> Result<Told, SessionError> {
        let folded = fold_log(&self.log_path())?.state.conversation;
        let Some(start) = compact::split_now(&folded) else {
            return Ok(Told::Refused(format!(
                "there is too little to compact: the conversation holds {} messages and /compact keeps the last answer whole, which leaves less than two to summarise; go on talking and /compact later",
                folded.len()
            )));
        };
        let up_to = folded[start - 1].event_id();
        let older = history::from_fold(&folded[..start]);
        let summarised = compact::estimate(&older);
        let (tokens, counted_by) = self.figure(conversation);
        let summary =
            compact::summarise(self.compaction.provider(), self.compaction.model(), &older).await;
        let (summary, usage) = match summary {
            Ok((summary, usage)) if !summary.trim().is_empty() => (summary, usage),
            other => {
                let why = match other {
                    Err(err) => err.to_string(),
                    Ok(_) => "the summary came back empty".to_owned(),
                };
                return Ok(Told::Refused(format!(
                    "the conversation could not be summarised, so nothing was compacted: {why}; try /compact again, or go on as it is"
                )));
            }
        };
        self.append(Compaction {
            summary,
            up_to,
            usage: Some(history::to_log_usage(usage)),
            tokens: Some(tokens),
            counted_by: Some(counted_by.to_owned()),
        })?;
        self.append(Notice {
            subject: "compaction".to_owned(),
            text: format!(
                "compacted at the person's /compact: {start} messages (about {summarised} tokens) were summarised"
            ),
        })?;
        let folded = fold_log(&self.log_path())?.state.conversation;
        *conversation = history::from_fold(&folded);
        self.compaction.last_usage = None;
        Ok(Told::Compacted {
            messages: start,
            tokens: summarised,
        })
    }
}

/// One rule of a promise from the model's words.
pub(crate) fn promise_rule(action: &str, decision: &str) -> Result<Rule, String> {
    let decision: Decision = decision.parse().map_err(|e| format!("{e}"))?;
    Rule::parse(Some(action), decision).map_err(|e| e.to_string())
}

/// The refusal for a deny, with what would permit it.
fn denied(verdict: &Verdict) -> String {
    let help = verdict
        .help
        .as_ref()
        .map(|help| format!("\n{help}"))
        .unwrap_or_default();
    format!("{} is denied by the policy.{help}", verdict.action)
}
