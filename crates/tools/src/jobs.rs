//! Background commands: `run_command` with `"background": true` starts the
//! command and answers at once with a job id; `job_output` reads what the
//! job has printed so far and whether it ended; serve_port publishes a port
//! a job listens on. Each job is a task on the session's runtime that owns
//! its sandbox, drains its output into a bounded tail, and, when the
//! command ends or the session kills it, sends a `background.end` record.
//!
//! A job keeps the *last* [`JOB_KEEP`] bytes of each stream rather than the
//! first: a dev server or a watcher prints for as long as it runs, and what
//! it printed lately is what the model asks about. What `job_output` hands
//! back is a tool result, so the log keeps every read of it, bounded.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use chock_sandbox::net::{Published, RouterLink};
use chock_sandbox::{ExitStatus, SandboxChild};
use tokio::io::AsyncReadExt;
use tokio::io::unix::AsyncFd;
use tokio::net::unix::pipe;
use tokio::sync::{oneshot, watch};

use super::pidfd::{PidFd, wait_exit};
use super::{ToolError, ToolOutput};
use crate::net::{Record, Records, RouterTask};

/// Background jobs one session may run at once.
pub(crate) const MAX_JOBS: usize = 8;
/// Bytes of each stream a job keeps: the latest ones.
pub(crate) const JOB_KEEP: usize = 64 * 1024;
/// The longest `wait_secs` job_output takes.
pub(crate) const MAX_WAIT_SECS: u64 = 600;
/// How long the session waits for a killed job to be reaped at its end.
const REAP_DEADLINE: Duration = Duration::from_secs(10);

/// The latest bytes of one stream.
#[derive(Debug, Default)]
struct Tail {
    bytes: Vec<u8>,
    dropped: u64,
}

impl Tail {
    fn push(&mut self, data: &[u8]) {
        self.bytes.extend_from_slice(data);
        if self.bytes.len() > JOB_KEEP {
            let cut = self.bytes.len() - JOB_KEEP;
            self.bytes.drain(..cut);
            self.dropped += cut as u64;
        }
    }

    fn text(&self, name: &str) -> String {
        let text = String::from_utf8_lossy(&self.bytes);
        if self.dropped == 0 {
            text.into_owned()
        } else {
            format!(
                "[{} earlier bytes of {name} were not kept]\n{text}",
                self.dropped
            )
        }
    }
}

/// How a job ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    Exited(ExitStatus),
    /// Killed by the session (its end) or lost (waiting failed).
    Killed,
}

#[derive(Debug, Default)]
struct JobState {
    stdout: Tail,
    stderr: Tail,
    ended: Option<Ended>,
    published: Option<Published>,
}

/// One background job, as the session sees it.
#[derive(Debug)]
struct Job {
    id: String,
    command: String,
    state: Arc<Mutex<JobState>>,
    link: Option<Arc<RouterLink>>,
    kill: Option<oneshot::Sender<()>>,
    done: watch::Receiver<bool>,
    task: Option<tokio::task::JoinHandle<()>>,
}

fn lock(state: &Mutex<JobState>) -> MutexGuard<'_, JobState> {
    // A panic while holding the lock leaves only output behind: keep going.
    state
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The session's background jobs.
#[derive(Debug, Default)]
pub(crate) struct Jobs {
    next: u32,
    jobs: Vec<Job>,
}

impl Jobs {
    fn running(&self) -> usize {
        self.jobs
            .iter()
            .filter(|job| lock(&job.state).ended.is_none())
            .count()
    }

    /// Starts watching `child`; answers the tool result the model reads,
    /// and what is answered once the start is in the log (`None` where
    /// nothing records it).
    pub(super) fn start(
        &mut self,
        mut child: SandboxChild,
        command: String,
        link: Option<Arc<RouterLink>>,
        router: Option<RouterTask>,
        records: Option<Records>,
    ) -> (ToolOutput, Option<oneshot::Receiver<()>>) {
        if self.running() >= MAX_JOBS {
            let _ = child.kill();
            let refused = ToolOutput::error(format!(
                "not started: this session already runs {MAX_JOBS} background jobs, the most it may; \
                 wait for one to end (job_output with wait_secs) first"
            ));
            return (refused, None);
        }
        self.next += 1;
        let id = self.next.to_string();
        let state = Arc::new(Mutex::new(JobState::default()));
        let (kill, killed) = oneshot::channel();
        let (done_tx, done) = watch::channel(false);
        let recorded = records.as_ref().map(|records| {
            let (recorded, is_recorded) = oneshot::channel();
            let _ = records.send(Record::JobStart {
                job_id: id.clone(),
                command: command.clone(),
                recorded,
            });
            is_recorded
        });
        let task = tokio::spawn(watch_job(
            child,
            Arc::clone(&state),
            killed,
            router,
            records,
            id.clone(),
            done_tx,
        ));
        self.jobs.push(Job {
            id: id.clone(),
            command,
            state,
            link,
            kill: Some(kill),
            done,
            task: Some(task),
        });
        let started = ToolOutput::ok(format!(
            "started background job {id}; read its output with job_output {{\"job\": \"{id}\"}}. \
             It is killed when the session ends. Its connections get only what the policy allows outright."
        ));
        (started, recorded)
    }

    /// The job's output and status, after waiting up to `wait_secs`.
    pub(super) fn output_of(
        &self,
        args: &crate::job_output::Args,
    ) -> Result<(watch::Receiver<bool>, Duration), ToolError> {
        let job = self.find(&args.job)?;
        if args.wait_secs > Some(MAX_WAIT_SECS) {
            return Err(ToolError::Arguments {
                tool: "job_output",
                detail: format!("wait_secs must be at most {MAX_WAIT_SECS}"),
            });
        }
        Ok((
            job.done.clone(),
            Duration::from_secs(args.wait_secs.unwrap_or(0)),
        ))
    }

    /// The report job_output gives for `id` (which [`Self::output_of`]
    /// found).
    pub(super) fn report(&self, id: &str) -> Result<ToolOutput, ToolError> {
        let job = self.find(id)?;
        let state = lock(&job.state);
        let head = match state.ended {
            None => "running".to_owned(),
            Some(Ended::Exited(status)) => format!("ended: {status}"),
            Some(Ended::Killed) => "ended: killed by the session".to_owned(),
        };
        Ok(ToolOutput::ok(format!(
            "job {} ({}): {head}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            job.id,
            job.command,
            state.stdout.text("stdout"),
            state.stderr.text("stderr")
        )))
    }

    fn find(&self, id: &str) -> Result<&Job, ToolError> {
        self.jobs.iter().find(|job| job.id == id).ok_or_else(|| {
            let known: Vec<&str> = self.jobs.iter().map(|job| job.id.as_str()).collect();
            ToolError::Failed(if known.is_empty() {
                format!(
                    "there is no job {id:?}: no background job was started; run_command with \"background\": true starts one"
                )
            } else {
                format!("there is no job {id:?}; the jobs are: {}", known.join(", "))
            })
        })
    }

    /// Publishes `port` of the job named (or the latest running one).
    pub(super) fn publish(&self, port: u16, job: Option<&str>) -> Result<String, ToolError> {
        let job = match job {
            Some(id) => self.find(id)?,
            None => self
                .jobs
                .iter()
                .rev()
                .find(|job| lock(&job.state).ended.is_none())
                .ok_or_else(|| {
                    ToolError::Failed(
                        "no background job is running: start the server with run_command and \"background\": true, \
                         wait until it listens, then call serve_port"
                            .to_owned(),
                    )
                })?,
        };
        let Some(link) = &job.link else {
            return Err(ToolError::Failed(format!(
                "job {} has no network namespace of its own to publish from (the sandbox runs degraded here)",
                job.id
            )));
        };
        let mut state = lock(&job.state);
        if state.ended.is_some() {
            return Err(ToolError::Failed(format!(
                "job {} has ended; start the server again in the background, then call serve_port",
                job.id
            )));
        }
        state
            .published
            .get_or_insert_with(|| Published::new(Arc::clone(link)))
            .publish(port)
            .map_err(|err| ToolError::Failed(err.to_string()))?;
        Ok(format!(
            "published: http://127.0.0.1:{port}/ on the person's machine now reaches port {port} on job {}'s loopback \
             (only 127.0.0.1; closed when the job ends)",
            job.id
        ))
    }

    /// Kills every job still running and waits (bounded) until each is
    /// reaped and its end recorded.
    pub(crate) async fn finish(&mut self) {
        let mut tasks = Vec::new();
        for job in &mut self.jobs {
            if let Some(kill) = job.kill.take() {
                let _ = kill.send(());
            }
            if let Some(task) = job.task.take() {
                tasks.push(task);
            }
        }
        for task in tasks {
            if tokio::time::timeout(REAP_DEADLINE, task).await.is_err() {
                tracing::warn!("a background job was not reaped in time");
            }
        }
    }
}

/// Owns one job to its end.
async fn watch_job(
    mut child: SandboxChild,
    state: Arc<Mutex<JobState>>,
    killed: oneshot::Receiver<()>,
    router: Option<RouterTask>,
    records: Option<Records>,
    id: String,
    done: watch::Sender<bool>,
) {
    let ended = match run_job(&mut child, &state, killed).await {
        Some(ended) => ended,
        None => {
            let _ = child.kill();
            Ended::Killed
        }
    };
    drop(router);
    {
        let mut state = lock(&state);
        state.ended = Some(ended);
        state.published = None;
    }
    let _ = done.send(true);
    let (status, exit_code) = match ended {
        Ended::Exited(status) if status.success() => ("done", status.code()),
        Ended::Exited(status) => ("failed", status.code()),
        Ended::Killed => ("killed", None),
    };
    if let Some(records) = records {
        let _ = records.send(Record::JobEnd {
            job_id: id,
            status: status.to_owned(),
            exit_code,
        });
    }
}

async fn run_job(
    child: &mut SandboxChild,
    state: &Mutex<JobState>,
    killed: oneshot::Receiver<()>,
) -> Option<Ended> {
    let stdout = child
        .stdout
        .take()
        .and_then(|fd| pipe::Receiver::from_owned_fd(fd).ok());
    let stderr = child
        .stderr
        .take()
        .and_then(|fd| pipe::Receiver::from_owned_fd(fd).ok());
    #[expect(
        deprecated,
        reason = "the pidfd outlives the registration: PidFd borrows its owner"
    )]
    let mut pidfd = match AsyncFd::new(PidFd(child)) {
        Ok(pidfd) => pidfd,
        Err(err) => {
            tracing::warn!("cannot wait for a background job: {err}");
            return None;
        }
    };
    let finished = {
        let work = async {
            let ((), (), status) = tokio::join!(
                drain(stdout, state, true),
                drain(stderr, state, false),
                wait_exit(&mut pidfd)
            );
            status
        };
        tokio::select! {
            status = work => Some(status),
            _ = killed => None,
        }
    };
    Some(match finished {
        Some(Ok(status)) => Ended::Exited(status),
        Some(Err(err)) => {
            tracing::warn!("waiting for a background job failed: {err}");
            let _ = pidfd.get_mut().0.kill();
            Ended::Killed
        }
        None => {
            // Killing pid 1 takes the whole pid namespace with it.
            let _ = pidfd.get_mut().0.kill();
            let _ = wait_exit(&mut pidfd).await;
            Ended::Killed
        }
    })
}

async fn drain(stream: Option<pipe::Receiver>, state: &Mutex<JobState>, stdout: bool) {
    let Some(mut stream) = stream else { return };
    let mut buf = vec![0u8; 16 * 1024];
    while let Ok(n) = stream.read(&mut buf).await {
        if n == 0 {
            break;
        }
        let mut state = lock(state);
        if stdout {
            state.stdout.push(&buf[..n]);
        } else {
            state.stderr.push(&buf[..n]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tail_keeps_the_latest_bytes_and_counts_the_rest() {
        let mut tail = Tail::default();
        tail.push(&vec![b'a'; JOB_KEEP]);
        tail.push(b"zz");
        assert_eq!(tail.bytes.len(), JOB_KEEP);
        assert_eq!(tail.dropped, 2);
        assert!(tail.bytes.ends_with(b"azz"));
        assert!(
            tail.text("stdout")
                .starts_with("[2 earlier bytes of stdout were not kept]\n")
        );
    }
}
