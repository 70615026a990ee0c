//! One watcher of the sessions directory, shared by every `rows`
//! connection.
//!
//! A thread, started by the first `rows` client and gone after the last
//! leaves, stats every session's log each [`TICK`] (relative to the
//! sessions directory, as a listing does) and reads
//! `/proc/locks` once each [`LOCKS_EVERY`] ticks. A session whose log
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
        scan(shared, &mut seen, locks.as_ref(), None);
        *slot = Some(tx.clone());
        drop(slot);
        let hub = Arc::clone(shared);
        let spawned = std::thread::Builder::new()
            .name("chock-rows".to_owned())
            .spawn(move || {
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
                    if ticks.is_multiple_of(LOCKS_EVERY) {
                        locks = Snapshot::read().ok();
                    }
                    scan(&hub, &mut seen, locks.as_ref(), Some(&tx));
                }
            });
        if let Err(err) = spawned {
            tracing::warn!(%err, "cannot start the row watcher; rows feeds send no changes");
            *lock(&shared.rows.tx) = None;
        }
        rx
    }
}

/// Looks at every log once; sends the row of each whose stamp changed
/// (with `tx`), and remembers the stamps.
fn scan(
    shared: &Shared,
    seen: &mut HashMap<SessionId, Stamp>,
    locks: Option<&Snapshot>,
    tx: Option<&Sender>,
) {
    // The stats relative to the sessions directory, as a listing's: a
    // tick with ten thousand sessions is ten thousand short path walks.
    let statted = chock_log::stat_sessions(shared.store.state());
    let children = shared.children.snapshot();
    let mut now = HashMap::with_capacity(seen.len());
    for (id, stamp) in statted.logs() {
        let owned = locks.is_some_and(|locks| stamp.owned(locks));
        let child_ended = children
            .get(id.as_str())
            .is_some_and(|child| child.ended.borrow().is_some());
        let stamp = (stamp, owned, child_ended);
        let changed = seen.get(id) != Some(&stamp);
        if changed && let Some(tx) = tx {
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
        }
        now.insert(id.clone(), stamp);
    }
    *seen = now;
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
