//! The session log: the one record of what an agent session did, and the
//! only interface between the process that runs a session and everything that
//! shows, serves or takes it over.
//!
//! The crate is split by concern so each piece can be read on its own:
//! [`paths`] says where things live, [`id`] names sessions and events,
//! [`time`] stamps them, [`event`] is the wire format, [`writer`] appends
//! under the exclusive lock, [`reader`] reads from a last event id without
//! scanning the whole file, [`follow`] waits for appends, [`fold`] turns
//! events into a [`SessionState`], [`row`] is the daemon's list row, and
//! [`list`] lists every session in a state directory through its index,
//! folding only the logs that changed. The format itself is
//! described in `docs/log.md`.

#![forbid(unsafe_code)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod blocks;
pub mod event;
pub mod fold;
pub mod follow;
pub mod head;
pub mod id;
mod index;
mod lines;
pub mod list;
pub mod locks;
pub mod paths;
pub mod reader;
pub mod row;
pub mod time;
pub mod unsettled;
pub mod writer;

pub use event::{Event, EventBody, RawEvent};
pub use fold::{FoldedLog, SessionState, Status, fold_log, fold_row};
pub use follow::Follower;
pub use head::EventHead;
pub use id::{EventId, SessionId};
pub use list::{
    LazyLocks, Listed, ListedSessions, LogStamp, Statted, Summary, list_sessions, list_statted,
    stat_sessions,
};
pub use paths::{FindError, PathError, StateDir};
pub use reader::{ReadBatch, ReadError, ReadProblem, read_after, read_page};
pub use row::{RowStatus, SessionRow};
pub use time::Timestamp;
pub use writer::{LogWriter, Tap, WriteError};
