//! `list <project directory>`: one line per session of the project,
//! `<started at>\t<row as JSON>`, newest first.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use chock_log::{LazyLocks, LogStamp, SessionId, SessionRow};

use super::{Conn, Row, Shared, VerbError, project_dir, with_daemon_facts};
use crate::store;

pub(crate) async fn list(shared: &Shared, project: &str, conn: &mut Conn) -> Result<(), VerbError> {
    let dir = project_dir(project)?;
    send_rows(shared, Some(&dir), conn).await
}

/// Every row of `project` (of every project with `None`), newest first,
/// queued and flushed: `list`, `all` and the start of `rows` alike.
pub(crate) async fn send_rows(
    shared: &Shared,
    project: Option<&Path>,
    conn: &mut Conn,
) -> Result<(), VerbError> {
    let text = listing(shared, project);
    conn.queue_text(&text).await?;
    conn.flush().await
}

/// The rows the last listing sent, each as its line and what it was made
/// of, so the next listing stats every log and makes again only the rows
/// of logs that changed, whose owner came or went, or whose daemon child
/// ended: ten thousand unchanged rows are copied, not folded and written.
#[derive(Debug, Default)]
pub(crate) struct ListMemory(Mutex<Memory>);

#[derive(Debug, Default)]
struct Memory {
    rows: HashMap<SessionId, Remembered>,
    /// Listings made: each row says which last saw it.
    listings: u64,
}

#[derive(Debug)]
struct Remembered {
    made_of: Facts,
    project: PathBuf,
    /// `<started at>\t<row as JSON>\n`, as `Reply::Row` formats it: a
    /// started-at has no line break and the row's JSON escapes every one.
    line: Box<[u8]>,
    /// The listing that last saw the session.
    seen: u64,
}

/// Everything a row is made from: the log's state, its owner by this
/// listing's one reading of `/proc/locks`, and the daemon's child.
#[derive(Clone, Debug, PartialEq)]
struct Facts {
    stamp: LogStamp,
    owned: Option<bool>,
    child: Option<(u32, Option<String>)>,
}

impl Remembered {
    fn of(made_of: Facts, row: &Row, seen: u64) -> Remembered {
        let mut line = Vec::with_capacity(512);
        line.extend_from_slice(row.started_at().as_bytes());
        line.push(b'\t');
        row.write_json(&mut line);
        line.push(b'\n');
        Remembered {
            made_of,
            project: row.row.project.clone(),
            line: line.into_boxed_slice(),
            seen,
        }
    }
}

/// Past this many changed rows a listing reads the state directory's index
/// (docs/log.md, "The index") for them rather than folding each log: the
/// daemon's first listing, or one after many sessions moved on.
const FEW_CHANGED: usize = 64;

/// Every row of `project`, newest first, as the text `list` sends.
fn listing(shared: &Shared, project: Option<&Path>) -> Vec<u8> {
    let state = shared.store.state();
    // Every row's owner is looked up: read /proc/locks while statting.
    let mut locks = LazyLocks::ahead();
    let statted = chock_log::stat_sessions(state);
    let children = shared.children.snapshot();
    let facts: Vec<Facts> = statted
        .logs()
        .map(|(id, stamp)| Facts {
            stamp,
            owned: locks.get().map(|locks| stamp.owned(locks)),
            child: children.get(id.as_str()).map(super::child_fact),
        })
        .collect();
    let mut memory = lock(&shared.listed.0);
    memory.listings += 1;
    let listing = memory.listings;
    // One look at each remembered row: kept, and marked seen, when it was
    // made of what its session is made of now.
    let mut changed = Vec::new();
    for (n, ((id, _), made_of)) in statted.logs().zip(&facts).enumerate() {
        match memory.rows.get_mut(id) {
            Some(remembered) if remembered.made_of == *made_of => remembered.seen = listing,
            _ => changed.push(n),
        }
    }
    if changed.len() <= FEW_CHANGED {
        warn_skipped(statted.skipped());
        let ids: Vec<&SessionId> = statted.logs().map(|(id, _)| id).collect();
        for n in changed {
            let (id, made_of) = (ids[n], &facts[n]);
            let path = shared.store.log_path(id);
            match store::fold_row(&shared.store, id, &path) {
                Ok(row) => {
                    // As a listing's row: the owner by the one reading.
                    let row = SessionRow {
                        owned: made_of.owned,
                        ..row
                    }
                    .settled();
                    let row = with_daemon_facts(shared, id, &path, row);
                    let remembered = Remembered::of(made_of.clone(), &row, listing);
                    memory.rows.insert(id.clone(), remembered);
                }
                Err(err) => warn_skipped(&[(path, err.to_string())]),
            }
        }
        // Sessions whose logs are gone are forgotten.
        if memory.rows.len() > ids.len() {
            memory
                .rows
                .retain(|_, remembered| remembered.seen == listing);
        }
        return rows_text(&memory, ids.into_iter(), listing, project);
    }
    let ids: Vec<SessionId> = statted.logs().map(|(id, _)| id.clone()).collect();
    let listed = chock_log::list_statted(state, statted);
    warn_skipped(&listed.skipped);
    let mut fresh = HashMap::with_capacity(ids.len());
    // The listed sessions are the statted ones in order, less the skipped.
    let mut n = 0;
    for listed in listed.sessions {
        while ids.get(n).is_some_and(|id| *id != listed.id) {
            n += 1;
        }
        let Some(made_of) = facts.get(n) else {
            break;
        };
        let id = listed.id.clone();
        let path = shared.store.log_path(&id);
        let row = with_daemon_facts(shared, &id, &path, listed.into_row(&mut locks));
        fresh.insert(id, Remembered::of(made_of.clone(), &row, listing));
    }
    memory.rows = fresh;
    rows_text(&memory, ids.iter(), listing, project)
}

/// The lines of the rows of `ids` this `listing` saw, of `project` only.
fn rows_text<'a>(
    memory: &Memory,
    ids: impl ExactSizeIterator<Item = &'a SessionId>,
    listing: u64,
    project: Option<&Path>,
) -> Vec<u8> {
    let mut text = Vec::with_capacity(ids.len() * 512);
    for id in ids {
        if let Some(remembered) = memory.rows.get(id)
            && remembered.seen == listing
            && project.is_none_or(|dir| remembered.project == dir)
        {
            text.extend_from_slice(&remembered.line);
        }
    }
    text
}

/// One unreadable log must not hide every other session: each is logged.
fn warn_skipped(skipped: &[(PathBuf, String)]) {
    for (path, why) in skipped {
        tracing::warn!(path = %path.display(), %why, "list skipped an entry");
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Every use replaces or reads the map whole: a poisoned one is whole.
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
