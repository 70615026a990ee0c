//! The control protocol that `chock daemon` speaks and that `chock detach`,
//! `chock serve` and `chock approve` use to reach it.
//!
//! The protocol is lines of UTF-8 text, one request per connection, fields
//! separated by tabs, exactly as the specification writes them. Every
//! connection opens with a greeting that carries [`PROTOCOL`]; nothing else is
//! read or written until both ends hold the same number. The types here are
//! the whole contract: the daemon formats replies with them, clients parse
//! with them, and `docs/protocol.md` lists every line they produce.
//!
//! Nothing in this crate hands out or takes a path except the project
//! directory a person typed, so every verb works with the client on another
//! machine.

// Only `listen` needs unsafe (taking ownership of the descriptors systemd
// passes), each use with an `#[expect]` and its reasoning.
#![deny(unsafe_code)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod address;
pub mod approve;
mod client;
mod greeting;
pub mod handover;
mod lines;
pub mod listen;
pub mod memory;
pub mod owned_socket;
mod peer;
mod reply;
mod request;

pub use address::{Address, AddressError, DAEMON_ENV};
/// A session's row as `list` and a watch's header carry it: the fold's own
/// row, so it says what every other view says. Every field has a default and
/// unknown fields are ignored. The daemon adds `child` (see docs/protocol.md).
pub use chock_log::SessionRow;
pub use client::{Client, ClientError, DiffFile, RowFeed, Started, Watch, WorkspaceDiff};
pub use greeting::{Greeting, GreetingError, check_greeting_reply};
pub use lines::{LineError, LineReader, MAX_REPLY_LINE, MAX_REQUEST_LINE};
pub use listen::{ListenError, Listener};
pub use peer::{PeerError, Whose, check_peer, check_peer_of, own_uid};
pub use reply::{EventLine, Reply, RowLine, sanitize};
pub use request::{Answer, Request, RequestError, VERBS};

/// The control protocol's own number. It is not the version `chock --version`
/// prints: it moves only when a client built against the old number would
/// misread the new one. A field added to a session row is not such a change.
pub const PROTOCOL: u32 = 1;

/// The name that precedes the number in the greeting and its reply.
pub const PROTOCOL_NAME: &str = "chock-control";
