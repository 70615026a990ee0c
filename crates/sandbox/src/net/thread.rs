//! The router on a thread of its own, for a caller with no tokio runtime of
//! its own (`chock sandbox`). `chock run` serves the [`Proxy`] and
//! [`Published`] on its own single-threaded runtime instead.

use std::io;
use std::sync::Arc;

use super::fake::{FakeConfig, FakeResolver};
use super::link::RouterLink;
use super::proxy::Proxy;
use super::publish::{PublishError, Published};

/// A running router; dropping it stops the proxy and closes the ports.
#[derive(Debug)]
pub struct RouterThread {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    join: Option<std::thread::JoinHandle<()>>,
}

impl RouterThread {
    /// Serves `link`'s listener with `proxy` and publishes `ports`; with
    /// `fake` (for a spec made by `with_fake_resolver`), serves the fake
    /// resolver too. Returns the thread and, per port, whether it was
    /// published.
    pub fn start(
        link: RouterLink,
        proxy: Proxy,
        ports: &[u16],
        fake: Option<FakeConfig>,
    ) -> io::Result<(Self, Vec<Result<u16, PublishError>>)> {
        let listener = link.listener()?;
        listener.set_nonblocking(true)?;
        let udp = match fake {
            Some(f) => {
                let udp = link.resolver_socket()?;
                udp.set_nonblocking(true)?;
                Some((f, udp))
            }
            None => None,
        };
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let link = Arc::new(link);
        let mut published = Published::new(Arc::clone(&link));
        let results = {
            let _guard = rt.enter();
            ports
                .iter()
                .map(|p| published.publish(*p).map(|()| *p))
                .collect()
        };
        let (listener, resolver) = {
            let _guard = rt.enter();
            let resolver = match udp {
                Some((f, udp)) => Some((
                    FakeResolver::new(Arc::clone(&link), proxy.clone(), f),
                    tokio::net::UdpSocket::from_std(udp)?,
                )),
                None => None,
            };
            (tokio::net::TcpListener::from_std(listener)?, resolver)
        };
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let join = std::thread::Builder::new()
            .name("chock-router".into())
            .spawn(move || {
                rt.block_on(async move {
                    let resolve = async move {
                        match resolver {
                            Some((fake, udp)) => fake.serve(udp).await,
                            None => std::future::pending().await,
                        }
                    };
                    tokio::select! {
                        _ = proxy.serve_tcp(listener) => {}
                        r = resolve => {
                            if let Err(e) = r {
                                tracing::warn!(target: "chock::net", "the fake resolver stopped: {e}");
                            }
                        }
                        _ = rx => {}
                    }
                });
                drop(published);
            })?;
        Ok((
            Self {
                stop: Some(tx),
                join: Some(join),
            },
            results,
        ))
    }
}

impl Drop for RouterThread {
    fn drop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(j) = self.join.take() {
            let _ = j.join();
        }
    }
}
