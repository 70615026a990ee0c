//! A server that serves on the test's runtime until the test lets go of
//! it: the shape of `chock daemon` and `chock serve`, whose `serve` methods
//! run until a shutdown future completes.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::sync::oneshot;

/// Completes when the [`Serving`] it belongs to is dropped: the shutdown
/// future handed to a server's `serve`.
#[derive(Debug)]
pub struct Stopped(oneshot::Receiver<()>);

impl Future for Stopped {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        Pin::new(&mut self.0).poll(cx).map(drop)
    }
}

/// A server spawned by [`serve_in_background`]; dropping it stops the
/// server.
#[derive(Debug)]
pub struct Serving {
    _stop: oneshot::Sender<()>,
}

/// Spawns `serve(stopped)` on the current tokio runtime, where `stopped`
/// completes once the returned [`Serving`] is dropped:
/// `serve_in_background(|stopped| daemon.serve(stopped))`.
pub fn serve_in_background<F>(serve: impl FnOnce(Stopped) -> F) -> Serving
where
    F: Future<Output = ()> + Send + 'static,
{
    let (stop, stopped) = oneshot::channel();
    tokio::spawn(serve(Stopped(stopped)));
    Serving { _stop: stop }
}
