//! One watcher of the sessions directory, shared by every `rows`
//! connection.
//!
//! A thread, started by the first `rows` client and gone after the last
//! leaves, looks each [`TICK`] at the logs inotify says were written
//! (`changes.rs`; every log when it cannot say, and every
//! [`FULL_EVERY`] ticks), and reads `/proc/locks` once each
//! [`LOCKS_EVERY`] ticks. A session whose log
//! changed length or time, whose owner came or went, or whose daemon child
//! ended is folded again (the store's cache folds only changed logs) and
//! its row broadcast once: a burst of appends inside one tick is one row.
//! A thread, not a task, because the scan is blocking file system work.
//! The broadcast's ring is the bound on what a slow client costs; one that
//! falls behind it is sent every row again.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chock_log::locks::Snapshot;
use chock_log::{LogStamp, SessionId};
use tokio::sync::broadcast;

use crate::Shared;

mod changes;

use changes::{Changes, FULL_EVERY, Touched};

/// How often the logs are looked at: at most one row per session per tick.
pub(crate) const TICK: Duration = Duration::from_millis(100);
/// `/proc/locks` is read once every this many ticks.
const LOCKS_EVERY: u32 = 5;
/// Changed rows a client may fall behind by before it is sent every row again.
const CAPACITY: usize = 256;

/// One changed row, as `list` sends it, with its project to filter by.
#[derive(Debug)]
pub(crate) struct RowChange {
    pub(crate) project: PathBuf,
    pub(crate) started_at: String,
    pub(crate) row: String,
}

type Sender = broadcast::Sender<Arc<RowChange>>;

/// The shared watcher's channel, while it runs.
#[derive(Debug, Default)]
pub(crate) struct RowHub {
    tx: Mutex<Option<Sender>>,
}

/// What is looked at of one log: its stamp (inode, length, change times),
/// whether it is owned, and whether the daemon's child for it has ended.
type Stamp = (LogStamp, bool, bool);

impl RowHub {
    /// A receiver for every changed row from now on. The first subscriber
    /// starts the watcher, which takes its first look before this returns,
    /// so a change after the caller reads the rows is never missed.
    pub(crate) fn subscribe(shared: &Arc<Shared>) -> broadcast::Receiver<Arc<RowChange>> {
        let mut slot = lock(&shared.rows.tx);
        if let Some(tx) = slot.as_ref() {
            return tx.subscribe();
        }
        let (tx, rx) = broadcast::channel(CAPACITY);
        let mut seen = HashMap::new();
        let mut locks = Snapshot::read().ok();
        scan(shared, &mut seen, locks.as_ref(), true, None, Touched::All);
        *slot = Some(tx.clone());
        drop(slot);
        let hub = Arc::clone(shared);
        let spawned = std::thread::Builder::new()
            .name("chock-rows".to_owned())
            .spawn(move || {
                let sessions = hub.store.state().sessions();
                let mut changes = Changes::watch(&sessions, seen.keys());
                let mut ticks = 0u32;
                loop {
                    std::thread::sleep(TICK);
                    {
                        let mut slot = lock(&hub.rows.tx);
                        if tx.receiver_count() == 0 {
                            *slot = None;
                            return;
                        }
                    }
                    ticks += 1;
                    let locks_read = ticks.is_multiple_of(LOCKS_EVERY);
                    if locks_read {
                        locks = Snapshot::read().ok();
                    }
                    let touched = match changes.as_mut() {
                        Some(changes) => match changes.touched(&sessions) {
                            _ if ticks.is_multiple_of(FULL_EVERY) => Touched::All,
                            touched => touched,
                        },
                        None => Touched::All,
                    };
                    scan(
                        &hub,
                        &mut seen,
                        locks.as_ref(),
                        locks_read,
                        Some(&tx),
                        touched,
                    );
                }
            });
        if let Err(err) = spawned {
            tracing::warn!(%err, "cannot start the row watcher; rows feeds send no changes");
            *lock(&shared.rows.tx) = None;
        }
        rx
    }
}

/// Looks at the logs `touched` names (every one with `Touched::All`), and
/// at every log's owner when `locks` was read again this tick and at every
/// daemon child's ending; sends the row of each whose stamp changed (with
/// `tx`), and remembers the stamps.
fn scan(
    shared: &Shared,
    seen: &mut HashMap<SessionId, Stamp>,
    locks: Option<&Snapshot>,
    locks_read: bool,
    tx: Option<&Sender>,
    touched: Touched,
) {
    let children = shared.children.snapshot();
    let ended = |id: &SessionId| {
        children
            .get(id.as_str())
            .is_some_and(|child| child.ended.borrow().is_some())
    };
    let owned = |stamp: &LogStamp| locks.is_some_and(|locks| stamp.owned(locks));
    let send = |id: &SessionId| {
        let Some(tx) = tx else { return };
        let path = shared.store.log_path(id);
        match crate::verbs::row(shared, id, &path) {
            Ok(row) => {
                let _ = tx.send(Arc::new(RowChange {
                    project: row.row.project.clone(),
                    started_at: row.started_at(),
                    row: row.json(),
                }));
            }
            Err(err) => warn_unfolded(id, &err),
        }
    };
    let touched = match touched {
        Touched::Some(touched) => touched,
        Touched::All => {
            // The stats relative to the sessions directory, as a
            // listing's: ten thousand sessions are ten thousand short
            // path walks.
            let statted = chock_log::stat_sessions(shared.store.state());
            let mut now = HashMap::with_capacity(seen.len());
            for (id, stamp) in statted.logs() {
                let stamp = (stamp, owned(&stamp), ended(id));
                if seen.get(id) != Some(&stamp) {
                    send(id);
                }
                now.insert(id.clone(), stamp);
            }
            *seen = now;
            return;
        }
    };
    for id in touched {
        match LogStamp::of_log(&shared.store.log_path(&id)) {
            Ok(stamp) => {
                let stamp = (stamp, owned(&stamp), ended(&id));
                if seen.get(&id) != Some(&stamp) {
                    send(&id);
                    seen.insert(id, stamp);
                }
            }
            Err(_) => {
                seen.remove(&id);
            }
        }
    }
    // What changes without a write to the log: its owner, by the reading
    // of /proc/locks, and the daemon's child for it.
    let mut moved = Vec::new();
    if locks_read {
        for (id, stamp) in seen.iter() {
            if owned(&stamp.0) != stamp.1 {
                moved.push(id.clone());
            }
        }
    }
    for id in children.keys().filter_map(|id| SessionId::parse(id).ok()) {
        if seen.get(&id).is_some_and(|stamp| stamp.2 != ended(&id)) {
            moved.push(id);
        }
    }
    for id in moved {
        if let Some(stamp) = seen.get_mut(&id) {
            *stamp = (stamp.0, owned(&stamp.0), ended(&id));
            send(&id);
        }
    }
}

fn warn_unfolded(id: &SessionId, err: &crate::verbs::VerbError) {
    tracing::warn!(session_id = %id.as_str(), ?err, "cannot fold a changed row");
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Every use is one read or write of the slot: a poisoned value is whole.
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
