//! Each address's share of the connection cap (issue 11, docs/decisions.md 206): without it one
//! client holding `--max-connections` half-sent requests takes every slot until the
//! header-read timeout frees them, and nobody else is served meanwhile.
//!
//! A connection is counted for its peer's address: an IPv4 address as is (an IPv4-mapped IPv6
//! address is the IPv4 address), an IPv6 address by its /64 prefix (one host commonly holds a
//! whole /64, so counting single IPv6 addresses would let it open any number). A trusted
//! proxy's connections are never counted: behind a proxy every client arrives from it.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};

use kd_core::config::TrustedProxies;

/// The key a connection is counted under: the IPv4 address, or the IPv6 /64 prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Key {
    V4(u32),
    V6Prefix(u64),
}

impl Key {
    fn of(address: IpAddr) -> Self {
        match address.to_canonical() {
            IpAddr::V4(v4) => Self::V4(u32::from(v4)),
            IpAddr::V6(v6) => {
                let [a, b, c, d, ..] = v6.segments();
                Self::V6Prefix(
                    (u64::from(a) << 48)
                        | (u64::from(b) << 32)
                        | (u64::from(c) << 16)
                        | u64::from(d),
                )
            }
        }
    }
}

/// The connections each address holds now, against the share each may hold.
#[derive(Debug, Clone)]
pub struct Shares {
    per_address: usize,
    exempt: TrustedProxies,
    held: Arc<Mutex<HashMap<Key, usize>>>,
}

/// One counted connection; dropping it gives the slot back.
#[derive(Debug)]
pub struct Share {
    key: Option<Key>,
    held: Arc<Mutex<HashMap<Key, usize>>>,
}

impl Shares {
    /// At most `per_address` connections at once from one address (or IPv6 /64); `exempt`'s
    /// addresses are not counted.
    pub fn new(per_address: usize, exempt: TrustedProxies) -> Self {
        Self {
            per_address,
            exempt,
            held: Arc::default(),
        }
    }

    /// A slot for a connection from `peer`, or `None` when its address holds its share
    /// already.
    pub fn take(&self, peer: IpAddr) -> Option<Share> {
        if self.exempt.contains(peer) {
            return Some(Share {
                key: None,
                held: Arc::clone(&self.held),
            });
        }
        let key = Key::of(peer);
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        let count = held.entry(key).or_insert(0);
        if *count >= self.per_address {
            return None;
        }
        *count += 1;
        Some(Share {
            key: Some(key),
            held: Arc::clone(&self.held),
        })
    }

    /// How many addresses hold a connection now (for tests and the log).
    pub fn addresses(&self) -> usize {
        self.held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

impl Drop for Share {
    fn drop(&mut self) {
        let Some(key) = self.key else { return };
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = held.get_mut(&key) {
            *count -= 1;
            if *count == 0 {
                held.remove(&key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn an_address_holds_at_most_its_share_and_a_closed_connection_gives_its_slot_back() {
        let shares = Shares::new(2, TrustedProxies::default());
        let first = shares.take(ip("192.0.2.1")).unwrap();
        let _second = shares.take(ip("192.0.2.1")).unwrap();
        assert!(shares.take(ip("192.0.2.1")).is_none());
        // The same address written as IPv4-mapped IPv6 is the same client.
        assert!(shares.take(ip("::ffff:192.0.2.1")).is_none());
        // Another address has its own share.
        assert!(shares.take(ip("192.0.2.2")).is_some());
        drop(first);
        assert!(shares.take(ip("192.0.2.1")).is_some());
    }

    #[test]
    fn ipv6_is_counted_by_its_64_prefix() {
        let shares = Shares::new(1, TrustedProxies::default());
        let _held = shares.take(ip("2001:db8:1:2::1")).unwrap();
        assert!(shares.take(ip("2001:db8:1:2:ffff::9")).is_none());
        assert!(shares.take(ip("2001:db8:1:3::1")).is_some());
    }

    #[test]
    fn a_trusted_proxy_is_never_counted_and_empty_addresses_are_forgotten() {
        let proxies = TrustedProxies::parse("10.0.0.0/8").unwrap();
        let shares = Shares::new(1, proxies);
        let held: Vec<Share> = (0..5)
            .map(|_| shares.take(ip("10.1.2.3")).unwrap())
            .collect();
        assert_eq!(shares.addresses(), 0);
        let one = shares.take(ip("192.0.2.7")).unwrap();
        assert_eq!(shares.addresses(), 1);
        drop(one);
        drop(held);
        assert_eq!(shares.addresses(), 0);
    }
}
