//! The person on the other side of a session, as the session sees them:
//! someone who is shown the model's text as it streams and every event as
//! the log records it, and who, in an interactive session, says the next
//! message once a turn has ended and may cut a turn short.
//!
//! The session knows nothing of terminals: the interface (`chock-terminal`)
//! implements [`Person`], and a plain closure over the text is a person who
//! only reads (a script's `chock run`, the tests), so every caller that
//! streamed text before still does.

use std::path::Path;

use chock_log::{SessionId, Tap};

/// What the session tells its person when it begins: which session, on
/// which model, working where, logged where.
#[derive(Debug, Clone, Copy)]
pub struct Begun<'a> {
    pub id: &'a SessionId,
    pub model: &'a str,
    /// The directory the tools work in (the workspace, or a directory in it).
    pub root: &'a Path,
    pub log: &'a Path,
}

/// What the person says when a turn has ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// The next message: a new turn of the same session.
    Message(String),
    /// `/model <instance>/<model>`: the model for the next turns, decided
    /// at model.select as at the session's start. The session answers with
    /// [`Person::told`] and asks again.
    Model(String),
    /// `/compact`: compact the conversation now. The session answers with
    /// [`Person::told`] and asks again.
    Compact,
    /// The person is done: the session ends.
    Leave,
    /// The person's terminal went away: the session ends interrupted.
    Gone,
}

/// What the session made of a command the person gave at the prompt
/// ([`Next::Model`], [`Next::Compact`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Told {
    /// The next turns go to this model (`instance/model`).
    Model(String),
    /// The conversation was compacted: `messages` of it, about `tokens`
    /// tokens, are now one summary.
    Compacted { messages: usize, tokens: u64 },
    /// The command was refused or failed, and nothing changed: one
    /// sentence saying what happened and what to do.
    Refused(String),
}

/// The person a session runs for.
pub trait Person {
    /// The model's text as it streams in.
    fn text(&mut self, delta: &str);

    /// Once, as the session begins; the tap returned sees every event the
    /// log records from then on.
    fn begin(&mut self, _begun: &Begun<'_>) -> Option<Tap> {
        None
    }

    /// Whether the session goes on after a turn ends, asking [`Self::next`];
    /// one that does not ends with its first turn.
    fn interactive(&self) -> bool {
        false
    }

    /// The person's next message, once a turn has ended (or before the
    /// first, when the session began without one).
    fn next(&mut self) -> impl Future<Output = Next> {
        std::future::ready(Next::Leave)
    }

    /// What came of the command the person last gave at the prompt.
    fn told(&mut self, _told: &Told) {}

    /// Completes when the person cuts the current turn short (Ctrl-C in
    /// an interactive session); never, for one that is not.
    fn cut(&self) -> impl Future<Output = ()> + 'static {
        std::future::pending()
    }
}

/// Whether `fd` (a terminal the person types on, which blocks) has input
/// to read now, or has hung up: `poll(2)` with no wait. A reader on the
/// session's one thread reads only then, since a read with nothing there
/// would hold the whole session until the person typed.
pub fn has_input(fd: impl std::os::fd::AsFd) -> bool {
    use rustix::event::{PollFd, PollFlags, Timespec};
    let mut fds = [PollFd::new(&fd, PollFlags::IN)];
    let now = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    rustix::event::poll(&mut fds, Some(&now)).is_ok_and(|ready| ready > 0)
}

/// A closure over the streamed text: a person who only reads.
impl<F: FnMut(&str)> Person for F {
    fn text(&mut self, delta: &str) {
        self(delta);
    }
}
