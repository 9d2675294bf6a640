//! Round-trip times remembered across connections (RFC 9002 §6.2.2: "Resumed connections over
//! the same network MAY use the previous connection's final smoothed RTT value as the resumed
//! connection's initial RTT").
//!
//! A client configuration with an [`RttStore`] ([`crate::ClientConfig::with_rtt_memory`])
//! records the smoothed RTT of each of a connection's paths, keyed by the path's local and
//! remote address (the "same network"), when its handshake is confirmed and when it drains.
//! A later connection from the same local address to the same server address starts with that
//! RTT instead of the configured initial RTT (333 ms by default), so a lost first Initial is
//! sent again after about three RTTs rather than a second.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Mutex;

use crate::time::Duration;

/// Where a client keeps round-trip times for later connections.
pub trait RttStore: std::fmt::Debug + Send + Sync {
    /// Remember `srtt` as the latest smoothed RTT from `local` to `remote`.
    fn remember(&self, local: SocketAddr, remote: SocketAddr, srtt: Duration);
    /// The RTT remembered from `local` to `remote`, if any.
    fn recall(&self, local: SocketAddr, remote: SocketAddr) -> Option<Duration>;
}

/// Address pairs an [`RttMemoryStore`] keeps; the least recently remembered goes first.
const RTT_STORE_CAPACITY: usize = 256;

/// A bounded in-memory [`RttStore`] of the most recently remembered address pairs.
#[derive(Debug, Default)]
pub struct RttMemoryStore {
    entries: Mutex<VecDeque<((SocketAddr, SocketAddr), Duration)>>,
}

impl RttStore for RttMemoryStore {
    fn remember(&self, local: SocketAddr, remote: SocketAddr, srtt: Duration) {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries.retain(|(key, _)| *key != (local, remote));
        if entries.len() >= RTT_STORE_CAPACITY {
            entries.pop_front();
        }
        entries.push_back(((local, remote), srtt));
    }

    fn recall(&self, local: SocketAddr, remote: SocketAddr) -> Option<Duration> {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries
            .iter()
            .rev()
            .find(|(key, _)| *key == (local, remote))
            .map(|&(_, rtt)| rtt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    #[test]
    fn remembers_the_latest_per_pair_and_forgets_the_oldest_pairs() {
        let store = RttMemoryStore::default();
        assert_eq!(store.recall(addr(1), addr(2)), None);
        store.remember(addr(1), addr(2), Duration::from_millis(40));
        store.remember(addr(1), addr(2), Duration::from_millis(30));
        store.remember(addr(3), addr(2), Duration::from_millis(90));
        assert_eq!(
            store.recall(addr(1), addr(2)),
            Some(Duration::from_millis(30))
        );
        assert_eq!(
            store.recall(addr(3), addr(2)),
            Some(Duration::from_millis(90))
        );
        assert_eq!(store.recall(addr(2), addr(1)), None);
        for port in 0..RTT_STORE_CAPACITY as u16 {
            store.remember(addr(1000 + port), addr(2), Duration::from_millis(5));
        }
        assert_eq!(
            store.recall(addr(1), addr(2)),
            None,
            "the oldest pair went first"
        );
        assert_eq!(store.entries.lock().unwrap().len(), RTT_STORE_CAPACITY);
    }
}
