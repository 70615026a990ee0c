//! `chock detach`'s library half: hand a running session to the daemon.
//!
//! Ownership is the log's lock, so there is no transfer protocol: the
//! session lets go at a turn boundary and the daemon's child takes the lock.
//! The order of the steps is what keeps a session from being stopped for
//! nothing (seeds 000, "Handing a session over"):
//!
//! 1. Every refusal that needs only the log comes first (an ended session,
//!    one whose process died), and asks nobody.
//! 2. The daemon is proved before the session is asked: `list` greets it
//!    (so a daemon speaking another protocol number is refused here) and
//!    shows that it sees this session and does not own it already.
//! 3. The ask goes over `handover.sock`; each read of the exchange is
//!    bounded by `--wait` on its own.
//! 4. At `ready` the daemon is proved again, and only then is `confirm`
//!    sent; a client that stops before this point leaves the session as it
//!    was.
//! 5. After the session says it let go, the daemon's `adopt` runs its child.
//!    A daemon that vanished in that moment is reported by name, with
//!    `chock run --continue` as the way back.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use chock_control::handover::{HandoverClient, HandoverError, Holdings, SessionLine};
use chock_control::{Address, Client, ClientError};
use chock_log::event::EndReason;
use chock_log::fold::Status;
use chock_log::{FindError, ReadError, SessionId, StateDir, fold_log, list_sessions};

use super::progress::{LogTail, Progress, Stage};

/// How often the progress report is refreshed while a read waits.
const TICK: Duration = Duration::from_secs(1);
/// The most a proof of the daemon may take: it must fit well inside the
/// session's wait for the confirm.
const PROVE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long `adopt` may take: the daemon waits up to 30 s for its child.
const ADOPT_TIMEOUT: Duration = Duration::from_secs(60);
/// How long the session's lock may take to be released after it said so.
const RELEASE_TIMEOUT: Duration = Duration::from_secs(10);

/// One `chock detach`.
#[derive(Debug, Clone)]
pub struct DetachOptions {
    pub state: StateDir,
    /// The session; `None` means the newest session of `project`.
    pub session: Option<String>,
    /// The directory `chock detach` runs in, for the newest session.
    pub project: PathBuf,
    pub daemon: Address,
    /// Bounds each read of the exchange on its own.
    pub wait: Duration,
}

/// A session the daemon carries on now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detached {
    pub session: SessionId,
    pub address: Address,
    /// The log, as the daemon names it.
    pub log: String,
    /// Whether the session was asked (false when its log already ended
    /// with a handover nobody took, and only the adopt was left to do).
    pub asked: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum DetachError {
    #[error(transparent)]
    Find(#[from] FindError),
    #[error(
        "no session of the project {} to hand over: name one (`chock detach <session id>`, ids from `chock sessions`)",
        project.display()
    )]
    NoSession { project: PathBuf },
    #[error(transparent)]
    Read(#[from] ReadError),
    #[error(
        "session {session} has ended (done): there is nothing to hand over; give it a next message with `chock run --continue {session} \"...\"`"
    )]
    Done { session: String },
    #[error(
        "session {session} {how}, so it is not handed over; it keeps its workspace {workspace}: look at the work with `chock workspace show {session}`, carry it on with `chock run --continue {session}`, or remove it with `chock workspace discard {session}`"
    )]
    Abnormal {
        session: String,
        how: String,
        workspace: String,
    },
    #[error(
        "session {session} is already owned by the daemon at {address} (its child, process {pid}): there is nothing to hand over; follow it with `chock log -f {session}`"
    )]
    OwnedByDaemon {
        session: String,
        address: Address,
        pid: u64,
    },
    #[error("session {session} was not asked and carries on: {error}")]
    Daemon { session: String, error: ClientError },
    #[error(
        "the daemon at {address} does not see session {session} (it keeps its sessions in another state directory): name the daemon of {} with --daemon, or start one there with `chock daemon`; the session was not asked and carries on",
        state.display()
    )]
    Unseen {
        session: String,
        address: Address,
        state: PathBuf,
    },
    #[error("cannot ask session {session} to hand over: {error}")]
    Ask {
        session: String,
        error: HandoverError,
    },
    #[error("session {session} refused the handover: {message}")]
    Refused { session: String, message: String },
    #[error(
        "session {session} did not {what} within {seconds} s ({doing}{holding}): it keeps running, unchanged; run `chock detach {session}` again, or give --wait more seconds"
    )]
    Timeout {
        session: String,
        what: &'static str,
        seconds: u64,
        doing: String,
        holding: String,
    },
    #[error(
        "session {session} ended ({how}) before a turn boundary it could hand over at: nothing was handed over"
    )]
    EndedWhileAsked { session: String, how: String },
    #[error(
        "the exchange with session {session} failed ({error}): nothing was handed over; `chock sessions` shows how it stands"
    )]
    Lost {
        session: String,
        error: HandoverError,
    },
    #[error(
        "the daemon at {address} went away while session {session} was being asked ({error}): the handover was not confirmed, so the session carries on here, unchanged; start the daemon and run `chock detach {session}` again"
    )]
    DaemonGone {
        session: String,
        address: Address,
        error: ClientError,
    },
    #[error(
        "session {session} was told to hand over but did not say it let go ({why}); `chock log {session}` shows how it stands: when it ends with a handover, `chock detach {session}` again gives it to the daemon, or take it back with `chock run --continue {session}`"
    )]
    Unconfirmed { session: String, why: String },
    #[error(
        "session {session} has handed itself over, but the daemon at {address} did not take it ({error}): take it back with `chock run --continue {session}`, or run `chock detach {session}` again once a daemon is listening"
    )]
    AdoptFailed {
        session: String,
        address: Address,
        error: ClientError,
    },
    #[error(
        "session {session} has handed itself over, but process {pid} took it before the daemon at {address} could: it carries on in that process, not in the daemon; follow it with `chock log -f {session}`, and hand it over from there with `chock detach {session}` if you meant to"
    )]
    TakenElsewhere {
        session: String,
        address: Address,
        pid: u32,
    },
    #[error("cannot start a runtime for the handover: {0}")]
    Runtime(std::io::Error),
}

/// Hands the session over, reporting progress to `on_progress` while it
/// waits. Runs on its own `current_thread` runtime.
pub fn detach(
    options: &DetachOptions,
    on_progress: impl FnMut(&Progress),
) -> Result<Detached, DetachError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(DetachError::Runtime)?;
    runtime.block_on(detach_async(options, on_progress))
}

async fn detach_async(
    options: &DetachOptions,
    mut on_progress: impl FnMut(&Progress),
) -> Result<Detached, DetachError> {
    let (id, log) = resolve(options)?;
    let session = id.as_str().to_owned();
    let folded = fold_log(&log)?;
    let owned = chock_log::locks::is_owned(&log).unwrap_or(true);
    let workspace = folded.state.workspace.as_ref().map_or_else(
        || "(none recorded)".to_owned(),
        |w| w.dir.display().to_string(),
    );
    let handed_unclaimed = match &folded.state.status {
        Status::Ended {
            reason: EndReason::Handover,
            ..
        } => !owned,
        Status::Ended {
            reason: EndReason::Done,
            ..
        } => return Err(DetachError::Done { session }),
        Status::Ended { reason, detail } => {
            return Err(DetachError::Abnormal {
                how: if detail.is_empty() {
                    format!("ended ({})", reason.as_str())
                } else {
                    format!("ended ({}: {detail})", reason.as_str())
                },
                session,
                workspace,
            });
        }
        _ if !owned => {
            return Err(DetachError::Abnormal {
                session,
                how: "stopped without writing an ending (no process holds its log)".to_owned(),
                workspace,
            });
        }
        _ => false,
    };
    let project = folded
        .state
        .project
        .clone()
        .unwrap_or_else(|| options.project.clone());
    let client = Client::new(options.daemon.clone());
    prove(&client, &options.state, &project, &id).await?;
    if !handed_unclaimed {
        exchange(options, &client, &id, &log, &mut on_progress).await?;
    }
    on_progress(&Progress {
        stage: Stage::Adopting,
        doing: "it let go of its log".to_owned(),
        holding: Holdings::default(),
        left: ADOPT_TIMEOUT,
    });
    let adopted = client
        .clone()
        .with_timeout(ADOPT_TIMEOUT)
        .adopt(&project, &session)
        .await;
    match adopted {
        Ok(adopted) => Ok(Detached {
            session: id,
            address: options.daemon.clone(),
            log: adopted.log,
            asked: !handed_unclaimed,
        }),
        Err(error) => match adopt_failed(&client, &project, &id, &log, error).await {
            // Another adopt gave it to the daemon first: it is the daemon's.
            None => Ok(Detached {
                session: id,
                address: options.daemon.clone(),
                log: log.display().to_string(),
                asked: !handed_unclaimed,
            }),
            Some(err) => Err(err),
        },
    }
}

/// What happened when the daemon's adopt did not answer ok: the lock says
/// who holds the session now, and the daemon's row says whether that is
/// its own child (another adopt got there first: `None`, the daemon has
/// it), so the report names where the session carries on.
async fn adopt_failed(
    client: &Client,
    project: &Path,
    id: &SessionId,
    log: &Path,
    error: ClientError,
) -> Option<DetachError> {
    let session = id.as_str().to_owned();
    let holder = chock_log::locks::owner_pid(log)
        .ok()
        .flatten()
        .or_else(|| next_owner(log));
    if let Some(pid) = holder {
        let daemons = client
            .clone()
            .with_timeout(PROVE_TIMEOUT)
            .list(project)
            .await
            .ok()
            .and_then(|rows| {
                rows.iter()
                    .map(chock_control::RowLine::value)
                    .find(|r| r["id"].as_str() == Some(id.as_str()))
            })
            .and_then(|r| r["child"]["pid"].as_u64())
            .is_some_and(|child| child == u64::from(pid));
        return (!daemons).then(|| DetachError::TakenElsewhere {
            session,
            address: client.address().clone(),
            pid,
        });
    }
    Some(DetachError::AdoptFailed {
        session,
        address: client.address().clone(),
        error,
    })
}

/// The process that opened the log after its last handover ending (from
/// its `session.open`), whether or not it still holds it.
fn next_owner(log: &Path) -> Option<u32> {
    let batch = chock_log::read_after(log, chock_log::EventId(0)).ok()?;
    let events: Vec<chock_log::Event> = batch
        .events
        .iter()
        .filter_map(|raw| chock_log::Event::parse(raw.line.as_bytes()).ok())
        .collect();
    let handed = events.iter().rposition(|e| {
        matches!(&e.body, chock_log::EventBody::SessionEnd(end) if end.reason == EndReason::Handover)
    })?;
    events[handed..].iter().find_map(|e| match &e.body {
        chock_log::EventBody::SessionOpen(open) => Some(open.pid),
        _ => None,
    })
}

fn resolve(options: &DetachOptions) -> Result<(SessionId, PathBuf), DetachError> {
    match &options.session {
        Some(text) => Ok(options.state.find_session(text)?),
        None => {
            let newest = list_sessions(&options.state, Some(&options.project))
                .sessions
                .into_iter()
                .next()
                .map(|listed| listed.id)
                .ok_or_else(|| DetachError::NoSession {
                    project: options.project.clone(),
                })?;
            let log = options.state.log_path(&newest);
            Ok((newest, log))
        }
    }
}

/// Proves the daemon is there, speaks our protocol, sees the session and
/// does not own it already. Nothing has been asked yet.
async fn prove(
    client: &Client,
    state: &StateDir,
    project: &Path,
    id: &SessionId,
) -> Result<(), DetachError> {
    let session = id.as_str().to_owned();
    let rows = client
        .clone()
        .with_timeout(PROVE_TIMEOUT)
        .list(project)
        .await
        .map_err(|source| DetachError::Daemon {
            session: session.clone(),
            error: source,
        })?;
    let row = rows
        .iter()
        .map(chock_control::RowLine::value)
        .find(|r| r["id"].as_str() == Some(id.as_str()))
        .ok_or_else(|| DetachError::Unseen {
            session: session.clone(),
            address: client.address().clone(),
            state: state.root().to_owned(),
        })?;
    let child = &row["child"];
    if let Some(pid) = child["pid"].as_u64()
        && child.get("ended").is_none_or(serde_json::Value::is_null)
    {
        return Err(DetachError::OwnedByDaemon {
            session,
            address: client.address().clone(),
            pid,
        });
    }
    Ok(())
}

/// The exchange over handover.sock, up to the session saying it let go.
async fn exchange(
    options: &DetachOptions,
    client: &Client,
    id: &SessionId,
    log: &Path,
    on_progress: &mut impl FnMut(&Progress),
) -> Result<(), DetachError> {
    let session = id.as_str().to_owned();
    let mut tail = LogTail::new(log.to_owned());
    let mut conn = HandoverClient::ask(&options.state.handover_socket(id))
        .await
        .map_err(|source| DetachError::Ask {
            session: session.clone(),
            error: source,
        })?;
    let mut stage = Stage::Boundary;
    let mut holding = Holdings::default();
    loop {
        let line = read(
            &mut conn,
            options.wait,
            &mut tail,
            stage,
            holding,
            on_progress,
        )
        .await;
        match line {
            Ok(SessionLine::Holding(held)) => {
                holding = held;
                stage = Stage::Background;
            }
            Ok(SessionLine::Ready { .. }) => break,
            Ok(SessionLine::HandedOver { .. }) => {
                return Err(DetachError::Unconfirmed {
                    session,
                    why: "it said it let go before it was confirmed".to_owned(),
                });
            }
            Ok(SessionLine::Error(message)) => {
                return Err(DetachError::Refused { session, message });
            }
            Err(HandoverError::Timeout { seconds, .. }) => {
                tail.refresh();
                return Err(DetachError::Timeout {
                    session,
                    what: match stage {
                        Stage::Background => "finish its background work",
                        _ => "reach a turn boundary",
                    },
                    seconds,
                    doing: tail.doing(),
                    holding: held_text(holding, &tail),
                });
            }
            Err(HandoverError::Closed { .. }) => {
                return Err(ended_while_asked(session, log));
            }
            Err(source) => {
                return Err(DetachError::Lost {
                    session,
                    error: source,
                });
            }
        }
    }
    confirm(
        options,
        client,
        session.clone(),
        conn,
        &mut tail,
        on_progress,
    )
    .await?;
    released(log, session, client.address()).await
}

/// The second round trip: proves the daemon is there once more, confirms,
/// and reads the session's word that it let go.
async fn confirm(
    options: &DetachOptions,
    client: &Client,
    session: String,
    mut conn: HandoverClient,
    tail: &mut LogTail,
    on_progress: &mut impl FnMut(&Progress),
) -> Result<(), DetachError> {
    tail.refresh();
    on_progress(&Progress {
        stage: Stage::Confirming,
        doing: tail.doing(),
        holding: Holdings::default(),
        left: PROVE_TIMEOUT,
    });
    // Proved again at the last moment: after the confirm the session ends,
    // and a daemon found gone afterwards would leave it stopped for nothing.
    if let Err(source) = client.clone().with_timeout(PROVE_TIMEOUT).ping().await {
        return Err(DetachError::DaemonGone {
            session,
            address: client.address().clone(),
            error: source,
        });
    }
    let unconfirmed = |why: String| DetachError::Unconfirmed {
        session: session.clone(),
        why,
    };
    conn.confirm()
        .await
        .map_err(|err| unconfirmed(err.to_string()))?;
    match conn.next(options.wait).await {
        Ok(SessionLine::HandedOver { .. }) => Ok(()),
        Ok(SessionLine::Error(message)) => Err(unconfirmed(message)),
        Ok(other) => Err(unconfirmed(format!("it answered {other:?}"))),
        Err(err) => Err(unconfirmed(err.to_string())),
    }
}

/// The log is the proof, not the socket: only a durable handover ending
/// counts, and the lock must be free before the daemon can take it.
async fn released(log: &Path, session: String, address: &Address) -> Result<(), DetachError> {
    let unconfirmed = |why: String| DetachError::Unconfirmed {
        session: session.clone(),
        why,
    };
    let folded = fold_log(log)?;
    if !matches!(
        folded.state.status,
        Status::Ended {
            reason: EndReason::Handover,
            ..
        }
    ) {
        // It did let go, and another process opened the log straight after.
        if let Some(pid) = next_owner(log) {
            return Err(DetachError::TakenElsewhere {
                session,
                address: address.clone(),
                pid,
            });
        }
        return Err(unconfirmed(
            "its log does not end with a handover".to_owned(),
        ));
    }
    let released = Instant::now() + RELEASE_TIMEOUT;
    while chock_log::locks::is_owned(log).unwrap_or(false) {
        if Instant::now() >= released {
            return Err(unconfirmed(format!(
                "its log is still locked {} s after it said it let go",
                RELEASE_TIMEOUT.as_secs()
            )));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

/// One read of the exchange, bounded by `wait`, reporting progress each
/// second while it waits.
async fn read(
    conn: &mut HandoverClient,
    wait: Duration,
    tail: &mut LogTail,
    stage: Stage,
    holding: Holdings,
    on_progress: &mut impl FnMut(&Progress),
) -> Result<SessionLine, HandoverError> {
    let started = Instant::now();
    let next = conn.next(wait);
    tokio::pin!(next);
    let mut ticks = tokio::time::interval(TICK);
    loop {
        tokio::select! {
            line = &mut next => return line,
            _ = ticks.tick() => {
                tail.refresh();
                on_progress(&Progress {
                    stage,
                    doing: tail.doing(),
                    holding,
                    left: wait.saturating_sub(started.elapsed()),
                });
            }
        }
    }
}

fn held_text(said: Holdings, tail: &LogTail) -> String {
    let from_log = super::count(&tail.state().background);
    let held = if from_log.is_empty() { said } else { from_log };
    if held.is_empty() {
        "; it holds no background work".to_owned()
    } else {
        format!("; it still holds {held}")
    }
}

fn ended_while_asked(session: String, log: &Path) -> DetachError {
    let how = match fold_log(log).map(|f| f.state.status) {
        Ok(Status::Ended { reason, .. }) => reason.as_str().to_owned(),
        _ => "its handover socket closed".to_owned(),
    };
    DetachError::EndedWhileAsked { session, how }
}
