//! How a session decides its commands' connections and records their
//! background jobs: the records the command side (`chock_tools::net`)
//! sends are decided by the session's own fold of the policy (its promises
//! narrow it), its grants (a person's yes to request_action turns a question
//! into allow), the reviewer for `agent_review` and `agent_then_human`, and
//! a person through approve.sock for `ask`, all of it the session's one
//! judge (`crate::judge`), which the turn shares; the `decision` event is
//! written as for a tool call. A background command's connections never ask
//! and are never reviewed.

use std::cell::RefCell;

use chock_log::event::{BackgroundEnd, BackgroundStart};
use chock_log::{LogWriter, WriteError};
use chock_policy::{Action, Verdict};
use chock_sandbox::net::HostVerdict;
use chock_tools::net::Record;
use tokio::sync::mpsc;

use crate::judge::{Judge, Refusal, Subject};

/// Decides one connection's host through the session's judge, which
/// records the `decision` (and any `review` and question); `can_ask` is
/// false when the session is ending and nobody can be asked.
async fn decide(
    host: &str,
    background: bool,
    judge: &Judge<'_>,
    can_ask: bool,
) -> Result<HostVerdict, WriteError> {
    let action = match Action::net_connect(host) {
        Ok(action) => action,
        Err(err) => {
            return Ok(HostVerdict::Refuse(format!(
                "malformed host {host:?}: {err}"
            )));
        }
    };
    if let Some(text) = judge.stop(action.as_str(), None)? {
        return Ok(HostVerdict::Refuse(text));
    }
    let what = format!("a command the model runs (run_command) connects to {host}");
    let question = |verdict: &Verdict, reviewer_said: Option<&str>| {
        crate::approval::question(&what, verdict, reviewer_said)
    };
    let arguments = format!("a command connects to {host}");
    let subject = Subject {
        action: &action,
        tool: "run_command",
        arguments: &arguments,
        call_id: None,
        background,
        question: &question,
    };
    let judged = judge.decide(&subject, can_ask).await?;
    let verdict = &judged.verdict;
    let why = match judged.refusal {
        None => return Ok(HostVerdict::Allow),
        Some(Refusal::ReviewerSaidNo(reason)) => {
            return Ok(HostVerdict::Refuse(crate::approval::reviewer_refusal(
                verdict, &reason,
            )));
        }
        Some(Refusal::NotOutright) => format!(
            "a background command gets only what is allowed outright ({} here)",
            verdict.decision
        ),
        Some(Refusal::Denied) => format!("the policy answers {}", verdict.decision),
        Some(Refusal::PersonSaidNo) => "a person answered no".to_owned(),
        Some(Refusal::PersonSaidNoAfterReviewer) => {
            "a person answered no after the reviewer's yes".to_owned()
        }
        Some(Refusal::NobodyToAsk) => "the session is ending and nobody can be asked".to_owned(),
    };
    Ok(HostVerdict::Refuse(chock_sandbox::net::refusal(
        verdict, &why,
    )))
}

/// Decides one fetch of a Nix build provide_tool is about to run, at
/// `nix.net.<reversed host>` (`nix.net.build.opaque` for a build that names
/// no URL), through the session's judge like any other action.
async fn decide_nix_net(
    host: Option<&str>,
    what: &str,
    judge: &Judge<'_>,
    can_ask: bool,
) -> Result<HostVerdict, WriteError> {
    let action = match host {
        Some(host) => match Action::nix_net(host) {
            Ok(action) => action,
            Err(err) => {
                return Ok(HostVerdict::Refuse(format!(
                    "malformed host {host:?}: {err}"
                )));
            }
        },
        None => Action::nix_net_build_opaque(),
    };
    if let Some(text) = judge.stop(action.as_str(), None)? {
        return Ok(HostVerdict::Refuse(text));
    }
    let question = |verdict: &Verdict, reviewer_said: Option<&str>| {
        crate::approval::question(what, verdict, reviewer_said)
    };
    let subject = Subject {
        action: &action,
        tool: "provide_tool",
        arguments: what,
        call_id: None,
        background: false,
        question: &question,
    };
    let judged = judge.decide(&subject, can_ask).await?;
    Ok(match judged.refusal {
        None => HostVerdict::Allow,
        Some(refusal) => HostVerdict::Refuse(format!(
            "{} answers {} ({})",
            judged.verdict.action,
            judged.verdict.decision,
            refusal_text(&refusal)
        )),
    })
}

fn refusal_text(refusal: &Refusal) -> String {
    match refusal {
        Refusal::ReviewerSaidNo(reason) => format!("the reviewer said no: {reason}"),
        Refusal::NotOutright => "only what is allowed outright".to_owned(),
        Refusal::Denied => "the policy refuses it".to_owned(),
        Refusal::PersonSaidNo => "a person answered no".to_owned(),
        Refusal::PersonSaidNoAfterReviewer => {
            "a person answered no after the reviewer's yes".to_owned()
        }
        Refusal::NobodyToAsk => "nobody could be asked".to_owned(),
    }
}

/// Decides and appends every record as it comes; returns only when the log
/// cannot be written (or, never in a session, when every sender is gone).
/// Records are taken one at a time: a connection waiting on a person holds
/// the next one back, as a tool call's question holds the turn.
pub(crate) async fn record(
    records: &mut mpsc::UnboundedReceiver<Record>,
    log: &RefCell<LogWriter>,
    judge: &Judge<'_>,
) -> Result<(), WriteError> {
    while let Some(rec) = records.recv().await {
        apply(rec, log, judge, true).await?;
    }
    std::future::pending().await
}

/// Appends what is already queued, without waiting; a connection still
/// queued is decided without asking anyone (the session is ending).
pub(crate) async fn drain(
    records: &mut mpsc::UnboundedReceiver<Record>,
    log: &RefCell<LogWriter>,
    judge: &Judge<'_>,
) -> Result<(), WriteError> {
    while let Ok(rec) = records.try_recv() {
        apply(rec, log, judge, false).await?;
    }
    Ok(())
}

async fn apply(
    rec: Record,
    log: &RefCell<LogWriter>,
    judge: &Judge<'_>,
    can_ask: bool,
) -> Result<(), WriteError> {
    match rec {
        Record::Decide {
            host,
            background,
            reply,
        } => {
            let verdict = decide(&host, background, judge, can_ask).await?;
            let _ = reply.send(verdict);
        }
        Record::NixNet { host, what, reply } => {
            // A build's fetches are read before the build, as nix.build
            // itself is: only allow lets one happen, and nobody is asked.
            let verdict = decide_nix_net(host.as_deref(), &what, judge, false).await?;
            let _ = reply.send(verdict);
        }
        Record::JobStart {
            job_id,
            command,
            recorded,
        } => {
            log.borrow_mut().append(BackgroundStart {
                job_id,
                kind: "command".to_owned(),
                command,
            })?;
            let _ = recorded.send(());
        }
        Record::JobEnd {
            job_id,
            status,
            exit_code,
        } => {
            log.borrow_mut().append(BackgroundEnd {
                job_id,
                status,
                exit_code,
            })?;
        }
    }
    Ok(())
}
