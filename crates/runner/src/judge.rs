//! The session's one judge: every question the session asks (a tool call,
//! a connection a command opens, and each later kind of subject) is put to
//! [`Judge::decide`], which folds the policy with the session's promises
//! and grants, records the `decision`, goes to the reviewer for
//! `agent_review` and `agent_then_human`, and to a person (approve.sock and,
//! in the foreground, the terminal) for `ask`, recording each step. The
//! caller turns the [`Ruling`] into the words its refusal needs.
//!
//! The judge is shared by the turn and by the network's decisions, which run
//! beside it on the session's one thread, so its state (the policy with the
//! session's promises, the grants, the person's latest message) sits behind
//! a `RefCell` that is never held across a wait: a promise made while a
//! connection waits on a person binds the next one.

use std::cell::RefCell;
use std::collections::BTreeSet;

use chock_log::event::{
    Answer as LogAnswer, ApprovalAnswer, ApprovalRequest, Decision as LogDecision, RequestKind,
};
use chock_log::{LogWriter, WriteError};
use chock_policy::{Action, Decision, LayerKind, Policy, PromiseId, Rule, Verdict};

use crate::approval::{Answer, ApproveSocket, Given, TerminalSlot, Wants};
use crate::review::{ReviewRequest, Reviewer, review};
use crate::stop::StopCheck;

/// One thing to decide, and how it is shown to whoever is asked.
pub(crate) struct Subject<'a> {
    pub(crate) action: &'a Action,
    /// The tool the reviewer is told of, and its arguments in words.
    pub(crate) tool: &'a str,
    pub(crate) arguments: &'a str,
    /// The tool call the decision belongs to, when there is one.
    pub(crate) call_id: Option<String>,
    /// A background command's connection: only what is allowed outright,
    /// and nobody is asked.
    pub(crate) background: bool,
    /// The question a person is asked, from the verdict and the
    /// reviewer's yes when there was one.
    pub(crate) question: &'a dyn Fn(&Verdict, Option<&str>) -> String,
}

/// Why a subject was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The policy answers deny.
    Denied,
    /// Anything but allow, for a background command.
    NotOutright,
    /// A person answered no.
    PersonSaidNo,
    /// The reviewer answered no, with its reason.
    ReviewerSaidNo(String),
    /// A person answered no after the reviewer's yes.
    PersonSaidNoAfterReviewer,
    /// It would ask, and nobody can be asked (the session is ending).
    NobodyToAsk,
}

/// The judge's answer about one subject.
#[derive(Debug)]
pub(crate) struct Judged {
    pub(crate) verdict: Verdict,
    pub(crate) refusal: Option<Refusal>,
}

/// What the judge holds for the session.
#[derive(Debug)]
struct State {
    /// The session's own fold of the policy: promises narrow it.
    policy: Policy,
    /// Actions a person said yes to through request_action.
    grants: BTreeSet<String>,
    /// The person's latest message, shown to the reviewer.
    task: String,
}

/// The session's one judge.
pub(crate) struct Judge<'s> {
    log: &'s RefCell<LogWriter>,
    approvals: &'s ApproveSocket,
    terminal: TerminalSlot,
    reviewer: Reviewer<'s>,
    stop: StopCheck,
    /// The refusal of the first action a stop refused: the turn ends after
    /// it, and the session with the reason `stopped`.
    stopped: RefCell<Option<String>>,
    state: RefCell<State>,
    /// Who asks, put before every question a person is asked: a subagent's
    /// questions name it and its parent.
    asker: Option<String>,
}

impl<'s> Judge<'s> {
    pub(crate) fn new(
        policy: Policy,
        log: &'s RefCell<LogWriter>,
        approvals: &'s ApproveSocket,
        terminal: TerminalSlot,
        reviewer: Reviewer<'s>,
        stop: StopCheck,
    ) -> Judge<'s> {
        Judge {
            log,
            approvals,
            terminal,
            reviewer,
            stop,
            stopped: RefCell::new(None),
            state: RefCell::new(State {
                policy,
                grants: BTreeSet::new(),
                task: String::new(),
            }),
            asker: None,
        }
    }

    /// Puts `asker` before every question a person is asked.
    pub(crate) fn asking_as(mut self, asker: Option<String>) -> Judge<'s> {
        self.asker = asker;
        self
    }

    /// Fixes every promise made so far in place: a subagent, once its
    /// parent's promises are replayed, can narrow further but never leave
    /// one of them (`Policy::for_subagent`).
    pub(crate) fn inherit(&self) {
        let mut state = self.state.borrow_mut();
        state.policy = state.policy.for_subagent();
    }

    /// Reads the stop before `action` (of `tool`) is carried out. A stop in
    /// force, or one that cannot be read, refuses it: the `decision` event
    /// names the stop as its rule, a `block` line goes to the decision log,
    /// and the refusal the model reads (`stopped: <reason> ...`) is returned
    /// and kept, so the turn ends after this call.
    pub(crate) fn stop(
        &self,
        action: &str,
        call_id: Option<String>,
    ) -> Result<Option<String>, WriteError> {
        let Err(stopped) = self.stop.read() else {
            return Ok(None);
        };
        let text = stopped.to_string();
        let source = stopped
            .stops
            .first()
            .map(|stop| stop.source.display().to_string())
            .unwrap_or_default();
        self.append(LogDecision {
            action: action.to_owned(),
            decision: Decision::Deny.as_str().to_owned(),
            layer: "stop".to_owned(),
            rule: format!("the stop {source}: {}", stopped.reason()),
            call_id,
        })?;
        self.stop.log_block(action, &stopped);
        self.stopped
            .borrow_mut()
            .get_or_insert_with(|| text.clone());
        Ok(Some(text))
    }

    /// The refusal of the first action a stop refused in this session.
    pub(crate) fn stopped(&self) -> Option<String> {
        self.stopped.borrow().clone()
    }

    /// A row read before the first turn (`sandbox.jit`, and as they land
    /// `nix.build`, a secret for a server, a device), when nobody is there
    /// to answer: anything but allow refuses. No promise or grant exists
    /// yet, so it is the policy's own answer.
    pub(crate) fn before_first_turn(policy: &Policy, action: &Action) -> Verdict {
        policy.decide_before_first_turn(action)
    }

    /// The verdict for `action` with the session's promises and grants,
    /// recorded as a `decision` event (a grant's own when a grant turned a
    /// question into allow).
    pub(crate) fn verdict(
        &self,
        action: &Action,
        call_id: Option<String>,
        background: bool,
    ) -> Result<Verdict, WriteError> {
        let (mut verdict, is_granted) = {
            let state = self.state.borrow();
            let verdict = if background {
                state.policy.decide_background(action)
            } else {
                state.policy.decide(action)
            };
            let is_granted = granted(&verdict, &state.grants);
            (verdict, is_granted)
        };
        if is_granted {
            verdict.decision = Decision::Allow;
            verdict.help = None;
            self.append(grant_decision(&verdict.action, call_id))?;
        } else {
            self.append(decision_event(&verdict, call_id))?;
        }
        Ok(verdict)
    }

    /// Decides `subject` to the end: the verdict, then the reviewer and a
    /// person as it says. `can_ask` is false while the session is ending,
    /// when nobody can be asked.
    pub(crate) async fn decide(
        &self,
        subject: &Subject<'_>,
        can_ask: bool,
    ) -> Result<Judged, WriteError> {
        let verdict = self.verdict(subject.action, subject.call_id.clone(), subject.background)?;
        let refusal = match verdict.decision {
            Decision::Allow => None,
            _ if subject.background => Some(Refusal::NotOutright),
            Decision::Deny => Some(Refusal::Denied),
            Decision::Ask => self
                .ask(subject, &verdict, None, can_ask)
                .await?
                .map(|refusal| refusal.unwrap_or(Refusal::PersonSaidNo)),
            Decision::AgentReview | Decision::AgentThenHuman => {
                self.review(subject, &verdict, can_ask).await?
            }
        };
        Ok(Judged { verdict, refusal })
    }

    async fn review(
        &self,
        subject: &Subject<'_>,
        verdict: &Verdict,
        can_ask: bool,
    ) -> Result<Option<Refusal>, WriteError> {
        let task = self.state.borrow().task.clone();
        let request = ReviewRequest {
            action: &verdict.action,
            tool: subject.tool,
            arguments: subject.arguments,
            rule: verdict.rule.as_ref().map_or("", |r| r.text.as_str()),
            task: &task,
        };
        let answer = review(&self.reviewer, &request).await;
        self.append(answer.event(&verdict.action, subject.call_id.clone(), &self.reviewer))?;
        if !answer.approved {
            return Ok(Some(Refusal::ReviewerSaidNo(answer.reason)));
        }
        if verdict.decision == Decision::AgentReview {
            return Ok(None);
        }
        Ok(self
            .ask(subject, verdict, Some(&answer.reason), can_ask)
            .await?
            .map(|refusal| refusal.unwrap_or(Refusal::PersonSaidNoAfterReviewer)))
    }

    /// Asks a person about `subject`: `None` on yes, `Some(None)` on no,
    /// `Some(Some(NobodyToAsk))` when nobody can be asked.
    async fn ask(
        &self,
        subject: &Subject<'_>,
        verdict: &Verdict,
        reviewer_said: Option<&str>,
        can_ask: bool,
    ) -> Result<Option<Option<Refusal>>, WriteError> {
        if !can_ask {
            return Ok(Some(Some(Refusal::NobodyToAsk)));
        }
        let question = (subject.question)(verdict, reviewer_said);
        let given = self
            .ask_person(&verdict.action, question, Wants::YesNo)
            .await?;
        Ok((given != Given::Answer(Answer::Yes)).then_some(None))
    }

    /// Puts one question to the person: records `approval.request`, waits
    /// for the answer on approve.sock and, in the foreground, the terminal
    /// (the first answer wins), and records `approval.answer`.
    pub(crate) async fn ask_person(
        &self,
        action: &str,
        question: String,
        wants: Wants,
    ) -> Result<Given, WriteError> {
        // The id the request's own event takes: unique in the log, also
        // across a session carried on by another process.
        let request_id = (self.log.borrow().last_id().0 + 1).to_string();
        let question = match &self.asker {
            Some(asker) => format!("{asker}: {question}"),
            None => question,
        };
        self.append(ApprovalRequest {
            request_id: request_id.clone(),
            action: action.to_owned(),
            question: question.clone(),
            kind: match wants {
                Wants::YesNo => RequestKind::Approval,
                Wants::Text => RequestKind::Question,
            },
        })?;
        let (given, by) = self
            .terminal
            .race(self.approvals, &request_id, &question, wants)
            .await;
        let (answer, text) = match &given {
            Given::Answer(Answer::Yes) => (LogAnswer::Yes, None),
            Given::Answer(Answer::No) => (LogAnswer::No, None),
            Given::Text(text) => (LogAnswer::Yes, Some(text.clone())),
        };
        self.append(ApprovalAnswer {
            request_id,
            answer,
            by: by.to_owned(),
            text,
        })?;
        Ok(given)
    }

    /// A promise the session makes (restrict_self, or one replayed from the
    /// log): it narrows every later decision.
    pub(crate) fn restrict(&self, rules: Vec<Rule>) -> PromiseId {
        self.state.borrow_mut().policy.restrict(rules)
    }

    /// Leaves promise `id` when `approved` (policy.widen's answer).
    pub(crate) fn widen(
        &self,
        id: PromiseId,
        approved: bool,
    ) -> Result<(), chock_policy::WidenError> {
        self.state.borrow_mut().policy.widen(id, approved)
    }

    /// Whether promise `id` came from the parent session (a subagent's
    /// inherited promise, which nobody's yes can leave).
    pub(crate) fn inherited(&self, id: PromiseId) -> bool {
        self.state.borrow().policy.promises().contains(&(id, true))
    }

    /// A person's yes to request_action: `action` is allowed from now on.
    pub(crate) fn grant(&self, action: &str) {
        self.state.borrow_mut().grants.insert(action.to_owned());
    }

    /// The person's latest message, for the reviewer.
    pub(crate) fn set_task(&self, task: &str) {
        task.clone_into(&mut self.state.borrow_mut().task);
    }

    /// What the session's policy answers for `action` now, unrecorded.
    pub(crate) fn decision(&self, action: &Action) -> Decision {
        self.state.borrow().policy.decision(action)
    }

    /// Whether some rule of the session's policy could permit an action
    /// under `prefix`.
    pub(crate) fn could_permit(&self, prefix: &str) -> bool {
        self.state.borrow().policy.could_permit(prefix)
    }

    fn append(&self, body: impl Into<chock_log::event::EventBody>) -> Result<(), WriteError> {
        self.log.borrow_mut().append(body).map(drop)
    }
}

/// The layer's name in a `decision` event.
fn layer_name(layer: LayerKind) -> &'static str {
    match layer {
        LayerKind::Org => "org",
        LayerKind::Operator => "operator",
        LayerKind::Project => "project",
        LayerKind::Default => "default",
        LayerKind::Promise => "promise",
        LayerKind::None => "none",
    }
}

/// The `decision` event for a verdict, naming the rule that decided.
pub(crate) fn decision_event(verdict: &Verdict, call_id: Option<String>) -> LogDecision {
    LogDecision {
        action: verdict.action.clone(),
        decision: verdict.decision.as_str().to_owned(),
        layer: layer_name(verdict.layer).to_owned(),
        rule: verdict
            .rule
            .as_ref()
            .map(|rule| rule.text.clone())
            .unwrap_or_default(),
        call_id,
    }
}

/// Whether a grant turns `verdict` into allow: a question (ask or a
/// review) about an action the person granted, unless the org bundle or a
/// promise caps it (those are asked, or refused, every time).
fn granted(verdict: &Verdict, grants: &BTreeSet<String>) -> bool {
    let askable = matches!(
        verdict.decision,
        Decision::Ask | Decision::AgentReview | Decision::AgentThenHuman
    );
    let capped = matches!(verdict.layer, LayerKind::Org | LayerKind::Promise);
    askable && !capped && grants.contains(verdict.action.as_str())
}

/// The `decision` event of a grant.
fn grant_decision(action: &str, call_id: Option<String>) -> LogDecision {
    LogDecision {
        action: action.to_owned(),
        decision: Decision::Allow.as_str().to_owned(),
        layer: "grant".to_owned(),
        rule: "the person's yes to request_action".to_owned(),
        call_id,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A project policy with one allowed, one denied and one asked test
    /// host, and `net` in its `.policy` block.
    pub(crate) fn policy(net: &str) -> (tempfile::TempDir, Policy) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("chock.zon"),
            format!(
                ".{{ .policy = .{{ {net} .rules = .{{\n\
                 .{{ .action = \"net.connect.test.allowed\", .decision = .allow }},\n\
                 .{{ .action = \"net.connect.test.denied\", .decision = .deny }},\n\
                 .{{ .action = \"net.connect.test.asked\", .decision = .ask }},\n\
                 }} }} }}\n"
            ),
        )
        .unwrap();
        let policy = Policy::load(dir.path()).unwrap();
        (dir, policy)
    }

    #[test]
    fn a_grant_lifts_a_question_but_not_a_deny_nor_a_promise() {
        let (_dir, mut policy) = policy("");
        let grants: BTreeSet<String> = [
            "net.connect.test.asked",
            "net.connect.test.denied",
            "net.connect.test.allowed",
        ]
        .map(str::to_owned)
        .into();
        let decide =
            |policy: &Policy, host: &str| policy.decide(&Action::net_connect(host).unwrap());
        assert!(granted(&decide(&policy, "asked.test"), &grants));
        assert!(!granted(&decide(&policy, "denied.test"), &grants));
        assert!(!granted(&decide(&policy, "allowed.test"), &grants));
        // A promise that narrows allow to ask is asked every time.
        policy.restrict(vec![
            Rule::parse(Some("net.connect.test.allowed"), Decision::Ask).unwrap(),
        ]);
        let capped = decide(&policy, "allowed.test");
        assert_eq!(capped.decision, Decision::Ask);
        assert_eq!(capped.layer, LayerKind::Promise);
        assert!(!granted(&capped, &grants));
    }
}
