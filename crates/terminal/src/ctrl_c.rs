//! Ctrl-C, as one stream for the whole session: SIGINT (the prompt keeps
//! the terminal's signals on), listened to from the session's start, so a
//! Ctrl-C pressed in the moment between a turn's end and the prompt is not
//! lost but read by the prompt; the turn's cut and the prompt take turns
//! reading it.

use std::cell::RefCell;
use std::rc::Rc;

use tokio::signal::unix::{Signal, SignalKind, signal};

/// The session's Ctrl-C; empty until [`CtrlC::listen`] (inside the
/// runtime), or when the handler could not be installed.
#[derive(Debug, Clone, Default)]
pub(crate) struct CtrlC(Rc<RefCell<Option<Signal>>>);

/// The stream while one reader waits on it; given back when dropped.
struct Reading {
    owner: CtrlC,
    stream: Option<Signal>,
}

impl Drop for Reading {
    fn drop(&mut self) {
        *self.owner.0.borrow_mut() = self.stream.take();
    }
}

impl CtrlC {
    /// Starts listening (from here on, a Ctrl-C is remembered until read).
    pub(crate) fn listen(&self) {
        let mut stream = self.0.borrow_mut();
        if stream.is_none() {
            *stream = signal(SignalKind::interrupt()).ok();
        }
    }

    /// Completes at the next Ctrl-C (one pressed since the last read
    /// counts); never, when nothing listens.
    pub(crate) async fn pressed(&self) {
        let mut reading = Reading {
            owner: self.clone(),
            stream: self.0.borrow_mut().take(),
        };
        let got = match reading.stream.as_mut() {
            Some(stream) => stream.recv().await,
            None => None,
        };
        if got.is_none() {
            std::future::pending::<()>().await;
        }
    }
}
