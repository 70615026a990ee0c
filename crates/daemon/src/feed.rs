//! One follower per watched session, shared by all of its watchers.
//!
//! A feed reads the log's new lines once and broadcasts them, so a hundred
//! watchers cost one reader. It wakes on inotify and on a slow tick (the
//! tick also notices a session whose owner vanished without an ending), and
//! it ends when the session ends, when the log has no owner, or when its
//! last watcher leaves. Watchers never trust the feed alone: each reads the
//! log after subscribing, and skips broadcast ids it already sent, which is
//! what makes a watch gap-free and repeat-free.

use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::unix::AsyncFd;
use tokio::sync::broadcast;

use crate::store::{self, LogEvent};

/// How many events a slow watcher may fall behind before it re-reads the log.
const CAPACITY: usize = 1024;
/// How often a feed checks, without inotify's nudge, for appends and an owner.
const TICK: Duration = Duration::from_millis(250);
/// The tick when inotify is not available.
const POLL: Duration = Duration::from_millis(20);

#[derive(Debug, Default)]
pub(crate) struct Feeds {
    map: Mutex<HashMap<String, broadcast::Sender<Arc<LogEvent>>>>,
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
        // The feed starts at the end of what is there now, before the caller
        // reads the log itself: an append in between is in one or the other.
        let offset = store::end_offset(path).unwrap_or(0);
        let (tx, rx) = broadcast::channel(CAPACITY);
        map.insert(session.to_owned(), tx.clone());
        drop(map);
        let feeds = Arc::clone(self);
        let session = session.to_owned();
        let path = path.to_owned();
        tokio::spawn(async move {
            run(&path, offset, &tx).await;
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

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, broadcast::Sender<Arc<LogEvent>>>> {
        self.map
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

async fn run(path: &Path, mut offset: u64, tx: &broadcast::Sender<Arc<LogEvent>>) {
    let notify = Inotify::watch(path);
    let tick = if notify.is_some() { TICK } else { POLL };
    let mut quiet = 0u32;
    loop {
        let woke = match &notify {
            Some(notify) => tokio::select! {
                () = notify.readable() => true,
                () = tokio::time::sleep(tick) => false,
            },
            None => {
                tokio::time::sleep(tick).await;
                false
            }
        };
        let Ok((events, next)) = store::read_from(path, offset) else {
            return;
        };
        offset = next;
        let fresh = !events.is_empty();
        for event in events {
            let end = event.is_final();
            // No receivers is not an error: the check below ends the feed.
            let _ = tx.send(Arc::new(event));
            if end {
                return;
            }
        }
        if tx.receiver_count() == 0 {
            return;
        }
        quiet = if fresh || woke { 0 } else { quiet + 1 };
        // Every second of quiet, ask whether anyone still owns the log.
        if quiet * tick.as_millis() as u32 >= 1000 {
            quiet = 0;
            if !store::is_owned(path) {
                return;
            }
        }
    }
}

/// An inotify descriptor watching one file for writes.
struct Inotify {
    fd: AsyncFd<OwnedFd>,
}

impl Inotify {
    fn watch(path: &Path) -> Option<Inotify> {
        use rustix::fs::inotify;
        let fd =
            inotify::init(inotify::CreateFlags::CLOEXEC | inotify::CreateFlags::NONBLOCK).ok()?;
        inotify::add_watch(
            &fd,
            PathBuf::from(path),
            inotify::WatchFlags::MODIFY | inotify::WatchFlags::CLOSE_WRITE,
        )
        .ok()?;
        // SAFETY: the `OwnedFd` is moved in and owned by the `AsyncFd` until
        // it drops, so the descriptor stays open and the same throughout.
        #[expect(
            unsafe_code,
            reason = "tokio's registration asks the caller to vouch for the descriptor"
        )]
        let fd = unsafe { AsyncFd::register(fd) }.ok()?;
        Some(Inotify { fd })
    }

    /// Waits until the file was written to, then drains the notifications.
    async fn readable(&self) {
        let Ok(mut guard) = self.fd.readable().await else {
            std::future::pending::<()>().await;
            return;
        };
        let mut buf = [0u8; 4096];
        loop {
            match rustix::io::read(self.fd.get_ref(), &mut buf) {
                Ok(0) => break,
                Ok(_) => continue,
                Err(_) => break,
            }
        }
        guard.clear_ready();
    }
}
