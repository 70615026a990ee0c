//! Resolution and the internal-address check. A host is decided by name;
//! the addresses it resolves to are checked afterwards, so a name a rule
//! allows cannot be pointed (by its owner's DNS, or a rebinding attack) at
//! the person's own machine or network. An internal address is reached only
//! where a rule names that address itself.
//!
//! The override map stands in for DNS in tests (`allowed.test` ->
//! `127.0.0.1`); the internal-address check applies to its answers too.

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, SocketAddr};

/// Loopback, private (RFC 1918, unique-local), link-local, unspecified,
/// shared (100.64/10, carrier-grade NAT), broadcast and multicast addresses,
/// and IPv4 written inside IPv6 (mapped or compatible) of any of these.
pub fn is_internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || o[0] == 0
                || (o[0] == 100 && (o[1] & 0xc0) == 64)
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4() {
                // ::ffff:a.b.c.d and the deprecated ::a.b.c.d; plain ::1
                // converts to 0.0.0.1, which is internal too.
                return is_internal(IpAddr::V4(v4));
            }
            let s = v6.segments();
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00
                || (s[0] & 0xffc0) == 0xfe80
        }
    }
}

/// Names to addresses, with an override map consulted first.
#[derive(Debug, Clone, Default)]
pub(crate) struct Resolver {
    pub(crate) overrides: HashMap<String, Vec<IpAddr>>,
}

impl Resolver {
    /// The addresses of `host:port`. An address literal resolves to itself.
    pub(crate) async fn resolve(&self, host: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
        let bare = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        if let Ok(ip) = bare.parse::<IpAddr>() {
            return Ok(vec![SocketAddr::new(ip, port)]);
        }
        let key = bare.trim_end_matches('.').to_ascii_lowercase();
        if let Some(ips) = self.overrides.get(&key) {
            return Ok(ips.iter().map(|ip| SocketAddr::new(*ip, port)).collect());
        }
        Ok(tokio::net::lookup_host((key.as_str(), port))
            .await?
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_addresses_are_recognised_and_public_ones_are_not() {
        for a in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "::",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
        ] {
            assert!(is_internal(a.parse().unwrap()), "{a} should be internal");
        }
        for a in ["192.0.2.1", "8.8.8.8", "2001:db8::1", "::ffff:8.8.8.8"] {
            assert!(!is_internal(a.parse().unwrap()), "{a} should be public");
        }
    }
}
