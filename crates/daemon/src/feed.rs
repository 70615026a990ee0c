//! One follower per watched session, shared by all of its watchers.
//!
//! A feed is a `chock_log::Follower` that reads the log's new lines once and
//! broadcasts them, so a hundred watchers cost one reader. It wakes on the
//! follower's inotify descriptor (registered with tokio) and on a slow tick
//! (which also notices a session whose owner vanished without an ending),
//! and it ends when the session ends, when the log has no owner, or when its
//! last watcher leaves. Watchers never trust the feed alone: each reads the
//! log after subscribing, and skips broadcast ids it already sent, which is
//! what makes a watch gap-free and repeat-free.

use std::collections::HashMap;
use std::os::fd::{AsRawFd, RawFd};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chock_log::{EventId, Follower};
use tokio::io::unix::AsyncFd;
use tokio::sync::broadcast;

use crate::store::{self, LogEvent};

/// How many events a slow watcher may fall behind before it re-reads the log.
const CAPACITY: usize = 1024;
/// How often a feed checks, without inotify's nudge, for appends and an owner.
const TICK: Duration = Duration::from_millis(250);
/// The tick when the follower has no inotify descriptor and polls.
const POLL: Duration = Duration::from_millis(20);

type Sender = broadcast::Sender<Arc<LogEvent>>;

#[derive(Debug, Default)]
pub(crate) struct Feeds {
    map: Mutex<HashMap<String, Sender>>,
}

impl Feeds {
    /// A receiver for the session's appends from now on, starting a feed if
    /// none runs. Closed when the feed ends.
    pub(crate) fn subscribe(
        self: &Arc<Self>,
        session: &str,
        path: &Path,
    ) -> broadcast::Receiver<Arc<LogEvent>> {
        let mut map = self.lock();
        if let Some(tx) = map.get(session) {
            return tx.subscribe();
        }
        // The follower starts after the last event there now, before the
        // caller reads the log itself: an append in between is in one or
        // the other.
        let follower = store::last_id(path)
            .and_then(|last| Follower::new(path, EventId(last)))
            .map_err(
                |err| tracing::warn!(path = %path.display(), %err, "cannot follow the session log"),
            )
            .ok();
        let (tx, rx) = broadcast::channel(CAPACITY);
        let Some(follower) = follower else {
            // No feed: the receiver closes at once and the watcher reads the
            // log itself, which reports the error.
            return rx;
        };
        map.insert(session.to_owned(), tx.clone());
        drop(map);
        let feeds = Arc::clone(self);
        let session = session.to_owned();
        let path = path.to_owned();
        tokio::spawn(async move {
            run(follower, &path, &tx).await;
            let mut map = feeds.lock();
            if map
                .get(&session)
                .is_some_and(|current| current.same_channel(&tx))
            {
                map.remove(&session);
            }
        });
        rx
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Sender>> {
        self.map
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The follower's inotify descriptor, borrowed for tokio's reactor.
struct Borrowed(RawFd);

impl AsRawFd for Borrowed {
    fn as_raw_fd(&self) -> RawFd {
        self.0
    }
}

async fn run(mut follower: Follower, path: &Path, tx: &Sender) {
    let notify = follower.as_fd().and_then(|fd| {
        // SAFETY: the descriptor is owned by `follower`, which is a parameter
        // of this function and so is dropped after `notify`, a local; it is
        // never closed or replaced while the follower lives.
        #[expect(
            unsafe_code,
            reason = "tokio's registration asks the caller to vouch for the descriptor"
        )]
        let registered = unsafe { AsyncFd::register(Borrowed(fd.as_raw_fd())) };
        registered.ok()
    });
    let tick = if notify.is_some() { TICK } else { POLL };
    let mut quiet = Duration::ZERO;
    loop {
        let woke = match &notify {
            Some(fd) => tokio::select! {
                ready = fd.readable() => {
                    // `try_next` drains the descriptor itself.
                    if let Ok(mut guard) = ready {
                        guard.clear_ready();
                    }
                    true
                }
                () = tokio::time::sleep(tick) => false,
            },
            None => {
                tokio::time::sleep(tick).await;
                false
            }
        };
        let Ok(events) = follower.try_next() else {
            return;
        };
        for problem in follower.take_problems() {
            tracing::warn!(path = %path.display(), %problem, "session log");
        }
        let fresh = !events.is_empty();
        for raw in events {
            let Some(event) = store::parse_event(&raw.line) else {
                continue;
            };
            let last = event.head.ends_session();
            // No receivers is not an error: the check below ends the feed.
            let _ = tx.send(Arc::new(event));
            if last {
                return;
            }
        }
        if tx.receiver_count() == 0 {
            return;
        }
        quiet = if fresh || woke {
            Duration::ZERO
        } else {
            quiet + tick
        };
        // Every second of quiet, ask whether anyone still holds the log.
        if quiet >= Duration::from_secs(1) {
            quiet = Duration::ZERO;
            if !store::is_owned(path) {
                return;
            }
        }
    }
}
