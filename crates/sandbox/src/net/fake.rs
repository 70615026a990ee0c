//! The router's second mode, for tools that ignore the proxy variables: a
//! resolver that hands out fake addresses, and listeners on them whose
//! connections the [`Proxy`] carries to the name that was asked for.
//!
//! Everything here runs on the host. The namespace's pid 1 binds the UDP
//! socket on `127.0.0.53:53` and passes it out (`inside`), and
//! `/etc/resolv.conf` inside names it. An A query for a name not seen yet
//! takes the next address of `127.77.0.0/16` (all of `127/8` is local on
//! the namespace's loopback, so no route is needed) and, before the answer
//! leaves, listeners on that address for the configured ports, bound by the
//! host on sockets the namespace's helper opened. A connection accepted on
//! one is `host:port` to [`Proxy::open`]: decided at
//! `net.connect.<reversed host>` by the same decider, resolved, checked for
//! internal addresses, dialled. Nothing is decided at lookup time, so a
//! lookup never asks a person anything.
//!
//! The table is bounded and never recycles an address: a client holding an
//! old answer must never reach a different name than it asked for. When
//! it is full, a new name is answered REFUSED (and logged) while the names
//! already in it keep working. Queries are answered one at a time, in
//! order; a new name costs one helper round trip per port.

use std::collections::HashMap;
use std::io;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::os::fd::AsRawFd;
use std::sync::{Arc, Mutex};

use tokio::net::{TcpStream, UdpSocket};
use tokio::task::JoinSet;

use super::dns::{self, Packet, Query, Rcode};
use super::link::RouterLink;
use super::proxy::Proxy;

/// How the fake resolver is bounded and which ports its addresses accept.
#[derive(Debug, Clone)]
pub struct FakeConfig {
    /// The ports every fake address listens on. A connection to any other
    /// port of a fake address is refused by the namespace's kernel.
    pub ports: Vec<u16>,
    /// Names the table holds; a new name past it is answered REFUSED.
    pub max_names: usize,
    /// TTL of every answer, in seconds.
    pub ttl: u32,
}

/// The most names one table can hold: the size of `127.77.0.0/16` less the
/// network and broadcast-looking ends.
const ADDRESSES: usize = 65_534;

impl Default for FakeConfig {
    fn default() -> Self {
        Self {
            ports: vec![80, 443],
            max_names: 256,
            ttl: 5,
        }
    }
}

/// The fake address of the `n`th name (from 1).
fn address(n: usize) -> Ipv4Addr {
    let [_, _, hi, lo] = u32::try_from(n).unwrap_or(0).to_be_bytes();
    Ipv4Addr::new(127, 77, hi, lo)
}

#[derive(Debug, Default)]
struct Table {
    by_name: HashMap<String, Ipv4Addr>,
    by_addr: HashMap<Ipv4Addr, String>,
    /// Addresses taken so far, including any whose listeners failed: an
    /// address is reserved under the lock, so two `serve` loops sharing
    /// one table can never hand out the same one.
    taken: usize,
}

/// One sandbox's fake resolver. Cheap to clone.
#[derive(Debug, Clone)]
pub struct FakeResolver {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    link: Arc<RouterLink>,
    proxy: Proxy,
    config: FakeConfig,
    table: Mutex<Table>,
}

impl FakeResolver {
    /// A resolver whose fake addresses open listeners through `link` and
    /// whose connections `proxy` decides and carries.
    pub fn new(link: Arc<RouterLink>, proxy: Proxy, config: FakeConfig) -> Self {
        Self {
            inner: Arc::new(Inner {
                link,
                proxy,
                config,
                table: Mutex::new(Table::default()),
            }),
        }
    }

    /// The name a fake address stands for.
    pub fn name_of(&self, addr: Ipv4Addr) -> Option<String> {
        self.table().by_addr.get(&addr).cloned()
    }

    /// Names handed an address so far.
    pub fn names(&self) -> usize {
        self.table().by_name.len()
    }

    fn table(&self) -> std::sync::MutexGuard<'_, Table> {
        self.inner
            .table
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Answers queries on `socket` (the namespace's `127.0.0.53:53`) until
    /// it fails. The listeners it opens are served while this future is;
    /// dropping it stops them (connections already carried go on).
    pub async fn serve(&self, socket: UdpSocket) -> io::Result<()> {
        let mut listeners = JoinSet::new();
        let mut buf = vec![0u8; 4096];
        loop {
            let (n, from) = match socket.recv_from(&mut buf).await {
                Ok(x) => x,
                // An earlier reply bounced (ICMP port unreachable, the
                // client gave up): the socket is still good.
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::ConnectionRefused
                            | io::ErrorKind::ConnectionReset
                            | io::ErrorKind::Interrupted
                    ) =>
                {
                    tracing::debug!(target: "chock::net", "fake resolver: receive failed: {e}");
                    continue;
                }
                Err(e) => return Err(e),
            };
            let Some(out) = self.answer(&buf[..n], &mut listeners).await else {
                continue;
            };
            if let Err(e) = socket.send_to(&out, from).await {
                tracing::debug!(target: "chock::net", "fake resolver: reply to {from} failed: {e}");
            }
        }
    }

    /// The reply to one packet, if it deserves one.
    async fn answer(&self, packet: &[u8], listeners: &mut JoinSet<()>) -> Option<Vec<u8>> {
        let q = match dns::parse(packet) {
            Packet::Query(q) => q,
            Packet::Bad { id, rcode } => {
                tracing::debug!(target: "chock::net", "fake resolver: malformed query answered {rcode:?}");
                return Some(dns::bare_reply(id, rcode));
            }
            Packet::Ignore => return None,
        };
        if !q.is_internet() {
            return Some(dns::reply(&q, Rcode::NotImp, None));
        }
        if chock_policy::Action::net_connect(&q.name).is_err() {
            // No rule could ever permit it: say it does not exist.
            return Some(dns::reply(&q, Rcode::NxDomain, None));
        }
        if q.qtype != dns::TYPE_A {
            // AAAA and the rest: the name exists, with no record of that
            // type, so a client falls back to the A answer.
            return Some(dns::reply(&q, Rcode::NoError, None));
        }
        Some(match self.address_for(&q, listeners).await {
            Ok(addr) => dns::reply(&q, Rcode::NoError, Some((addr, self.inner.config.ttl))),
            Err(rcode) => dns::reply(&q, rcode, None),
        })
    }

    /// The name's address, opening its listeners the first time.
    async fn address_for(&self, q: &Query, listeners: &mut JoinSet<()>) -> Result<Ipv4Addr, Rcode> {
        let addr = {
            let mut t = self.table();
            if let Some(a) = t.by_name.get(&q.name) {
                return Ok(*a);
            }
            let max = self.inner.config.max_names.min(ADDRESSES);
            if t.by_name.len() >= max || t.taken >= ADDRESSES {
                tracing::warn!(
                    target: "chock::net",
                    name = %q.name,
                    "the fake resolver's table is full ({max} names): {} is answered REFUSED; \
                     the names already looked up keep working",
                    q.name
                );
                return Err(Rcode::Refused);
            }
            t.taken += 1;
            address(t.taken)
        };
        let link = Arc::clone(&self.inner.link);
        let ports = self.inner.config.ports.clone();
        let opened = tokio::task::spawn_blocking(move || {
            ports
                .into_iter()
                .map(|p| (p, link.listen_on(SocketAddrV4::new(addr, p))))
                .collect::<Vec<_>>()
        })
        .await
        .map_err(|_| Rcode::ServFail)?;
        let mut any = false;
        for (port, l) in opened {
            let l = match l.and_then(|l| {
                l.set_nonblocking(true)?;
                tokio::net::TcpListener::from_std(l)
            }) {
                Ok(l) => l,
                Err(e) => {
                    tracing::warn!(target: "chock::net", name = %q.name, port, "fake resolver: no listener on {addr}:{port}: {e}");
                    continue;
                }
            };
            any = true;
            let proxy = self.inner.proxy.clone();
            let host = q.name.clone();
            listeners.spawn(async move {
                loop {
                    match l.accept().await {
                        Ok((s, _)) => {
                            let _ = s.set_nodelay(true);
                            proxy.spawn_to(s, host.clone(), port);
                        }
                        Err(e) => {
                            if super::proxy::accept_failed(e).await.is_err() {
                                return;
                            }
                        }
                    }
                }
            });
        }
        if !any {
            return Err(Rcode::ServFail);
        }
        let mut t = self.table();
        t.by_name.insert(q.name.clone(), addr);
        t.by_addr.insert(addr, q.name.clone());
        Ok(addr)
    }
}

/// Closes `s` with a reset: a client of a fake address speaks no protocol
/// the router could put a refusal into, and a reset fails it at once
/// rather than as an empty reply.
pub(crate) fn reset(s: TcpStream) {
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: setsockopt on a descriptor `s` owns, with a stack value.
    unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&raw const linger).cast(),
            size_of::<libc::linger>() as libc::socklen_t,
        );
    }
    drop(s);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_distinct_and_inside_the_fake_range() {
        assert_eq!(address(1), Ipv4Addr::new(127, 77, 0, 1));
        assert_eq!(address(256), Ipv4Addr::new(127, 77, 1, 0));
        assert_eq!(address(ADDRESSES), Ipv4Addr::new(127, 77, 255, 254));
    }
}
