//! The sandbox's network: a router made of socket bridges, published ports,
//! and the trust store.
//!
//! `/dev/net/tun` is root-only on the machines this runs on, so there is no
//! tap device and no user-space TCP stack. Instead the namespace gets a
//! listener on its own `127.0.0.1:<port>` (opened inside, handed out over a
//! unix socket, accepted on the host: see the `inside` module), and every connection
//! to it is served by the host-side [`Proxy`], which speaks HTTP CONNECT,
//! plain HTTP proxying and SOCKS5, and asks a [`Decider`] about each
//! destination host before it dials anything. Programs find the listener
//! through `HTTP_PROXY`, `HTTPS_PROXY` and `ALL_PROXY` (and lower case).
//! Optionally, for tools that ignore those variables, a [`FakeResolver`]
//! answers the namespace's DNS with fake loopback addresses and carries
//! each connection to one through the same proxy, to the name asked for.
//!
//! The router is a mechanism, never a permission: with nothing permitted it
//! reaches nothing. See docs/network.md.

mod carry;
mod decide;
mod dns;
mod fake;
mod http;
pub(crate) mod inside;
mod link;
mod proxy;
mod publish;
mod resolve;
mod socks;
mod thread;
mod trust;

pub use decide::{AskFn, BoxFuture, Decider, HostVerdict, PolicyDecider, refusal};
pub use fake::{FakeConfig, FakeResolver};
pub use link::RouterLink;
pub(crate) use link::link_pair;
pub use proxy::{Proxy, ProxyConfig};
pub use publish::{MAX_PUBLISHED, PublishError, Published};
pub use resolve::is_internal;
pub use thread::RouterThread;
pub use trust::{RESOLV_CONF, TRUST_STORE_PATH, host_bundle};
pub(crate) use trust::{resolv_conf_ops, trust_ops};

/// The port the router's listener binds inside every namespace. Any port
/// works (the namespace is the sandbox's own); this one is unlikely to be
/// wanted by a project's own dev server.
pub const ROUTER_PORT: u16 = 3128;

/// The variables that point programs at the router, for `port`.
pub fn proxy_env(port: u16) -> Vec<(String, String)> {
    let http = format!("http://127.0.0.1:{port}");
    let socks = format!("socks5h://127.0.0.1:{port}");
    let mut out = Vec::new();
    for (name, value) in [
        ("HTTP_PROXY", &http),
        ("HTTPS_PROXY", &http),
        ("ALL_PROXY", &socks),
    ] {
        out.push((name.to_owned(), value.clone()));
        out.push((name.to_ascii_lowercase(), value.clone()));
    }
    // Loopback inside the namespace is the sandbox's own: never proxied.
    out.push(("NO_PROXY".to_owned(), "localhost,127.0.0.1,::1".to_owned()));
    out.push(("no_proxy".to_owned(), "localhost,127.0.0.1,::1".to_owned()));
    out
}

impl crate::SandboxSpec {
    /// Gives the sandbox the router: the network mode, the proxy variables,
    /// and the trust store (builder style). A caller that set
    /// `SSL_CERT_FILE` in `env` keeps its own.
    #[must_use]
    pub fn with_router(mut self) -> Self {
        self.network = crate::NetworkMode::Router {
            port: ROUTER_PORT,
            resolver: false,
        };
        for (k, v) in proxy_env(ROUTER_PORT) {
            self = self.env(&k, &v);
        }
        if !self.env.iter().any(|(k, _)| k == "SSL_CERT_FILE")
            && let Some(bundle) = host_bundle()
        {
            self.trust_store = Some(bundle);
            self = self.env("SSL_CERT_FILE", TRUST_STORE_PATH);
        }
        self
    }

    /// Gives the sandbox the router (as [`Self::with_router`]) and the
    /// fake-address resolver: `/etc/resolv.conf` names `127.0.0.53`, whose
    /// UDP socket the spawned child hands out through
    /// [`RouterLink::resolver_socket`] for a [`FakeResolver`] to serve.
    #[must_use]
    pub fn with_fake_resolver(self) -> Self {
        let mut spec = self.with_router();
        spec.network = crate::NetworkMode::Router {
            port: ROUTER_PORT,
            resolver: true,
        };
        spec
    }
}

/// Carries a decided connection both ways until both sides are done (see
/// the `carry` module: a buffer per direction that grows for bulk
/// transfers).
async fn carry_both<A, B>(a: &mut A, b: &mut B) -> std::io::Result<(u64, u64)>
where
    A: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
    B: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    carry::carry(a, b).await
}
